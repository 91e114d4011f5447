/**
 * Data types, schemas and rows, shared by the driver and the workers. Like the rest of the plan
 * vocabulary (expressions/types.ts, operators/types.ts) it is plain data: it crosses the
 * worker-thread boundary by structured clone, so closures never appear in a plan.
 */

export type AtomicType = 'string' | 'int' | 'long' | 'double' | 'boolean' | 'timestamp' | 'date' | 'interval' | 'null';
export interface StructType {
  struct: Field[];
}
/** ARRAY<element>; its elements may be null, as Spark's containsNull defaults to. */
export interface ArrayType {
  array: DataType;
}
/** MAP<key, value>; keys are never null, values may be. */
export interface MapType {
  map: { key: DataType; value: DataType };
}
export type DataType = AtomicType | StructType | ArrayType | MapType;

export interface Field {
  name: string;
  type: DataType;
  nullable: boolean;
}

/** A schema is an ordered list of fields; rows are plain objects keyed by field name. */
export type Schema = Field[];

/**
 * Inside the engine a TIMESTAMP value is epoch milliseconds (a number), a DATE days since the epoch
 * (an integer), an ARRAY a JavaScript array and a MAP an array of [key, value] entries (plain data,
 * so that it crosses threads, msgpack and JSON unchanged). They become a Date, a Date at UTC
 * midnight, an array and a Map only when handed to user JavaScript (collect, memoryTable,
 * foreachBatch, udf arguments).
 */
export type Row = Record<string, unknown>;

/** The type of window(...) and session_window(...): Spark's struct<start: TIMESTAMP, end: TIMESTAMP>. */
export const WINDOW_TYPE: StructType = {
  struct: [
    { name: 'start', type: 'timestamp', nullable: true },
    { name: 'end', type: 'timestamp', nullable: true },
  ],
};
