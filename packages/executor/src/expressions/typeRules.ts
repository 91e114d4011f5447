/**
 * The rules of expression typing that need no sub-expression typed (exprTypes.ts applies them):
 * the type-mismatch error, the common type of branches, the operand types of arithmetic,
 * bitwise and datetime operators, the argument counts of functions, constant arguments, and the
 * scope a lambda's body reads.
 */
import { SluiceError } from '@sluice/state';
import type { BinaryOp, Expr, FunctionName } from './types.js';
import type { DataType, Schema } from '../schema/types.js';
import { exprSql } from './exprNames.js';
import { isScalarFunction, SCALAR_FUNCTIONS, type ScalarFunctionName } from './scalarFunctions.js';
import { isNumericType, toInternal, typeName } from '../schema/values.js';
import { widerType } from '../schema/widening.js';

export function mismatch(expr: Expr, why: string, column?: string): SluiceError {
  return new SluiceError('DATATYPE_MISMATCH', `cannot resolve '${exprSql(expr)}' due to data type mismatch: ${why}`, {
    ...(column !== undefined && { column }),
  });
}

/**
 * The type that branches of `when` and arguments of `coalesce` are brought to (Spark's
 * findWiderCommonType): numbers widen, text absorbs other atomic types, null gives way.
 */
export function commonType(types: DataType[], expr: Expr): DataType {
  const t = widerType(types);
  if (t === undefined) throw mismatch(expr, `no common type of ${types.map(typeName).join(', ')}`);
  return t;
}

export type Arithmetic = 'plus' | 'minus' | 'multiply' | 'divide' | 'mod';
export type Comparison = 'gt' | 'geq' | 'lt' | 'leq' | 'equalTo' | 'notEqual';
export const ARITHMETIC_OPS = new Set<BinaryOp>(['plus', 'minus', 'multiply', 'divide', 'mod']);
export const BITWISE_OPS = new Set<BinaryOp>(['bitwiseAnd', 'bitwiseOr', 'bitwiseXor']);
export const isIntegral = (t: DataType): boolean => t === 'int' || t === 'long' || t === 'null';

/** Text in arithmetic is read as DOUBLE, as Spark's non-ANSI implicit cast does. */
export function arithmeticOperand(t: DataType): DataType | undefined {
  return t === 'string' ? 'double' : isNumericType(t) || t === 'null' ? t : undefined;
}

/**
 * Spark's datetime arithmetic: TIMESTAMP or DATE ± INTERVAL (a DATE stays a DATE), INTERVAL +
 * TIMESTAMP or DATE, and DATE ± an integer number of days (date_add and date_sub).
 */
export interface DatetimeArithmetic {
  /** What is added: an interval, or a number of days. */
  by: 'interval' | 'days';
  sign: 1 | -1;
  /** The datetime is the right operand (interval + ts). */
  swapped: boolean;
  result: 'timestamp' | 'date';
}

export function datetimeArithmetic(fn: BinaryOp, lt: DataType, rt: DataType): DatetimeArithmetic | undefined {
  if (fn !== 'plus' && fn !== 'minus') return undefined;
  const sign = fn === 'plus' ? 1 : -1;
  const isTime = (t: DataType): t is 'timestamp' | 'date' => t === 'timestamp' || t === 'date';
  const isDays = (t: DataType): boolean => t === 'int' || t === 'long';
  if (isTime(lt) && rt === 'interval') return { by: 'interval', sign, swapped: false, result: lt };
  if (lt === 'interval' && isTime(rt) && sign === 1) return { by: 'interval', sign, swapped: true, result: rt };
  if (lt === 'date' && isDays(rt)) return { by: 'days', sign, swapped: false, result: 'date' };
  if (isDays(lt) && rt === 'date' && sign === 1) return { by: 'days', sign, swapped: true, result: 'date' };
  return undefined;
}

/** Arguments of text functions are cast to STRING (upper(42) is '42'). */
export const STRING_FUNCTIONS = new Set<FunctionName>(['upper', 'lower', 'trim', 'length', 'concat']);
const ARITY: Record<Exclude<FunctionName, ScalarFunctionName>, [min: number, max: number]> = {
  upper: [1, 1],
  lower: [1, 1],
  trim: [1, 1],
  length: [1, 1],
  concat: [0, Infinity],
  substring: [2, 3],
  coalesce: [1, Infinity],
  named_struct: [2, Infinity],
  explode: [1, 1],
  explode_outer: [1, 1],
  posexplode: [1, 1],
  posexplode_outer: [1, 1],
  inline: [1, 1],
  inline_outer: [1, 1],
  transform: [2, 2],
  filter: [2, 2],
  exists: [2, 2],
  forall: [2, 2],
  aggregate: [3, 4],
  zip_with: [3, 3],
  map_filter: [2, 2],
  transform_keys: [2, 2],
  transform_values: [2, 2],
};

/** The argument counts function `fn` takes: [min, max] (max Infinity: any number). */
export function functionArity(fn: FunctionName): [min: number, max: number] {
  return isScalarFunction(fn) ? SCALAR_FUNCTIONS[fn].arity : ARITY[fn];
}

/**
 * The value of a constant argument: a literal (in engine form), or map(...) of literals as its
 * entries (from_json's options); undefined for anything else.
 */
export function constantOf(e: Expr): unknown {
  if (e.op === 'lit') return toInternal(e.value, e.type);
  if (e.op === 'call' && e.fn === 'map' && e.args.every((a) => a.op === 'lit')) {
    const xs = e.args.map(constantOf);
    return xs.flatMap((x, i) => (i % 2 === 0 ? [[x, xs[i + 1]]] : []));
  }
  return undefined;
}

/** The schema a lambda's body reads: the row's columns, then its parameters (which hide columns of the same name). */
export function lambdaScope(schema: Schema, params: readonly string[], types: readonly DataType[]): Schema {
  const lower = new Set(params.map((p) => p.toLowerCase()));
  return [...schema.filter((f) => !lower.has(f.name.toLowerCase())), ...params.map((name, i) => ({ name, type: types[i] ?? 'null', nullable: true }))];
}
