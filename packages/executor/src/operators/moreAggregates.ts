/**
 * The aggregates whose buffers are values other than a number (aggregates.ts has count, sum, avg,
 * min and max): each buffer is `{ g: value }`, plain data that the state codec stores as msgpack
 * (aggBufferCodec.ts, tag 6) and the reduce side keeps in an object slot (aggCells.ts).
 *
 *   first(x), last(x)          [value, seen]     Spark's first and last: of the rows as they come
 *   collect_list(x)            values             nulls skipped
 *   collect_set(x)             distinct values    nulls skipped, first appearance kept
 *   var_*, stddev_*            [n, mean, m2]      Welford's update and Chan's merge
 *   min_by(x, o), max_by(x, o) [x, o] | null      the x of the least (greatest) o; the arg is named_struct(x, o)
 *   approx_count_distinct(x)   registers          HyperLogLog++ over Spark's XxHash64 (seed 42)
 *   percentile(x, p)           values             every value, as Spark's percentile keeps them
 *   percentile_approx(x, p)    { levels, n }      a compacting sketch of at most 2 × accuracy values a level
 */
import { SluiceError } from '@sluice/state';
import type { DataType } from '../schema/types.js';
import { comparator } from '../schema/ordering.js';
import { isAtomicType, isNumericType, typeName } from '../schema/values.js';
import { xxhash64Value } from '../expressions/sparkHashes.js';
import type { AggFn, AggSpec } from './types.js';

export type GenericBuffer = { g: unknown };

export interface GenericAggregator {
  resultType: DataType;
  inputType: DataType;
  newBuffer(): GenericBuffer;
  update(buffer: GenericBuffer, value: unknown): GenericBuffer;
  merge(a: GenericBuffer, b: GenericBuffer): GenericBuffer;
  finalize(buffer: GenericBuffer): unknown;
}

export const GENERIC_AGGREGATES = new Set<AggFn>([
  'first',
  'last',
  'collect_list',
  'collect_set',
  'var_samp',
  'var_pop',
  'stddev_samp',
  'stddev_pop',
  'min_by',
  'max_by',
  'approx_count_distinct',
  'percentile_approx',
  'percentile',
]);

/** Spark's default accuracy of percentile_approx. */
export const DEFAULT_ACCURACY = 10_000;

/**
 * percentile_approx's sketch: levels of values, a value at level h standing for 2^h of them. Level
 * 0 takes the values as they come; a level that reaches `k` values is sorted and compacted: every
 * other value (starting at the first or the second, alternately, so the errors cancel) moves up a
 * level, keeping the total weight n exactly. While a group has fewer than k values it is exact.
 */
type Sketch = { levels: number[][]; flips: boolean[]; n: number };

function compact(s: Sketch, h: number, k: number): void {
  while (h < s.levels.length && s.levels[h]!.length >= k) {
    const level = s.levels[h]!.sort((x, y) => x - y);
    const keep = level.length % 2 === 1 ? [level.pop()!] : [];
    const offset = s.flips[h] ? 1 : 0;
    s.flips[h] = !s.flips[h];
    const up: number[] = [];
    for (let i = offset; i < level.length; i += 2) up.push(level[i]!);
    s.levels[h] = keep;
    if (s.levels.length === h + 1) {
      s.levels.push([]);
      s.flips.push(false);
    }
    s.levels[h + 1]!.push(...up);
    h += 1;
  }
}

/** The least value whose cumulative weight reaches ceil(p × n) (the first for p = 0), as Spark's percentile_approx answers. */
function sketchPercentile(s: Sketch, p: number): number {
  const weighted = s.levels.flatMap((level, h) => level.map((v): [number, number] => [v, 2 ** h])).sort((a, b) => a[0] - b[0]);
  const rank = Math.max(1, Math.ceil(p * s.n));
  let seen = 0;
  for (const [v, w] of weighted) {
    seen += w;
    if (seen >= rank) return v;
  }
  return weighted[weighted.length - 1]![0];
}

/** Spark's percentile: linear interpolation between the values around position p × (n - 1). */
function exactPercentile(sorted: number[], p: number): number {
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return lo === hi ? sorted[lo]! : sorted[lo]! + (pos - lo) * (sorted[hi]! - sorted[lo]!);
}

/** Spark's default relative standard deviation of approx_count_distinct. */
export const DEFAULT_RSD = 0.05;

/** HyperLogLog++'s precision for a relative standard deviation, as Spark computes it (at least 4). */
export function hllPrecision(rsd: number): number {
  const p = Math.ceil(2 * Math.log2(1.106 / rsd));
  if (!(rsd > 0) || p < 4)
    throw new SluiceError('INVALID_EXPRESSION', `approx_count_distinct: the relative standard deviation ${rsd} must be positive and at most 0.39`);
  return p;
}

/** HLL++'s thresholds below which linear counting is used, for precisions 4..18 (Spark's table). */
const THRESHOLDS = [10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 11500, 20000, 50000, 120000, 350000];

function hllEstimate(registers: number[], p: number): number {
  const m = registers.length;
  let z = 0;
  let zeros = 0;
  for (const r of registers) {
    z += 2 ** -r;
    if (r === 0) zeros++;
  }
  const alpha = p === 4 ? 0.673 : p === 5 ? 0.697 : p === 6 ? 0.709 : 0.7213 / (1 + 1.079 / m);
  const e = (alpha * m * m) / z;
  if (zeros > 0) {
    const h = m * Math.log(m / zeros);
    if ((p < 19 && h <= THRESHOLDS[p - 4]!) || e <= 2.5 * m) return Math.round(h);
  }
  return Math.round(e);
}

/** The input type and result type of a generic aggregate of an argument of type `t`; a string is why it does not fit. */
export function genericTypes(spec: AggSpec, t: DataType): { input: DataType; result: DataType } | string {
  switch (spec.fn) {
    case 'first':
    case 'last':
      return { input: t, result: t };
    case 'collect_list':
    case 'collect_set':
      return { input: t, result: { array: t } };
    case 'var_samp':
    case 'var_pop':
    case 'stddev_samp':
    case 'stddev_pop':
      return t === 'int' || t === 'long' || t === 'double' || t === 'string' || t === 'null'
        ? { input: 'double', result: 'double' }
        : `${spec.fn} needs a number, not ${typeName(t)}`;
    case 'min_by':
    case 'max_by': {
      const fields = typeof t === 'object' && 'struct' in t ? t.struct : [];
      if (fields.length !== 2) return `${spec.fn} takes a value and an ordering`;
      if (!isAtomicType(fields[1]!.type)) return `${spec.fn} cannot order by ${typeName(fields[1]!.type)}`;
      return { input: t, result: fields[0]!.type };
    }
    case 'approx_count_distinct':
      return { input: t, result: 'long' };
    case 'percentile':
    case 'percentile_approx': {
      const approx = spec.fn === 'percentile_approx';
      const ok = isNumericType(t) || t === 'string' || t === 'null' || (approx && (t === 'timestamp' || t === 'date'));
      if (!ok) return `${spec.fn} needs a number${approx ? ', a date or a timestamp' : ''}, not ${typeName(t)}`;
      const bad = (spec.percentages ?? []).find((p) => !(p >= 0 && p <= 1));
      if (bad !== undefined || (spec.percentages ?? []).length === 0) return `${spec.fn}: each percentage must be between 0.0 and 1.0, not ${String(bad)}`;
      if (approx && !(Number.isInteger(spec.accuracy ?? DEFAULT_ACCURACY) && (spec.accuracy ?? DEFAULT_ACCURACY) > 0))
        return `${spec.fn}: the accuracy must be a positive integer, not ${String(spec.accuracy)}`;
      const input: DataType = approx && t !== 'string' && t !== 'null' ? t : 'double';
      const one: DataType = approx ? input : 'double';
      return { input, result: spec.percentagesArray ? { array: one } : one };
    }
    default:
      return `${spec.fn} is not a generic aggregate`;
  }
}

export function genericAggregator(spec: AggSpec, inputType: DataType, resultType: DataType): GenericAggregator {
  const common = { inputType, resultType };
  const ignoreNulls = spec.ignoreNulls === true;
  switch (spec.fn) {
    case 'first':
      return {
        ...common,
        newBuffer: () => ({ g: [null, false] }),
        update: (b, v) => {
          const s = b.g as [unknown, boolean];
          if (!s[1] && !(ignoreNulls && v == null)) b.g = [v ?? null, true];
          return b;
        },
        merge: (a, b) => ((a.g as [unknown, boolean])[1] ? a : b),
        finalize: (b) => (b.g as [unknown, boolean])[0],
      };
    case 'last':
      return {
        ...common,
        newBuffer: () => ({ g: [null, false] }),
        update: (b, v) => {
          if (!(ignoreNulls && v == null)) b.g = [v ?? null, true];
          return b;
        },
        merge: (a, b) => ((b.g as [unknown, boolean])[1] ? b : a),
        finalize: (b) => (b.g as [unknown, boolean])[0],
      };
    case 'collect_list':
      return {
        ...common,
        newBuffer: () => ({ g: [] }),
        update: (b, v) => {
          if (v != null) (b.g as unknown[]).push(v);
          return b;
        },
        merge: (a, b) => ({ g: [...(a.g as unknown[]), ...(b.g as unknown[])] }),
        finalize: (b) => [...(b.g as unknown[])],
      };
    case 'collect_set': {
      const key = isAtomicType(inputType) ? (v: unknown) => v : (v: unknown) => JSON.stringify(v);
      // The keys a buffer holds, beside it (its stored form is the array alone): adding is O(1).
      const seen = new WeakMap<GenericBuffer, Set<unknown>>();
      const seenOf = (b: GenericBuffer): Set<unknown> => {
        let set = seen.get(b);
        if (set === undefined) {
          set = new Set((b.g as unknown[]).map(key));
          seen.set(b, set);
        }
        return set;
      };
      const add = (b: GenericBuffer, v: unknown): void => {
        const set = seenOf(b);
        const k = key(v);
        if (set.has(k)) return;
        set.add(k);
        (b.g as unknown[]).push(v);
      };
      return {
        ...common,
        newBuffer: () => ({ g: [] }),
        update: (b, v) => {
          if (v != null) add(b, v);
          return b;
        },
        merge: (a, b) => {
          const out: GenericBuffer = { g: [...(a.g as unknown[])] };
          seen.set(out, new Set(seenOf(a)));
          for (const v of b.g as unknown[]) add(out, v);
          return out;
        },
        finalize: (b) => [...(b.g as unknown[])],
      };
    }
    case 'var_samp':
    case 'var_pop':
    case 'stddev_samp':
    case 'stddev_pop': {
      const sample = spec.fn.endsWith('samp');
      const root = spec.fn.startsWith('stddev');
      return {
        ...common,
        newBuffer: () => ({ g: [0, 0, 0] }),
        update: (b, v) => {
          if (v == null) return b;
          const s = b.g as [number, number, number];
          s[0] += 1;
          const d = (v as number) - s[1];
          s[1] += d / s[0];
          s[2] += d * ((v as number) - s[1]);
          return b;
        },
        merge: (a, b) => {
          const [n1, m1, q1] = a.g as [number, number, number];
          const [n2, m2, q2] = b.g as [number, number, number];
          const n = n1 + n2;
          if (n === 0) return a;
          const d = m2 - m1;
          return { g: [n, m1 + (d * n2) / n, q1 + q2 + (d * d * n1 * n2) / n] };
        },
        finalize: (b) => {
          const [n, , q] = b.g as [number, number, number];
          // Spark 3 (spark.sql.legacy.statisticalAggregate false): null for no rows, and for one row when sampling.
          if (n === 0 || (sample && n === 1)) return null;
          const variance = q / (sample ? n - 1 : n);
          return root ? Math.sqrt(variance) : variance;
        },
      };
    }
    case 'min_by':
    case 'max_by': {
      const fields = (inputType as { struct: Array<{ name: string; type: DataType }> }).struct;
      const [value, order] = [fields[0]!.name, fields[1]!.name];
      const cmp = comparator(fields[1]!.type);
      const sign = spec.fn === 'max_by' ? 1 : -1;
      const better = (a: [unknown, unknown] | null, b: [unknown, unknown] | null): [unknown, unknown] | null =>
        a === null ? b : b === null ? a : sign * cmp(b[1], a[1]) > 0 ? b : a;
      return {
        ...common,
        newBuffer: () => ({ g: null }),
        update: (b, v) => {
          const row = v as Record<string, unknown> | null;
          if (row == null || row[order] == null) return b;
          b.g = better(b.g as [unknown, unknown] | null, [row[value] ?? null, row[order]]);
          return b;
        },
        merge: (a, b) => ({ g: better(a.g as [unknown, unknown] | null, b.g as [unknown, unknown] | null) }),
        finalize: (b) => (b.g === null ? null : (b.g as [unknown, unknown])[0]),
      };
    }
    case 'approx_count_distinct': {
      const p = hllPrecision(spec.rsd ?? DEFAULT_RSD);
      const m = 1 << p;
      const shift = BigInt(64 - p);
      const mask = (1n << 64n) - 1n;
      const padding = 1n << BigInt(p - 1);
      return {
        ...common,
        newBuffer: () => ({ g: new Array<number>(m).fill(0) }),
        update: (b, v) => {
          if (v == null) return b;
          const h = xxhash64Value(v, inputType);
          const idx = Number(h >> shift);
          const w = ((h << BigInt(p)) & mask) | padding;
          const rank = 64 - w.toString(2).length + 1;
          const regs = b.g as number[];
          if (rank > regs[idx]!) regs[idx] = rank;
          return b;
        },
        merge: (a, b) => {
          const x = a.g as number[];
          const y = b.g as number[];
          if (x.length !== y.length) throw new SluiceError('STATE_STORE_CORRUPT', 'approx_count_distinct buffers of different precisions');
          for (let i = 0; i < x.length; i++) if (y[i]! > x[i]!) x[i] = y[i]!;
          return a;
        },
        finalize: (b) => hllEstimate(b.g as number[], p),
      };
    }
    case 'percentile': {
      const ps = spec.percentages as number[];
      return {
        ...common,
        newBuffer: () => ({ g: [] }),
        update: (b, v) => {
          if (v != null) (b.g as number[]).push(v as number);
          return b;
        },
        merge: (a, b) => ({ g: [...(a.g as number[]), ...(b.g as number[])] }),
        finalize: (b) => {
          const sorted = [...(b.g as number[])].sort((x, y) => x - y);
          if (sorted.length === 0) return null;
          const values = ps.map((p) => exactPercentile(sorted, p));
          return spec.percentagesArray ? values : values[0];
        },
      };
    }
    case 'percentile_approx': {
      const ps = spec.percentages as number[];
      const k = 2 * (spec.accuracy ?? DEFAULT_ACCURACY);
      return {
        ...common,
        newBuffer: () => ({ g: { levels: [[]], flips: [false], n: 0 } satisfies Sketch }),
        update: (b, v) => {
          if (v == null) return b;
          const s = b.g as Sketch;
          s.levels[0]!.push(v as number);
          s.n += 1;
          if (s.levels[0]!.length >= k) compact(s, 0, k);
          return b;
        },
        merge: (a, b) => {
          const x = a.g as Sketch;
          const y = b.g as Sketch;
          y.levels.forEach((level, h) => {
            if (x.levels.length <= h) {
              x.levels.push([]);
              x.flips.push(false);
            }
            x.levels[h]!.push(...level);
          });
          x.n += y.n;
          compact(x, 0, k);
          for (let h = 1; h < x.levels.length; h++) compact(x, h, k);
          return a;
        },
        finalize: (b) => {
          const s = b.g as Sketch;
          if (s.n === 0) return null;
          const values = ps.map((p) => sketchPercentile(s, p));
          return spec.percentagesArray ? values : values[0];
        },
      };
    }
    default:
      throw new SluiceError('INVALID_EXPRESSION', `${spec.fn} is not a generic aggregate`);
  }
}
