/**
 * The math functions: Spark's names and argument orders; text arguments are cast to DOUBLE.
 */
import { Column, lit, toColumn } from '../Column.js';
import { call, int, math, unaryMath } from './args.js';

/** The absolute value, of the argument's type. */
export const abs = unaryMath('abs');
/** Rounded to `scale` decimal places, half away from zero (HALF_UP): round(2.5) is 3. */
export const round = (c: Column | string, scale = 0): Column => call('round', [toColumn(c).expr, int(scale, 'round', 'scale')]);
/** Rounded to `scale` decimal places, half to even (HALF_EVEN): bround(2.5) is 2. */
export const bround = (c: Column | string, scale = 0): Column => call('bround', [toColumn(c).expr, int(scale, 'bround', 'scale')]);
/** The largest integer not above the value, a LONG. */
export const floor = unaryMath('floor');
/** The smallest integer not below the value, a LONG. */
export const ceil = unaryMath('ceil');
/** The square root, a DOUBLE (null below zero). */
export const sqrt = unaryMath('sqrt');
/** The cube root, a DOUBLE. */
export const cbrt = unaryMath('cbrt');
/** e raised to the value, a DOUBLE. */
export const exp = unaryMath('exp');
/** exp(x) - 1, exact for small x. */
export const expm1 = unaryMath('expm1');
/** The natural logarithm (null at or below zero); log(base, c) in that base. */
export function log(baseOrCol: number | Column | string, c?: Column | string): Column {
  if (c === undefined) return math('log', [baseOrCol as Column | string]);
  const base = typeof baseOrCol === 'number' ? new Column({ op: 'lit', value: baseOrCol, type: 'double' }) : toColumn(baseOrCol);
  return math('log', [base, c]);
}
/** The base-10 logarithm (null at or below zero). */
export const log10 = unaryMath('log10');
/** The base-2 logarithm (null at or below zero). */
export const log2 = unaryMath('log2');
/** ln(1 + x), exact for small x. */
export const log1p = unaryMath('log1p');
/** `l` raised to the power `r`, a DOUBLE. */
export const pow = (l: Column | string, r: Column | string | number): Column => call('pow', [toColumn(l).expr, lit(r).expr]);
/** The positive remainder: pmod(-10, 3) is 2. */
export const pmod = (dividend: Column | string, divisor: Column | string | number): Column => call('pmod', [toColumn(dividend).expr, lit(divisor).expr]);
/** The largest non-null argument (NaN above every number). */
export const greatest = (...cols: Array<Column | string>): Column => math('greatest', cols);
/** The smallest non-null argument. */
export const least = (...cols: Array<Column | string>): Column => math('least', cols);
/** -1.0, 0.0 or 1.0 by the value's sign. */
export const signum = unaryMath('signum');
/** Radians converted to degrees. */
export const degrees = unaryMath('degrees');
/** Degrees converted to radians. */
export const radians = unaryMath('radians');
/** The sine of an angle in radians. */
export const sin = unaryMath('sin');
/** The cosine of an angle in radians. */
export const cos = unaryMath('cos');
/** The tangent of an angle in radians. */
export const tan = unaryMath('tan');
/** The cotangent of an angle in radians. */
export const cot = unaryMath('cot');
/** The arc sine, in radians. */
export const asin = unaryMath('asin');
/** The arc cosine, in radians. */
export const acos = unaryMath('acos');
/** The arc tangent, in radians. */
export const atan = unaryMath('atan');
/** The angle in radians of the point (x, y): atan2(y, x). */
export const atan2 = (y: Column | string, x: Column | string): Column => math('atan2', [y, x]);
/** The hyperbolic sine. */
export const sinh = unaryMath('sinh');
/** The hyperbolic cosine. */
export const cosh = unaryMath('cosh');
/** The hyperbolic tangent. */
export const tanh = unaryMath('tanh');
/** sqrt(a² + b²) without overflow. */
export const hypot = (a: Column | string, b: Column | string): Column => math('hypot', [a, b]);
/** Whether the value is NaN (null is not). */
export const isnan = unaryMath('isnan');
/** `a`, or `b` where `a` is NaN. */
export const nanvl = (a: Column | string, b: Column | string): Column => math('nanvl', [a, b]);
