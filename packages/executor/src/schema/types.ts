/**
 * Data types, schemas and rows, shared by the driver and the workers. Like the rest of the plan
 * vocabulary (expressions/types.ts, operators/types.ts) it is plain data: it crosses the
 * worker-thread boundary by structured clone, so closures never appear in a plan.
 */

export type AtomicType = 'string' | 'int' | 'long' | 'double' | 'boolean' | 'timestamp' | 'null';
export interface StructType {
  struct: Field[];
}
export type DataType = AtomicType | StructType;

export interface Field {
  name: string;
  type: DataType;
  nullable: boolean;
}

/** A schema is an ordered list of fields; rows are plain objects keyed by field name. */
export type Schema = Field[];

/**
 * Inside the engine a TIMESTAMP value is epoch milliseconds (a number); it becomes a Date only when
 * handed to user JavaScript (collect, memoryTable, foreachBatch, udf arguments).
 */
export type Row = Record<string, unknown>;
