/** The serializable expression tree of columns (Spark's Column): plain data, no closures. */
import type { DataType } from '../schema/types.js';
import type { ScalarFunctionName } from './scalarFunctions.js';

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
  | 'or'
  | 'bitwiseAnd'
  | 'bitwiseOr'
  | 'bitwiseXor';

export type UnaryOp = 'not' | 'isNull' | 'isNotNull' | 'negate' | 'bitwiseNot';

export type FunctionName =
  | 'upper'
  | 'lower'
  | 'length'
  | 'concat'
  | 'substring'
  | 'trim'
  | 'coalesce'
  /** named_struct('a', x, 'b', y): a struct of the named values (struct(x, y) names them by column). */
  | 'named_struct'
  | HigherOrderName
  | GeneratorName
  | ScalarFunctionName;

/**
 * Table-generating functions: each turns one row into a row per element (Spark's Generate). They
 * are only valid as a select item, which the driver turns into a `generate` operator.
 */
export type GeneratorName = 'explode' | 'explode_outer' | 'posexplode' | 'posexplode_outer' | 'inline' | 'inline_outer';

/**
 * Spark's higher-order functions: each takes a lambda (`x -> x + 1`, `(acc, x) -> acc + x`) that
 * it applies to elements, whose parameters are columns of the lambda's body.
 */
export type HigherOrderName = 'transform' | 'filter' | 'exists' | 'forall' | 'aggregate' | 'zip_with' | 'map_filter' | 'transform_keys' | 'transform_values';

export const HIGHER_ORDER: readonly HigherOrderName[] = [
  'transform',
  'filter',
  'exists',
  'forall',
  'aggregate',
  'zip_with',
  'map_filter',
  'transform_keys',
  'transform_values',
];

export const GENERATORS: readonly GeneratorName[] = ['explode', 'explode_outer', 'posexplode', 'posexplode_outer', 'inline', 'inline_outer'];

export type Expr =
  | { op: 'col'; name: string }
  | { op: 'lit'; value: string | number | boolean | null; type: DataType }
  /** `names`: a generator's several column names (posexplode(x).alias('p', 'c')); `name` is the first. */
  | { op: 'alias'; expr: Expr; name: string; names?: string[] }
  | { op: 'binary'; fn: BinaryOp; left: Expr; right: Expr }
  | { op: 'unary'; fn: UnaryOp; expr: Expr }
  | { op: 'cast'; expr: Expr; to: DataType }
  | { op: 'when'; branches: Array<{ cond: Expr; value: Expr }>; otherwise?: Expr }
  | { op: 'call'; fn: FunctionName; args: Expr[] }
  | { op: 'udf'; moduleUrl: string; exportName: string; returnType: DataType; args: Expr[] }
  /** A lambda, only as an argument of a higher-order function: its body reads its parameters as columns. */
  | { op: 'lambda'; params: string[]; body: Expr }
  /**
   * window(timeColumn, size[, slide]): struct<start: TIMESTAMP, end: TIMESTAMP>. A tumbling window
   * (slide = size) evaluates anywhere; a sliding one is a grouping key that expands each row into
   * every window containing it.
   */
  | { op: 'window'; expr: Expr; sizeMs: number; slideMs: number; startMs: number };
