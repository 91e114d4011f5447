/**
 * Data types, schemas and rows, shared by the driver and the workers. Like the rest of the plan
 * vocabulary (expressions/types.ts, operators/types.ts) it is plain data: it crosses the
 * worker-thread boundary by structured clone, so closures never appear in a plan.
 */

/**
 * A type without fields, by its lower-case name: STRING, INT, LONG (BIGINT), DOUBLE, BOOLEAN,
 * TIMESTAMP, DATE, INTERVAL, and the type of a null literal.
 */
export type AtomicType = 'string' | 'int' | 'long' | 'double' | 'boolean' | 'timestamp' | 'date' | 'interval' | 'null';
/** `STRUCT<name: type, ...>` (Spark's StructType): its values are objects of its fields. */
export interface StructType {
  /** The fields, in order. */
  struct: Field[];
}
/** `ARRAY<element>`; its elements may be null, as Spark's containsNull defaults to. */
export interface ArrayType {
  /** The type of the elements. */
  array: DataType;
}
/** `MAP<key, value>`; keys are never null, values may be. */
export interface MapType {
  /** The types of the keys and of the values. */
  map: {
    /** The keys' type. */
    key: DataType;
    /** The values' type. */
    value: DataType;
  };
}
/** A column's type, as a schema object gives it; DDL text (`'STRUCT<a: INT>'`) parses into one. */
export type DataType = AtomicType | StructType | ArrayType | MapType;

/** A column of a schema (Spark's StructField; @sluice/driver exports it under that name). */
export interface Field {
  /** The column's name. */
  name: string;
  /** The column's type. */
  type: DataType;
  /** Whether the column may hold null. */
  nullable: boolean;
}

/**
 * A schema (Spark's StructType of a DataFrame): an ordered list of fields. Readers also take DDL
 * text (`'id STRING, v DOUBLE'`) or an object (`{ id: 'string', v: 'double' }`).
 */
export type Schema = Field[];

/**
 * A row: an object keyed by column name. Handed to JavaScript (collect, memoryTable,
 * foreachBatch, udf arguments, stateful processors) a STRING is a string, INT, LONG and DOUBLE a
 * number, BOOLEAN a boolean, TIMESTAMP a Date, DATE a Date at UTC midnight, ARRAY an array, MAP a
 * Map, STRUCT an object, and NULL null.
 *
 * Inside the engine a TIMESTAMP value is epoch milliseconds, a DATE days since the epoch and a MAP
 * an array of [key, value] entries instead: plain data, so that it crosses threads, msgpack and
 * JSON unchanged.
 */
export type Row = Record<string, unknown>;

/** The type of window(...) and session_window(...): Spark's struct<start: TIMESTAMP, end: TIMESTAMP>. */
export const WINDOW_TYPE: StructType = {
  struct: [
    { name: 'start', type: 'timestamp', nullable: true },
    { name: 'end', type: 'timestamp', nullable: true },
  ],
};
