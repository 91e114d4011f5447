/**
 * Spark's math functions (non-ANSI mode): each one's arities, how its arguments are typed (text
 * is cast to DOUBLE, as Spark's implicit casts do), its result type and its value. A null argument
 * gives null unless the function says otherwise (`greatest` and `least` skip nulls, `isnan` of
 * null is false). Logarithms of values at or below zero are null, as in Spark.
 */
import type { DataType } from '../schema/types.js';
import { SluiceError } from '@sluice/state';
import { isNumericType } from '../schema/values.js';

export type MathFunctionName =
  | 'abs'
  | 'round'
  | 'bround'
  | 'floor'
  | 'ceil'
  | 'sqrt'
  | 'cbrt'
  | 'exp'
  | 'expm1'
  | 'ln'
  | 'log'
  | 'log10'
  | 'log2'
  | 'log1p'
  | 'pow'
  | 'pmod'
  | 'greatest'
  | 'least'
  | 'signum'
  | 'degrees'
  | 'radians'
  | 'sin'
  | 'cos'
  | 'tan'
  | 'cot'
  | 'asin'
  | 'acos'
  | 'atan'
  | 'atan2'
  | 'sinh'
  | 'cosh'
  | 'tanh'
  | 'hypot'
  | 'isnan'
  | 'nanvl'
  | 'pi'
  | 'e'
  | 'shiftleft'
  | 'shiftright'
  | 'shiftrightunsigned'
  | 'bit_count'
  | 'bit_get';

type N = number;

/** One scalar function of the tables (math here, strings in stringFunctions.ts). */
export interface ScalarFunction {
  arity: [min: number, max: number];
  /**
   * The types the arguments are cast to and the result's, from the arguments' types (and the
   * values of the constant ones, undefined for the others: from_json's schema); a string is why
   * they do not fit.
   */
  types(args: DataType[], constants: unknown[]): { args: DataType[]; result: DataType } | string;
  /** The value from non-null arguments (every argument, nulls too, when `nulls` is set). */
  value?(...args: unknown[]): unknown;
  /** Instead of `value`: the value function for arguments of these (cast) types. */
  bind?(args: DataType[], constants: unknown[]): (...args: unknown[]) => unknown;
  /** The function takes null arguments itself (else any null argument gives null). */
  nulls?: boolean;
}

export const numberLike = (t: DataType): boolean => isNumericType(t) || t === 'string' || t === 'null';

/** Every argument as DOUBLE, a DOUBLE result (or `result`). */
function doubles(result: DataType = 'double') {
  return (args: DataType[]) => (args.every(numberLike) ? { args: args.map((): DataType => 'double'), result } : `needs numbers, not ${args.join(', ')}`);
}

/** The arguments' common numeric type (text as DOUBLE), which is also the result's. */
function common(args: DataType[]): { args: DataType[]; result: DataType } | string {
  if (!args.every(numberLike)) return `needs numbers, not ${args.join(', ')}`;
  const rank = (t: DataType): number => (t === 'int' ? 1 : t === 'long' ? 2 : t === 'null' ? 0 : 3);
  const top = args.reduce((a, t) => Math.max(a, rank(t)), 1);
  const t: DataType = top === 1 ? 'int' : top === 2 ? 'long' : 'double';
  return { args: args.map(() => t), result: t };
}

/** round and bround: the value's own type (text as DOUBLE), an INT scale. */
function scaled(args: DataType[]): { args: DataType[]; result: DataType } | string {
  const [x = 'null', d] = args;
  if (!numberLike(x) || (d !== undefined && !numberLike(d))) return `needs a number and an integer scale, not ${args.join(', ')}`;
  const t: DataType = x === 'int' || x === 'long' ? x : 'double';
  return { args: d === undefined ? [t] : [t, 'int'], result: t };
}

/** Rounds half away from zero (HALF_UP) or half to even (HALF_EVEN) at `d` decimal places, on the decimal digits as printed. */
function roundAt(x: N, d: N, halfEven: boolean): N {
  if (!Number.isFinite(x)) return x;
  const printed = String(Math.abs(x));
  const shifted = printed.includes('e') ? Math.abs(x) * 10 ** d : Number(`${printed}e${d}`);
  if (!Number.isFinite(shifted)) return x;
  let r = Math.floor(shifted);
  const frac = shifted - r;
  if (frac > 0.5 || (frac === 0.5 && (!halfEven || r % 2 === 1))) r += 1;
  const back = Number(`${r}e${-d}`);
  return Math.sign(x) * (Number.isNaN(back) ? r / 10 ** d : back);
}

const logOf = (f: (x: N) => N) => (x: unknown) => ((x as N) <= 0 ? null : f(x as N));
const unaryDouble = (f: (x: N) => N): ScalarFunction => ({ arity: [1, 1], types: doubles(), value: (x) => f(x as N) });

export const MATH_FUNCTIONS: Record<MathFunctionName, ScalarFunction> = {
  abs: { arity: [1, 1], types: (a) => common(a), value: (x) => Math.abs(x as N) },
  round: { arity: [1, 2], types: scaled, value: (x, d = 0) => roundAt(x as N, d as N, false) },
  bround: { arity: [1, 2], types: scaled, value: (x, d = 0) => roundAt(x as N, d as N, true) },
  // + 0: a LONG has no -0 (ceil(-0.1) is 0).
  floor: { arity: [1, 1], types: doubles('long'), value: (x) => Math.floor(x as N) + 0 },
  ceil: { arity: [1, 1], types: doubles('long'), value: (x) => Math.ceil(x as N) + 0 },
  sqrt: unaryDouble(Math.sqrt),
  cbrt: unaryDouble(Math.cbrt),
  exp: unaryDouble(Math.exp),
  expm1: unaryDouble(Math.expm1),
  ln: { arity: [1, 1], types: doubles(), value: logOf(Math.log) },
  /** log(x) is ln(x); log(base, x) is ln(x) / ln(base). */
  log: {
    arity: [1, 2],
    types: doubles(),
    value: (a, b) => (b === undefined ? logOf(Math.log)(a) : (a as N) <= 0 || (b as N) <= 0 ? null : Math.log(b as N) / Math.log(a as N)),
  },
  log10: { arity: [1, 1], types: doubles(), value: logOf(Math.log10) },
  log2: { arity: [1, 1], types: doubles(), value: logOf(Math.log2) },
  log1p: { arity: [1, 1], types: doubles(), value: (x) => ((x as N) <= -1 ? null : Math.log1p(x as N)) },
  pow: { arity: [2, 2], types: doubles(), value: (a, b) => (a as N) ** (b as N) },
  /** The positive remainder: pmod(-10, 3) is 2. Null for a zero divisor. */
  pmod: {
    arity: [2, 2],
    types: common,
    value: (a, b) => {
      if (b === 0) return null;
      const r = (a as N) % (b as N);
      return r < 0 ? (r + (b as N)) % (b as N) : r;
    },
  },
  greatest: { arity: [2, Infinity], types: common, nulls: true, value: (...xs) => pick(xs, above) },
  least: { arity: [2, Infinity], types: common, nulls: true, value: (...xs) => pick(xs, (a, b) => above(b, a)) },
  signum: unaryDouble(Math.sign),
  degrees: unaryDouble((x) => (x * 180) / Math.PI),
  radians: unaryDouble((x) => (x * Math.PI) / 180),
  sin: unaryDouble(Math.sin),
  cos: unaryDouble(Math.cos),
  tan: unaryDouble(Math.tan),
  cot: unaryDouble((x) => 1 / Math.tan(x)),
  asin: unaryDouble(Math.asin),
  acos: unaryDouble(Math.acos),
  atan: unaryDouble(Math.atan),
  atan2: { arity: [2, 2], types: doubles(), value: (y, x) => Math.atan2(y as N, x as N) },
  sinh: unaryDouble(Math.sinh),
  cosh: unaryDouble(Math.cosh),
  tanh: unaryDouble(Math.tanh),
  hypot: { arity: [2, 2], types: doubles(), value: (a, b) => Math.hypot(a as N, b as N) },
  isnan: { arity: [1, 1], types: doubles('boolean'), nulls: true, value: (x) => typeof x === 'number' && Number.isNaN(x) },
  /** nanvl(a, b): b when a is NaN, else a. */
  nanvl: { arity: [2, 2], types: doubles(), value: (a, b) => (Number.isNaN(a as N) ? b : a) },
  /** shiftleft(x, n) and the right shifts: Java's on INT (32 bits) and BIGINT (64 bits; null past ±2^53). */
  shiftleft: { arity: [2, 2], types: shiftTypes, bind: ([t]) => shift(t === 'int', (a, n) => a << n) },
  shiftright: { arity: [2, 2], types: shiftTypes, bind: ([t]) => shift(t === 'int', (a, n) => a >> n) },
  shiftrightunsigned: { arity: [2, 2], types: shiftTypes, bind: ([t]) => shift(t === 'int', (a, n, bits) => BigInt.asUintN(bits, a) >> n) },
  /** bit_count(x): the set bits of its two's complement (32 for INT, 64 for BIGINT). */
  bit_count: {
    arity: [1, 1],
    types: (args) => (integral(args[0] ?? 'null') ? { args: [args[0] === 'int' ? 'int' : 'long'], result: 'int' } : `needs an integer, not ${args.join(', ')}`),
    bind:
      ([t]) =>
      (x) =>
        [...BigInt.asUintN(t === 'int' ? 32 : 64, BigInt(x as N)).toString(2)].filter((c) => c === '1').length,
  },
  /** bit_get(x, pos): bit pos (0 the lowest) of x's two's complement. */
  bit_get: {
    arity: [2, 2],
    types: (args) =>
      integral(args[0] ?? 'null') && integral(args[1] ?? 'null')
        ? { args: [args[0] === 'int' ? 'int' : 'long', 'int'], result: 'int' }
        : `needs integers, not ${args.join(', ')}`,
    bind:
      ([t]) =>
      (x, pos) => {
        const bits = t === 'int' ? 32 : 64;
        if ((pos as N) < 0 || (pos as N) >= bits)
          throw new SluiceError(
            'INVALID_EXPRESSION',
            `[INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE] bit_get: the position ${String(pos)} must be in [0, ${bits})`,
          );
        return Number((BigInt.asUintN(bits, BigInt(x as N)) >> BigInt(pos as N)) & 1n);
      },
  },
  pi: { arity: [0, 0], types: doubles(), value: () => Math.PI },
  e: { arity: [0, 0], types: doubles(), value: () => Math.E },
};

const integral = (t: DataType): boolean => t === 'int' || t === 'long' || t === 'null';

/** A shift's arguments: the value as INT or BIGINT (its own type), the distance as INT. */
function shiftTypes(args: DataType[]): { args: DataType[]; result: DataType } | string {
  const [x = 'null', n = 'null'] = args;
  if (!integral(x) || !integral(n)) return `needs integers, not ${args.join(', ')}`;
  const t: DataType = x === 'int' ? 'int' : 'long';
  return { args: [t, 'int'], result: t };
}

/** A shift on 32 or 64 bits, its distance taken modulo the width, as Java's; a BIGINT result past ±2^53 is null (Sluice keeps no wider LONG). */
function shift(int: boolean, f: (a: bigint, n: bigint, bits: number) => bigint): (a: unknown, n: unknown) => unknown {
  const bits = int ? 32 : 64;
  return (a, n) => {
    const r = BigInt.asIntN(bits, f(BigInt.asIntN(bits, BigInt(a as N)), BigInt((n as N) & (bits - 1)), bits));
    return r >= BigInt(Number.MIN_SAFE_INTEGER) && r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : null;
  };
}

/** a > b, with NaN above every number (Spark's ordering of doubles). */
const above = (a: N, b: N): boolean => (Number.isNaN(a) ? !Number.isNaN(b) : !Number.isNaN(b) && a > b);

/** The non-null value that `better` keeps over every other; null if all are null. */
function pick(xs: unknown[], better: (a: N, b: N) => boolean): unknown {
  let best: N | null = null;
  for (const x of xs) if (x != null && (best === null || better(x as N, best))) best = x as N;
  return best;
}
