/**
 * The closures that evaluate an operator or a table function over its operands' evaluators
 * (compileExpr.ts compiles the operands): coercion between types, arithmetic, comparisons,
 * three-valued logic, bitwise operators, date and time arithmetic, and the table functions.
 */
import { SluiceError } from '@sluice/state';
import type { BinaryOp } from './types.js';
import type { DataType, Row } from '../schema/types.js';
import type { Arithmetic, Comparison, DatetimeArithmetic } from './typeRules.js';
import { widerNumeric } from '../schema/widening.js';
import { timestampPlusInterval, type Interval } from '../schema/intervals.js';
import { MS_PER_DAY } from '../schema/timestamps.js';
import type { ScalarFunction } from './scalarFunctions.js';
import { createCast, isNumericType, sameType, typeName } from '../schema/values.js';
import type { Evaluator } from './compileExpr.js';

/** Brings values of type `from` to type `to`; widening between numbers costs nothing in JS. */
export function coerce(ev: Evaluator, from: DataType, to: DataType): Evaluator {
  if (sameType(from, to) || from === 'null') return ev;
  if (isNumericType(from) && isNumericType(to) && widerNumeric(from, to) === to) return ev;
  const cast = createCast(from, to);
  if (cast === undefined) throw new SluiceError('DATATYPE_MISMATCH', `cannot cast ${typeName(from)} to ${typeName(to)}`);
  return (row) => {
    const v = ev(row);
    return v == null ? null : cast(v);
  };
}

type Binary = (l: Evaluator, r: Evaluator) => Evaluator;
type N = number;

// Every operator has its own closure so that V8 sees one operation per call site; null checks use
// `== null` so that a stray undefined in a row reads as SQL null.
export const ARITHMETIC: Record<Arithmetic, Binary> = {
  plus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) + (b as N);
  },
  minus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) - (b as N);
  },
  multiply: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) * (b as N);
  },
  divide: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null || b === 0 ? null : (a as N) / (b as N);
  },
  // JS % takes the sign of the dividend, as Java's and so Spark's does.
  mod: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null || b === 0 ? null : (a as N) % (b as N);
  },
};

/** INT arithmetic wraps at 32 bits like Java's int (Spark non-ANSI). */
export const INT_ARITHMETIC: Partial<Record<Arithmetic, Binary>> = {
  plus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : ((a as N) + (b as N)) | 0;
  },
  minus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : ((a as N) - (b as N)) | 0;
  },
  multiply: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : Math.imul(a as N, b as N);
  },
};

export const COMPARISON: Record<Comparison, Binary> = {
  gt: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) > (b as N);
  },
  geq: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) >= (b as N);
  },
  lt: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) < (b as N);
  },
  leq: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) <= (b as N);
  },
  equalTo: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : a === b;
  },
  notEqual: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : a !== b;
  },
};

/** Spark orders NaN above every other double and makes NaN = NaN true. */
export const DOUBLE_COMPARISON: Record<Comparison, Binary> = {
  gt: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a > b || (Number.isNaN(a) && !Number.isNaN(b));
  },
  geq: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a >= b || Number.isNaN(a);
  },
  lt: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a < b || (Number.isNaN(b) && !Number.isNaN(a));
  },
  leq: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a <= b || Number.isNaN(b);
  },
  equalTo: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a === b || (Number.isNaN(a) && Number.isNaN(b));
  },
  notEqual: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a !== b && (!Number.isNaN(a) || !Number.isNaN(b));
  },
};

export function structEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const x = a as Row;
  const y = b as Row;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => structEquals(x[k] ?? null, y[k] ?? null));
}

/** Three-valued logic: false AND null is false, true OR null is true, otherwise null wins. */
export const LOGIC: Record<'and' | 'or', Binary> = {
  and: (l, r) => (row) => {
    const a = l(row);
    if (a === false) return false;
    const b = r(row);
    if (b === false) return false;
    return a == null || b == null ? null : true;
  },
  or: (l, r) => (row) => {
    const a = l(row);
    if (a === true) return true;
    const b = r(row);
    if (b === true) return true;
    return a == null || b == null ? null : false;
  },
};

/**
 * a & b, a | b, a ^ b: on INT as 32-bit integers; on BIGINT as 64-bit two's complement, whose
 * result of two values within ±2^53 is within that range too (their top bits all repeat the sign).
 */
export function bitwise(fn: BinaryOp, int: boolean, l: Evaluator, r: Evaluator): Evaluator {
  const op32 = fn === 'bitwiseAnd' ? (a: N, b: N) => a & b : fn === 'bitwiseOr' ? (a: N, b: N) => a | b : (a: N, b: N) => a ^ b;
  const op64 = fn === 'bitwiseAnd' ? (a: bigint, b: bigint) => a & b : fn === 'bitwiseOr' ? (a: bigint, b: bigint) => a | b : (a: bigint, b: bigint) => a ^ b;
  return (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    if (b == null) return null;
    return int ? op32(a as N, b as N) : Number(op64(BigInt(a as N), BigInt(b as N)));
  };
}

export function compileDatetimeArithmetic(dt: DatetimeArithmetic, left: Evaluator, right: Evaluator): Evaluator {
  const [time, by] = dt.swapped ? [right, left] : [left, right];
  const { sign } = dt;
  const add: (t: N, x: unknown) => N =
    dt.by === 'days'
      ? (t, n) => t + sign * (n as N)
      : dt.result === 'date'
        ? (t, iv) => Math.floor(timestampPlusInterval(t * MS_PER_DAY, iv as Interval, sign) / MS_PER_DAY)
        : (t, iv) => timestampPlusInterval(t, iv as Interval, sign);
  return (row) => {
    const t = time(row);
    if (t == null) return null;
    const x = by(row);
    return x == null ? null : add(t as N, x);
  };
}

/** A table function over its arguments' values: null in, null out, unless it takes nulls itself. */
export function compileScalar(f: ScalarFunction, args: Evaluator[], argTypes: DataType[], constants: unknown[]): Evaluator {
  const [a0, a1] = args;
  const value = f.bind?.(argTypes, constants) ?? (f.value as (...xs: unknown[]) => unknown);
  if (f.nulls) return (row) => value(...args.map((a) => a(row)));
  if (args.length === 0) return () => value();
  if (args.length === 1)
    return (row) => {
      const x = a0!(row);
      return x == null ? null : value(x);
    };
  if (args.length === 2)
    return (row) => {
      const x = a0!(row);
      if (x == null) return null;
      const y = a1!(row);
      return y == null ? null : value(x, y);
    };
  return (row) => {
    const xs = args.map((a) => a(row));
    return xs.includes(null) ? null : value(...xs);
  };
}
