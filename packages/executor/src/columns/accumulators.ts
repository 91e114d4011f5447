/**
 * The accumulators of the map-side hash aggregation (columnAggregate.ts): one per aggregate, each
 * updating a typed array of partial values by group id, one loop per aggregate and batch, and
 * writing a group's partial in aggBufferCodec.ts's encoding straight into a shuffle block. count,
 * and sum, avg, min and max of numbers and timestamps, keep typed arrays; any other aggregate (min
 * and max of strings and booleans) keeps aggregates.ts's own buffers.
 */
import { writeAvg, writeNumberOrNull } from '../operators/aggBufferCodec.js';
import { compareNumbers, type AggBuffer, type Aggregator } from '../operators/aggregates.js';
import { isNumberBacked } from '../schema/values.js';
import type { Vector } from './vectors.js';

export interface Accumulator {
  grow(capacity: number): void;
  /** Adds row i's value to group gids[i] (rows with gid -1 belong to no group). */
  update(gids: Int32Array, n: number, v: Vector | null): void;
  buffer(g: number): AggBuffer;
  /** Most bytes `write` takes. */
  maxBytes: number;
  /** Writes group g's buffer at pos in aggBufferCodec.ts's encoding; returns the end. */
  write(g: number, b: Uint8Array, v: DataView, pos: number): number;
}

export const isNull = (v: Vector, i: number): boolean => (v.kind === 'any' ? v.values[i] == null : v.nulls !== null && v.nulls[i] === 1);

function grown<T extends Float64Array | Uint8Array>(a: T, capacity: number, make: (n: number) => T): T {
  if (a.length >= capacity) return a;
  const next = make(Math.max(capacity, a.length * 2));
  next.set(a);
  return next;
}

const f64 = (n: number): Float64Array => new Float64Array(n);
const u8 = (n: number): Uint8Array => new Uint8Array(n);

function numberAt(v: Vector, i: number): number {
  return v.kind === 'num' ? v.values[i]! : ((v.kind === 'any' ? v.values[i] : null) as number);
}

/** count(*) and count(x). */
class CountAcc implements Accumulator {
  private counts = f64(0);
  grow(c: number): void {
    this.counts = grown(this.counts, c, f64);
  }
  update(gids: Int32Array, n: number, v: Vector | null): void {
    const counts = this.counts;
    if (v === null || (v.kind !== 'any' && v.nulls === null)) {
      for (let i = 0; i < n; i++) {
        const g = gids[i]!;
        if (g >= 0) counts[g]! += 1;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      const g = gids[i]!;
      if (g >= 0 && !isNull(v, i)) counts[g]! += 1;
    }
  }
  buffer(g: number): AggBuffer {
    return this.counts[g]!;
  }
  readonly maxBytes = 9;
  write(g: number, b: Uint8Array, v: DataView, pos: number): number {
    return writeNumberOrNull(this.counts[g]!, b, v, pos);
  }
}

/** sum(x) (null until a non-null value) and avg(x) ([sum, count]). */
class SumAcc implements Accumulator {
  private sums = f64(0);
  private counts = f64(0);
  constructor(private readonly avg: boolean) {}
  grow(c: number): void {
    this.sums = grown(this.sums, c, f64);
    this.counts = grown(this.counts, c, f64);
  }
  update(gids: Int32Array, n: number, v: Vector | null): void {
    const { sums, counts } = this;
    if (v!.kind === 'num') {
      const values = v!.values;
      const nulls = v!.nulls;
      for (let i = 0; i < n; i++) {
        const g = gids[i]!;
        if (g < 0 || (nulls !== null && nulls[i] === 1)) continue;
        // A sum starts at its first value (aggregates.ts: -0 stays -0); an average at 0.
        if (counts[g] === 0 && !this.avg) sums[g] = values[i]!;
        else sums[g]! += values[i]!;
        counts[g]! += 1;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      const g = gids[i]!;
      if (g < 0 || isNull(v!, i)) continue;
      if (counts[g] === 0 && !this.avg) sums[g] = numberAt(v!, i);
      else sums[g]! += numberAt(v!, i);
      counts[g]! += 1;
    }
  }
  buffer(g: number): AggBuffer {
    if (this.avg) return [this.sums[g]!, this.counts[g]!];
    return this.counts[g] === 0 ? null : this.sums[g]!;
  }
  readonly maxBytes = 17;
  write(g: number, b: Uint8Array, v: DataView, pos: number): number {
    if (!this.avg) return writeNumberOrNull(this.counts[g] === 0 ? null : this.sums[g]!, b, v, pos);
    return writeAvg(this.sums[g]!, this.counts[g]!, b, v, pos);
  }
}

/**
 * min(x) and max(x) of numbers and timestamps, in Spark's order (NaN above everything); on ties the
 * first value stays, as aggregates.ts's pick does.
 */
class MinMaxAcc implements Accumulator {
  private best = f64(0);
  private has = u8(0);
  constructor(private readonly max: boolean) {}
  grow(c: number): void {
    this.best = grown(this.best, c, f64);
    this.has = grown(this.has, c, u8);
  }
  update(gids: Int32Array, n: number, v: Vector | null): void {
    const { best, has, max } = this;
    for (let i = 0; i < n; i++) {
      const g = gids[i]!;
      if (g < 0 || isNull(v!, i)) continue;
      const b = numberAt(v!, i);
      if (has[g] === 0) {
        best[g] = b;
        has[g] = 1;
        continue;
      }
      const a = best[g]!;
      const cmp = compareNumbers(b, a);
      if (max ? cmp > 0 : cmp < 0) best[g] = b;
    }
  }
  buffer(g: number): AggBuffer {
    return this.has[g] === 1 ? this.best[g]! : null;
  }
  readonly maxBytes = 9;
  write(g: number, b: Uint8Array, v: DataView, pos: number): number {
    return writeNumberOrNull(this.has[g] === 1 ? this.best[g]! : null, b, v, pos);
  }
}

/** Any other aggregate (min and max of strings and booleans): aggregates.ts's own buffers. */
class GenericAcc implements Accumulator {
  private buffers: AggBuffer[] = [];
  constructor(private readonly agg: Aggregator) {}
  grow(c: number): void {
    while (this.buffers.length < c) this.buffers.push(this.agg.newBuffer());
  }
  update(gids: Int32Array, n: number, v: Vector | null): void {
    for (let i = 0; i < n; i++) {
      const g = gids[i]!;
      if (g < 0) continue;
      this.buffers[g] = this.agg.update(this.buffers[g]!, v === null ? null : vectorValue(v, i));
    }
  }
  buffer(g: number): AggBuffer {
    return this.buffers[g]!;
  }
  /** Strings have no bound: finish takes the general route for aggregations with this one. */
  readonly maxBytes = Number.POSITIVE_INFINITY;
  write(): number {
    throw new Error('a generic aggregate buffer has no fixed encoding');
  }
}

export function vectorValue(v: Vector, i: number): unknown {
  if (isNull(v, i)) return null;
  switch (v.kind) {
    case 'num':
      return v.values[i];
    case 'bool':
      return v.values[i] === 1;
    case 'str':
      return v.dict[v.codes[i]!];
    case 'any':
      return v.values[i];
  }
}

export function accumulatorOf(agg: Aggregator, fn: string): Accumulator {
  const numeric = isNumberBacked(agg.inputType);
  if (fn === 'count') return new CountAcc();
  if ((fn === 'sum' || fn === 'avg') && numeric) return new SumAcc(fn === 'avg');
  if ((fn === 'min' || fn === 'max') && numeric) return new MinMaxAcc(fn === 'max');
  return new GenericAcc(agg);
}
