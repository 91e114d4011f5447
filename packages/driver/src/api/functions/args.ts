/**
 * What the functions of api/functions/ share: a call of a function of the executor's tables, its
 * arguments (an INT literal, a text literal, columns by name, a value), and the makers of a math
 * function and of a string function of one column.
 */
import type { Expr, FunctionName, MathFunctionName, StringFunctionName } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, lit, toColumn, type ColumnOrLiteral } from '../Column.js';

export function call(fn: FunctionName, args: Expr[]): Column {
  return new Column({ op: 'call', fn, args });
}

/** An INT literal argument of `fn`, which must be an integer (INVALID_EXPRESSION naming `what`). */
export function int(v: number, fn: string, what: string): Expr {
  if (!Number.isInteger(v)) throw new SluiceError('INVALID_EXPRESSION', `${fn}: ${what} must be an integer, got ${String(v)}`);
  return { op: 'lit', value: v, type: 'int' };
}

export const text = (v: string | Column): Expr => (v instanceof Column ? v.expr : { op: 'lit', value: v, type: 'string' });
export const cols = (cs: Array<Column | string>): Expr[] => cs.map((c) => toColumn(c).expr);
/** A value argument: a Column, or a literal (not a column name, as in Spark's array_contains). */
export const value = (v: ColumnOrLiteral): Expr => lit(v).expr;

export const math = (fn: MathFunctionName, cols: Array<Column | string>): Column =>
  call(
    fn,
    cols.map((c) => toColumn(c).expr),
  );
export const unaryMath =
  (fn: MathFunctionName) =>
  (c: Column | string): Column =>
    math(fn, [c]);

export const one =
  (fn: StringFunctionName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);
