/**
 * An aggregation's buffers as cells of a KeyTable entry, and their stored form (aggBufferCodec.ts's
 * encoding, which the state, undo records and shuffle blocks keep). Buffers that are numbers
 * (count, and sum, avg, min and max of numbers and timestamps: the seed query and most others)
 * live in the entry's Float64Array cells and null flags; any other buffer (min and max of strings
 * and booleans) is an object slot of the entry, merged and finalized by aggregates.ts's own
 * operations. Reading a value is specialised per layout (generated, unrolled code) when every
 * buffer is a number.
 *
 * Per aggregate: count 1 cell; sum, min, max 1 cell and a null flag; avg 2 cells (sum, count); an
 * object aggregate 1 object slot.
 */
import { payloadStartOf, SluiceError, valueHeaderBytes, ValueKind, writeValueHeader } from '@sluice/state';
import { maxBufferBytes, readGeneric, writeAvg, writeBuffer, writeNumberOrNull } from './aggBufferCodec.js';
import { aggregatorOf, compareNumbers, type AggBuffer, type Aggregator } from './aggregates.js';
import { KeyTable } from './keyTable.js';
import { CompileCache } from '../compileCache.js';
import type { AggFn, StatefulOp } from './types.js';
import type { Row, Schema } from '../schema/types.js';
import { isNumberBacked } from '../schema/values.js';

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

interface CellAgg {
  fn: AggFn;
  name: string;
  cell: number;
  flag: number;
  /** The object slot of an aggregate whose buffer is not a number, or -1. */
  obj: number;
  agg: Aggregator;
}

export interface CellLayout {
  aggs: CellAgg[];
  width: number;
  nullWidth: number;
  objWidth: number;
  /** Most bytes the number buffers of one value take (object buffers add their own). */
  fixedBytes: number;
}

const layouts = new CompileCache<CellLayout>();

/**
 * The cell layout of `op`'s buffers over rows of `schema` (those entering the aggregation), made
 * once per worker and shape: its value reader is generated code kept per layout, so a layout made
 * anew for every task would compile its reader anew every time.
 */
export function cellLayoutOf(op: AggregateOp, schema: Schema): CellLayout {
  return layouts.of(JSON.stringify([op.aggs, schema]), () => makeLayout(op, schema));
}

function makeLayout(op: AggregateOp, schema: Schema): CellLayout {
  const aggs: CellAgg[] = [];
  let cell = 0;
  let obj = 0;
  let fixedBytes = 0;
  for (const [flag, spec] of op.aggs.entries()) {
    const agg = aggregatorOf(spec, schema);
    const t = agg.inputType;
    const numeric = spec.fn === 'count' || (['sum', 'avg', 'min', 'max'].includes(spec.fn) && isNumberBacked(t));
    aggs.push({ fn: spec.fn, name: spec.name, cell, flag, obj: numeric ? -1 : obj, agg });
    if (!numeric) {
      obj += 1;
      continue;
    }
    cell += spec.fn === 'avg' ? 2 : 1;
    fixedBytes += spec.fn === 'avg' ? 17 : 9;
  }
  return { aggs, width: cell, nullWidth: aggs.length, objWidth: obj, fixedBytes };
}

/** A table of entries in this layout. */
export function cellTable(L: CellLayout, capacity?: number): KeyTable {
  return new KeyTable(L.width, L.nullWidth, capacity, L.objWidth);
}

// ---- stored bytes -> cells ---------------------------------------------------------------------

const scratch = new Uint8Array(8);
const scratchView = new DataView(scratch.buffer);

/** The little-endian double at `pos` (block records are not 8-byte aligned). */
export function f64At(bytes: Uint8Array, pos: number): number {
  for (let i = 0; i < 8; i++) scratch[i] = bytes[pos + i]!;
  return scratchView.getFloat64(0, true);
}

export function corrupt(why: string): SluiceError {
  return new SluiceError('STATE_STORE_CORRUPT', `an aggregation state value does not match the query's aggregates: ${why}`);
}

/** Decodes one value (bytes[pos, end)) into entry `e` of `t`. */
export type ReadCells = (bytes: Uint8Array, pos: number, end: number, t: KeyTable, e: number) => void;
const readers = new WeakMap<CellLayout, ReadCells>();

/**
 * readCells specialised for one layout of number buffers: the aggregates unrolled, each number
 * read through one scratch buffer (block records are not 8-byte aligned). A value of another shape
 * falls back to readCells, which names what is wrong; a layout with object buffers reads through
 * readCells.
 */
export function cellReader(L: CellLayout): ReadCells {
  let r = readers.get(L);
  if (r !== undefined) return r;
  if (L.objWidth > 0) {
    r = (bytes, pos, end, t, e) => readCells(L, bytes, pos, end, t, e);
    readers.set(L, r);
    return r;
  }
  const num = (to: string, at: string): string => `for (let i = 0; i < 8; i++) s[i] = bytes[${at} + i]; ${to} = v.getFloat64(0, true);`;
  const body = L.aggs
    .map((a) => {
      if (a.fn === 'avg')
        return `if (bytes[p] !== 2) return slow(); ${num(`cells[c + ${a.cell}]`, 'p + 1')} ${num(`cells[c + ${a.cell + 1}]`, 'p + 9')} p += 17;`;
      const nullable = a.fn !== 'count';
      return (
        `if (bytes[p] === 1) { ${num(`cells[c + ${a.cell}]`, 'p + 1')} flags[f + ${a.flag}] = 0; p += 9; } ` +
        (nullable ? `else if (bytes[p] === 0) { flags[f + ${a.flag}] = 1; p += 1; } ` : '') +
        'else return slow();'
      );
    })
    .join('\n');
  const src = `return function read(bytes, pos, end, t, e) {
    const slow = () => readCells(L, bytes, pos, end, t, e);
    const cells = t.cells, c = e * ${L.width}, flags = t.nulls, f = e * ${L.nullWidth};
    let p = pos;
    ${body}
    if (p !== end) return slow();
  };`;
  r = new Function('L', 'readCells', 's', 'v', src)(L, readCells, scratch, scratchView) as ReadCells;
  readers.set(L, r);
  return r;
}

/** The general reader: every layout, every tag aggBufferCodec.ts writes, and a coded error for anything else. */
function readCells(L: CellLayout, bytes: Uint8Array, pos: number, end: number, t: KeyTable, e: number): void {
  const c = e * L.width;
  const f = e * L.nullWidth;
  for (const a of L.aggs) {
    const tag = bytes[pos];
    if (a.obj >= 0) {
      let v: AggBuffer;
      if (tag === 0) [v, pos] = [null, pos + 1];
      else if (tag === 3 || tag === 4) [v, pos] = [tag === 3, pos + 1];
      else if (tag === 1) [v, pos] = [f64At(bytes, pos + 1), pos + 9];
      else if (tag === 5 || tag === 6) {
        const n = bytes[pos + 1]! | (bytes[pos + 2]! << 8) | (bytes[pos + 3]! << 16) | (bytes[pos + 4]! << 24);
        v = tag === 5 ? Buffer.from(bytes.buffer, bytes.byteOffset + pos + 5, n).toString('utf8') : readGeneric(bytes.subarray(pos + 5, pos + 5 + n));
        pos += 5 + n;
      } else throw corrupt(`tag ${String(tag)} for ${a.fn}`);
      t.objects[e * L.objWidth + a.obj] = v;
    } else if (a.fn === 'avg') {
      if (tag !== 2) throw corrupt(`tag ${String(tag)} for avg`);
      t.cells[c + a.cell] = f64At(bytes, pos + 1);
      t.cells[c + a.cell + 1] = f64At(bytes, pos + 9);
      pos += 17;
    } else if (tag === 1) {
      t.cells[c + a.cell] = f64At(bytes, pos + 1);
      t.nulls[f + a.flag] = 0;
      pos += 9;
    } else if (tag === 0 && a.fn !== 'count') {
      t.nulls[f + a.flag] = 1;
      pos += 1;
    } else throw corrupt(`tag ${String(tag)} for ${a.fn}`);
  }
  if (pos !== end) throw corrupt('trailing bytes');
}

// ---- cells -> stored bytes ---------------------------------------------------------------------

/** Most bytes entry `e`'s value takes. */
function maxBytesOf(L: CellLayout, t: KeyTable, e: number): number {
  let n = L.fixedBytes;
  for (let o = 0; o < L.objWidth; o++) n += maxBufferBytes(t.objects[e * L.objWidth + o] as AggBuffer);
  return n;
}

/** Encodes entry `e` as one value into `bytes` at pos; returns the end. */
function writeCells(L: CellLayout, view: DataView, bytes: Uint8Array, pos: number, t: KeyTable, e: number): number {
  const c = e * L.width;
  const f = e * L.nullWidth;
  for (const a of L.aggs) {
    if (a.obj >= 0) pos = writeBuffer(t.objects[e * L.objWidth + a.obj] as AggBuffer, bytes, view, pos);
    else if (a.fn === 'avg') pos = writeAvg(t.cells[c + a.cell]!, t.cells[c + a.cell + 1]!, bytes, view, pos);
    else pos = writeNumberOrNull(a.fn !== 'count' && t.nulls[f + a.flag] === 1 ? null : t.cells[c + a.cell]!, bytes, view, pos);
  }
  return pos;
}

/** A growing buffer that values are encoded into; views of it stay valid (it never moves them). */
export class ValueArena {
  private chunk = new Uint8Array(0);
  private view = new DataView(this.chunk.buffer);
  private pos = 0;
  constructor(private readonly L: CellLayout) {}

  /** Entry `e`'s buffers. */
  encode(t: KeyTable, e: number): Uint8Array {
    const start = this.room(t, e, 0);
    this.pos = writeCells(this.L, this.view, this.chunk, start, t, e);
    return this.chunk.subarray(start, this.pos);
  }

  /** Entry `e` as an aggregation's state value: the state value header (its index time), then its buffers. */
  encodeValue(t: KeyTable, e: number, indexTime: number | null): Uint8Array {
    const start = this.room(t, e, valueHeaderBytes(indexTime));
    const cells = writeValueHeader(this.chunk, this.view, start, ValueKind.aggregate, AGGREGATE_VALUE_VERSION, indexTime);
    this.pos = writeCells(this.L, this.view, this.chunk, cells, t, e);
    return this.chunk.subarray(start, this.pos);
  }

  /** Where entry `e`'s value of `extra` more bytes starts: a new chunk, not a copy, when it does not fit (values handed out earlier stay views of the old one). */
  private room(t: KeyTable, e: number, extra: number): number {
    const most = extra + (this.L.objWidth === 0 ? this.L.fixedBytes : maxBytesOf(this.L, t, e));
    if (this.pos + most > this.chunk.length) {
      this.chunk = new Uint8Array(Math.max(1 << 16, most));
      this.view = new DataView(this.chunk.buffer);
      this.pos = 0;
    }
    return this.pos;
  }
}

export const AGGREGATE_VALUE_VERSION = 1;

/** Where an aggregation's stored value's buffers start (0 for a value written before the header). */
export const aggregateCellsStart = (value: Uint8Array): number => payloadStartOf(value, ValueKind.aggregate, AGGREGATE_VALUE_VERSION, 'aggregation state');

// ---- operations --------------------------------------------------------------------------------

/**
 * Merges entry p of `from` into entry g of `into`, as aggregates.ts's merge(into, from) does: min
 * and max keep `into` on ties, NaN is the largest value.
 */
export function mergeCells(L: CellLayout, into: KeyTable, g: number, from: KeyTable, p: number): void {
  const cells = into.cells;
  const flags = into.nulls;
  const c = g * L.width;
  const f = g * L.nullWidth;
  const pc = p * L.width;
  const pf = p * L.nullWidth;
  for (const a of L.aggs) {
    if (a.obj >= 0) {
      const at = g * L.objWidth + a.obj;
      into.objects[at] = a.agg.merge(into.objects[at] as AggBuffer, from.objects[p * L.objWidth + a.obj] as AggBuffer);
      continue;
    }
    const i = c + a.cell;
    const b = from.cells[pc + a.cell]!;
    if (a.fn === 'count') cells[i]! += b;
    else if (a.fn === 'avg') {
      cells[i]! += b;
      cells[i + 1]! += from.cells[pc + a.cell + 1]!;
    } else {
      if (from.nulls[pf + a.flag] === 1) continue;
      if (flags[f + a.flag] === 1) {
        cells[i] = b;
        flags[f + a.flag] = 0;
        continue;
      }
      const x = cells[i]!;
      if (a.fn === 'sum') cells[i] = x + b;
      else {
        const cmp = compareNumbers(b, x);
        if (a.fn === 'max' ? cmp > 0 : cmp < 0) cells[i] = b;
      }
    }
  }
}

/** The aggregates' output values of entry `e`, set on `row`. */
export function finalizeInto(L: CellLayout, row: Row, t: KeyTable, e: number): void {
  const c = e * L.width;
  const f = e * L.nullWidth;
  for (const a of L.aggs) {
    if (a.obj >= 0) row[a.name] = a.agg.finalize(t.objects[e * L.objWidth + a.obj] as AggBuffer);
    else if (a.fn === 'count') row[a.name] = t.cells[c + a.cell];
    else if (a.fn === 'avg') {
      const n = t.cells[c + a.cell + 1]!;
      row[a.name] = n === 0 ? null : t.cells[c + a.cell]! / n;
    } else row[a.name] = t.nulls[f + a.flag] === 1 ? null : t.cells[c + a.cell];
  }
}
