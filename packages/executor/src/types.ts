/**
 * The plan vocabulary shared by the driver and the workers. Everything here is plain data: it
 * crosses the worker-thread boundary by structured clone, so closures never appear in a plan.
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

export type BinaryOp =
  | 'plus'
  | 'minus'
  | 'multiply'
  | 'divide'
  | 'mod'
  | 'gt'
  | 'geq'
  | 'lt'
  | 'leq'
  | 'equalTo'
  | 'notEqual'
  | 'and'
  | 'or';

export type UnaryOp = 'not' | 'isNull' | 'isNotNull' | 'negate';

export type FunctionName =
  | 'upper'
  | 'lower'
  | 'length'
  | 'concat'
  | 'substring'
  | 'trim'
  | 'coalesce';

export type Expr =
  | { op: 'col'; name: string }
  | { op: 'lit'; value: string | number | boolean | null; type: DataType }
  | { op: 'alias'; expr: Expr; name: string }
  | { op: 'binary'; fn: BinaryOp; left: Expr; right: Expr }
  | { op: 'unary'; fn: UnaryOp; expr: Expr }
  | { op: 'cast'; expr: Expr; to: DataType }
  | { op: 'when'; branches: Array<{ cond: Expr; value: Expr }>; otherwise?: Expr }
  | { op: 'call'; fn: FunctionName; args: Expr[] }
  | { op: 'udf'; moduleUrl: string; exportName: string; returnType: DataType; args: Expr[] }
  /**
   * window(timeColumn, size[, slide]): struct<start: TIMESTAMP, end: TIMESTAMP>. A tumbling window
   * (slide = size) evaluates anywhere; a sliding one is a grouping key that expands each row into
   * every window containing it.
   */
  | { op: 'window'; expr: Expr; sizeMs: number; slideMs: number; startMs: number };

/** Stateless operators, applied in order to every row of a task. */
export type Op =
  | { kind: 'filter'; cond: Expr }
  /** Each expression's output name is its alias, else its column name, else its printed form. */
  | { kind: 'project'; exprs: Expr[] }
  /** withWatermark: rows pass unchanged; the task reports min/max/avg of `column` here. */
  | { kind: 'watermark'; column: string; delayMs: number };

export type AggFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

/** One aggregate of groupBy(...).agg(...); `arg` null is count(*). */
export interface AggSpec {
  fn: AggFn;
  arg: Expr | null;
  name: string;
}

/** The stateful operator of a query (one per query). */
export type StatefulOp =
  | {
      kind: 'aggregate';
      /** Grouping expressions, named by `keyNames`; a window expression among them is a struct key. */
      keys: Expr[];
      keyNames: string[];
      aggs: AggSpec[];
      /** Index in `keys` of the event-time key (a window, or the watermarked column), if any. */
      eventTimeKey: number | null;
    }
  | {
      kind: 'dropDuplicates';
      columns: string[];
      /** The watermarked column when it is among `columns`: late rows drop, state expires. */
      eventTimeColumn: string | null;
    }
  | {
      kind: 'dropDuplicatesWithinWatermark';
      columns: string[];
      eventTimeColumn: string;
      delayMs: number;
    };

/** A stateful query: stateless operators before the shuffle, the stateful operator, then more. */
export interface StatefulPlan {
  pre: Op[];
  op: StatefulOp;
  post: Op[];
}
