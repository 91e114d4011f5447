/**
 * The reduce side of an aggregation whose buffers are all numbers (count, and sum, avg, min and
 * max of numbers and timestamps: the seed query and most others), without an object per key:
 * partials merge in a KeyTable per task, the shard's decoded state lives in a KeyTable between
 * batches (the shard's StateCache holds it), and new values are encoded into one buffer per task.
 * Stored values, undo records and shuffle blocks keep aggBufferCodec.ts's format, so this path
 * and the general one in stateTask.ts read and write the same bytes; stateTask.test.ts runs both.
 *
 * Cells per aggregate: count 1; sum, min, max 1 and a null flag; avg 2 (sum, count).
 */
import { dataKeyOf, dataRange, decodeDataKey, decodeKey, indexKey, indexRangeUpTo, SluiceError, type CommitBuilder, type CommitResult, type ShardChange, type ShardStore } from '@sluice/state';
import { aggregatorOf } from './aggregates.js';
import { KeyTable } from './keyTable.js';
import type { AggFn, StatefulOp } from './types.js';
import { keyString, type StateCache } from './stateCache.js';
import type { ShuffleBlock, StateTask } from '../task/messages.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { isNumericType } from '../schema/values.js';
import { exprType } from '../expressions/exprTypes.js';

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

interface CellAgg {
  fn: AggFn;
  name: string;
  cell: number;
  flag: number;
}

export interface CellLayout {
  aggs: CellAgg[];
  width: number;
  nullWidth: number;
  /** Most bytes one encoded value takes. */
  maxBytes: number;
}

/** The cell layout of `op`'s buffers, or undefined when one of them is not a number. */
export function cellLayoutOf(op: AggregateOp, schema: Schema): CellLayout | undefined {
  const aggs: CellAgg[] = [];
  let cell = 0;
  let maxBytes = 0;
  for (const [flag, spec] of op.aggs.entries()) {
    const t: DataType = aggregatorOf(spec, schema).inputType;
    if (spec.fn !== 'count' && !(isNumericType(t) || t === 'timestamp')) return undefined;
    aggs.push({ fn: spec.fn, name: spec.name, cell, flag });
    cell += spec.fn === 'avg' ? 2 : 1;
    maxBytes += spec.fn === 'avg' ? 17 : 9;
  }
  return { aggs, width: cell, nullWidth: aggs.length, maxBytes };
}

// ---- cells <-> aggBufferCodec bytes ------------------------------------------------------------

const scratch = new Uint8Array(8);
const scratchView = new DataView(scratch.buffer);

function f64At(bytes: Uint8Array, pos: number): number {
  for (let i = 0; i < 8; i++) scratch[i] = bytes[pos + i]!;
  return scratchView.getFloat64(0, true);
}

function corrupt(why: string): SluiceError {
  return new SluiceError('STATE_STORE_CORRUPT', `an aggregation state value does not match the query's aggregates: ${why}`);
}

type ReadCells = (bytes: Uint8Array, pos: number, end: number, cells: Float64Array, c: number, flags: Uint8Array, f: number) => void;
const readers = new WeakMap<CellLayout, ReadCells>();

/**
 * readCells compiled for one layout: the aggregates unrolled, each number read through one
 * scratch buffer (block records are not 8-byte aligned). A value of another shape falls back to
 * readCells, which names what is wrong.
 */
function cellReader(L: CellLayout): ReadCells {
  let r = readers.get(L);
  if (r !== undefined) return r;
  const num = (to: string, at: string): string =>
    `for (let i = 0; i < 8; i++) s[i] = bytes[${at} + i]; ${to} = v.getFloat64(0, true);`;
  const body = L.aggs
    .map((a) => {
      if (a.fn === 'avg') return `if (bytes[p] !== 2) return slow(); ${num(`cells[c + ${a.cell}]`, 'p + 1')} ${num(`cells[c + ${a.cell + 1}]`, 'p + 9')} p += 17;`;
      const nullable = a.fn !== 'count';
      return `if (bytes[p] === 1) { ${num(`cells[c + ${a.cell}]`, 'p + 1')} flags[f + ${a.flag}] = 0; p += 9; } ` +
        (nullable ? `else if (bytes[p] === 0) { flags[f + ${a.flag}] = 1; p += 1; } ` : '') + 'else return slow();';
    })
    .join('\n');
  const src = `return function read(bytes, pos, end, cells, c, flags, f) {
    const slow = () => readCells(L, bytes, pos, end, cells, c, flags, f);
    let p = pos;
    ${body}
    if (p !== end) return slow();
  };`;
  r = new Function('L', 'readCells', 's', 'v', src)(L, readCells, scratch, scratchView) as ReadCells;
  readers.set(L, r);
  return r;
}

/** Decodes one value (bytes[pos, end)) into cells[c..] and flags[f..]. */
function readCells(L: CellLayout, bytes: Uint8Array, pos: number, end: number, cells: Float64Array, c: number, flags: Uint8Array, f: number): void {
  for (const a of L.aggs) {
    const tag = bytes[pos];
    if (a.fn === 'avg') {
      if (tag !== 2) throw corrupt(`tag ${String(tag)} for avg`);
      cells[c + a.cell] = f64At(bytes, pos + 1);
      cells[c + a.cell + 1] = f64At(bytes, pos + 9);
      pos += 17;
    } else if (tag === 1) {
      cells[c + a.cell] = f64At(bytes, pos + 1);
      flags[f + a.flag] = 0;
      pos += 9;
    } else if (tag === 0 && a.fn !== 'count') {
      flags[f + a.flag] = 1;
      pos += 1;
    } else throw corrupt(`tag ${String(tag)} for ${a.fn}`);
  }
  if (pos !== end) throw corrupt('trailing bytes');
}

/** Encodes cells as one value into out at pos; returns the end. */
function writeCells(L: CellLayout, out: DataView, bytes: Uint8Array, pos: number, cells: Float64Array, c: number, flags: Uint8Array, f: number): number {
  for (const a of L.aggs) {
    if (a.fn === 'avg') {
      bytes[pos] = 2;
      out.setFloat64(pos + 1, cells[c + a.cell]!, true);
      out.setFloat64(pos + 9, cells[c + a.cell + 1]!, true);
      pos += 17;
    } else if (a.fn !== 'count' && flags[f + a.flag] === 1) bytes[pos++] = 0;
    else {
      bytes[pos] = 1;
      out.setFloat64(pos + 1, cells[c + a.cell]!, true);
      pos += 9;
    }
  }
  return pos;
}

/**
 * Merges the partial in (pc, pf) of `from` into (c, f) of `into`, as aggregates.ts's merge(into,
 * from) does: min and max keep `into` on ties, NaN is the largest value.
 */
function mergeCells(L: CellLayout, into: KeyTable, g: number, from: KeyTable, p: number): void {
  const cells = into.cells;
  const flags = into.nulls;
  const c = g * into.width;
  const f = g * into.nullWidth;
  const pc = p * from.width;
  const pf = p * from.nullWidth;
  for (const a of L.aggs) {
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
        const cmp = x !== x ? (b !== b ? 0 : -1) : b !== b ? 1 : b < x ? -1 : b > x ? 1 : 0;
        if (a.fn === 'max' ? cmp > 0 : cmp < 0) cells[i] = b;
      }
    }
  }
}

function copyCells(into: KeyTable, g: number, from: KeyTable, p: number): void {
  into.cells.set(from.cells.subarray(p * from.width, p * from.width + into.width), g * into.width);
  into.nulls.set(from.nulls.subarray(p * from.nullWidth, (p + 1) * from.nullWidth), g * into.nullWidth);
}

function finalizeInto(L: CellLayout, row: Row, cells: Float64Array, c: number, flags: Uint8Array, f: number): void {
  for (const a of L.aggs) {
    if (a.fn === 'count') row[a.name] = cells[c + a.cell];
    else if (a.fn === 'avg') {
      const n = cells[c + a.cell + 1]!;
      row[a.name] = n === 0 ? null : cells[c + a.cell]! / n;
    } else row[a.name] = flags[f + a.flag] === 1 ? null : cells[c + a.cell];
  }
}

// ---- the task ----------------------------------------------------------------------------------

interface Counters {
  updated: number;
  removed: number;
  dropped: number;
  rowDelta: number;
}

const EMPTY = new Uint8Array(0);

/** A growing buffer that values are encoded into; views of it stay valid (it never moves them). */
class ValueArena {
  private chunk = new Uint8Array(0);
  private view = new DataView(this.chunk.buffer);
  private pos = 0;
  constructor(private readonly L: CellLayout) {}
  encode(cells: Float64Array, c: number, flags: Uint8Array, f: number): Uint8Array {
    if (this.pos + this.L.maxBytes > this.chunk.length) {
      // A new chunk, not a copy: values handed out earlier stay views of the old one.
      this.chunk = new Uint8Array(Math.max(1 << 16, this.L.maxBytes));
      this.view = new DataView(this.chunk.buffer);
      this.pos = 0;
    }
    const start = this.pos;
    this.pos = writeCells(this.L, this.view, this.chunk, start, cells, c, flags, f);
    return this.chunk.subarray(start, this.pos);
  }
}

/**
 * Where a state task's changes go: in pieces to the shard's commit (begun on the first piece, so
 * a task that changes nothing commits nothing and leaves the marker where it was).
 */
export class ChangeStream {
  private builder: CommitBuilder | undefined;
  constructor(
    private readonly store: ShardStore,
    private readonly batchId: number,
  ) {}
  /** Begins the commit if it has not begun; `change` needs it. */
  async open(): Promise<void> {
    this.builder ??= await this.store.beginCommit(this.batchId);
  }
  change(key: Uint8Array, value: Uint8Array | null, prior: Uint8Array | null): void {
    this.builder!.change(key, value, prior);
  }
  async add(changes: readonly ShardChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.open();
    this.builder!.add(changes);
  }
  /** Commits what was added; undefined when nothing was. */
  finish(rowDelta: number, pruneUndoBelow: number): Promise<CommitResult> | undefined {
    return this.builder?.finish(rowDelta, pruneUndoBelow);
  }
}

/** Block bytes a state task merges at a time: its partitions are taken in groups of about this. */
let chunkBytes = 4 << 20;
/** Index entries an eviction reads at a time. */
let indexPage = 65536;

/** Test seam: smaller groups and pages, so that small tests cross their boundaries. */
export function useStateChunks(bytes: number, page: number): void {
  chunkBytes = bytes;
  indexPage = page;
}

/** The task's blocks in groups of whole partitions (keys of two partitions never meet). */
function partitionGroups(blocks: readonly ShuffleBlock[]): ShuffleBlock[][] {
  const byPartition = new Map<number, ShuffleBlock[]>();
  for (const b of blocks) {
    let list = byPartition.get(b.partition);
    if (list === undefined) byPartition.set(b.partition, (list = []));
    list.push(b);
  }
  const groups: ShuffleBlock[][] = [];
  let current: ShuffleBlock[] = [];
  let bytes = 0;
  for (const p of [...byPartition.keys()].sort((x, y) => x - y)) {
    const list = byPartition.get(p)!;
    current.push(...list);
    bytes += list.reduce((n, b) => n + b.data.byteLength, 0);
    if (bytes >= chunkBytes) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Index entries at or below the watermark, a page at a time (an eviction may be large). */
async function forEachIndexPage(store: ShardStore, watermark: number, fn: (page: Uint8Array[]) => Promise<void>): Promise<void> {
  const [start, lt] = indexRangeUpTo(Math.floor(watermark));
  let gte = start;
  for (;;) {
    const page = await store.rangeKeys(gte, lt, indexPage);
    if (page.length > 0) await fn(page);
    if (page.length < indexPage) return;
    const last = page[page.length - 1]!;
    gte = new Uint8Array(last.length + 1);
    gte.set(last);
  }
}


/**
 * The aggregation part of a state task over cells (see stateTask.ts for the steps): sends the
 * changes to `out` a partition group at a time, fills the counters, and returns the rows the
 * output mode emits.
 */
export async function aggregateCells(
  task: StateTask,
  op: AggregateOp,
  L: CellLayout,
  store: ShardStore,
  cache: StateCache,
  watermark: number | undefined,
  out: ChangeStream,
  c: Counters,
): Promise<Row[]> {
  let state = cache.table(L.width, L.nullWidth);
  if (state.count - state.size > Math.max(1024, state.size)) state.compact();
  const keyTypes = op.keys.map((k) => exprType(k, task.stateInputSchema));
  const keyValues = (dk: Uint8Array): unknown[] => decodeKey(decodeDataKey(dk).key, keyTypes);
  const rowOf = (dk: Uint8Array, cells: Float64Array, cOff: number, flags: Uint8Array, fOff: number): Row => {
    const row: Row = {};
    const kv = keyValues(dk);
    op.keyNames.forEach((name, i) => (row[name] = kv[i]));
    finalizeInto(L, row, cells, cOff, flags, fOff);
    return row;
  };
  const decoded = new KeyTable(L.width, L.nullWidth, 1);
  const d = decoded.insert(EMPTY, 0, 0, 0);
  const rowOfBytes = (dk: Uint8Array, bytes: Uint8Array): Row => {
    readCells(L, bytes, 0, bytes.length, decoded.cells, d * L.width, decoded.nulls, d * L.nullWidth);
    return rowOf(dk, decoded.cells, d * L.width, decoded.nulls, d * L.nullWidth);
  };
  const partial = new KeyTable(L.width, L.nullWidth, 1);
  const slot = partial.insert(EMPTY, 0, 0, 0);
  const read = cellReader(L);
  const rows: Row[] = [];
  /** Keys updated in this batch and their new rows, for complete mode (keyString -> row). */
  const updatedRows = task.outputMode === 'complete' ? new Map<string, Row>() : undefined;

  // One table for every group's partials (reset per group, so its arrays are allocated once).
  const batch = new KeyTable(L.width, L.nullWidth);
  let times = new Float64Array(1024);
  for (const blocks of partitionGroups(task.blocks)) {
    const values = new ValueArena(L);
    const priors = new ValueArena(L);

    // 1. Partials of one key from several map tasks merge into one; the first block's time stays.
    batch.reset();
    for (const block of blocks) {
      const data = block.data;
      let pos = 0;
      while (pos < data.length) {
        const kl = data[pos]! | (data[pos + 1]! << 8);
        const k0 = pos + 2;
        pos = k0 + kl;
        const t = f64At(data, pos);
        const bl = data[pos + 8]! | (data[pos + 9]! << 8);
        const b0 = pos + 10;
        pos = b0 + bl;
        const h = KeyTable.hash(data, k0, kl);
        let g = batch.find(data, k0, kl, h);
        if (g < 0) {
          g = batch.insert(data, k0, kl, h);
          read(data, b0, pos, batch.cells, g * L.width, batch.nulls, g * L.nullWidth);
          if (g >= times.length) {
            const next = new Float64Array(times.length * 2);
            next.set(times);
            times = next;
          }
          times[g] = t;
        } else {
          read(data, b0, pos, partial.cells, slot * L.width, partial.nulls, slot * L.nullWidth);
          mergeCells(L, batch, g, partial, slot);
        }
      }
    }

    // 2. Late keys drop; the others find their state in the cache, or in one getMany.
    const n = batch.count;
    const entry = new Int32Array(n).fill(-1);
    const live: number[] = [];
    const misses: number[] = [];
    for (let g = 0; g < n; g++) {
      const t = times[g]!;
      if (watermark !== undefined && t === t && t <= watermark) {
        c.dropped += 1;
        continue;
      }
      live.push(g);
      const e = state.findFrom(batch, g);
      if (e >= 0) entry[g] = e;
      else misses.push(g);
    }
    const fetched = await store.getMany(misses.map((g) => batch.key(g)));
    const stored = new Map<number, Uint8Array>();
    misses.forEach((g, i) => {
      const v = fetched[i];
      if (v !== undefined) stored.set(g, v);
    });

    // 3. New values: prior (cache or store) merged with the batch's partial.
    if (live.length > 0) await out.open();
    for (const g of live) {
      const dk = batch.keyView(g);
      let e = entry[g]!;
      let prior: Uint8Array | null;
      if (e >= 0) {
        prior = priors.encode(state.cells, e * L.width, state.nulls, e * L.nullWidth);
        mergeCells(L, state, e, batch, g);
      } else {
        e = state.insertFrom(batch, g);
        entry[g] = e;
        const s = stored.get(g);
        if (s !== undefined) {
          prior = s;
          read(s, 0, s.length, state.cells, e * L.width, state.nulls, e * L.nullWidth);
          mergeCells(L, state, e, batch, g);
        } else {
          prior = null;
          copyCells(state, e, batch, g);
          c.rowDelta += 1;
          const t = times[g]!;
          if (t === t) {
            const { kg, key } = decodeDataKey(dk);
            out.change(indexKey(t, kg, key), EMPTY, null);
          }
        }
      }
      out.change(dk, values.encode(state.cells, e * L.width, state.nulls, e * L.nullWidth), prior);
      if (task.outputMode === 'update') rows.push(rowOf(dk, state.cells, e * L.width, state.nulls, e * L.nullWidth));
      else if (updatedRows !== undefined) updatedRows.set(keyString(dk), rowOf(dk, state.cells, e * L.width, state.nulls, e * L.nullWidth));
    }
    c.updated += live.length;
    // Over its budget the cache goes now, not after the task: LevelDB holds every key it had.
    cache.settle();
    state = cache.table(L.width, L.nullWidth);
  }

  // 4. Eviction: keys whose index time is <= the watermark (never one updated in this batch).
  if (watermark !== undefined && op.eventTimeKey !== null) {
    await forEachIndexPage(store, watermark, async (index) => {
      await out.open();
      const values = new ValueArena(L);
      const data = index.map((ik) => dataKeyOf(ik));
      const inCache = data.map((dk) => state.find(dk, 0, dk.length, KeyTable.hash(dk, 0, dk.length)));
      const read = await store.getMany(data.filter((_, i) => inCache[i]! < 0));
      let u = 0;
      index.forEach((ik, i) => {
        const dk = data[i]!;
        const e = inCache[i]!;
        const value = e >= 0 ? values.encode(state.cells, e * L.width, state.nulls, e * L.nullWidth) : read[u++];
        // An index entry without data emits nothing, but must not be read again every batch.
        if (value !== undefined) {
          out.change(dk, null, value);
          if (task.outputMode === 'append') rows.push(rowOfBytes(dk, value));
          c.removed += 1;
          c.rowDelta -= 1;
        }
        out.change(ik, null, EMPTY);
        if (e >= 0) state.remove(e);
      });
    });
  }

  if (updatedRows !== undefined) {
    // The whole result: the state as it stands after this batch (the store still holds the prior).
    const [gte, lt] = dataRange();
    for (const [key, value] of await store.range(gte, lt)) {
      const k = keyString(key);
      const updated = updatedRows.get(k);
      rows.push(updated ?? rowOfBytes(key, value));
      updatedRows.delete(k);
    }
    // Keys new in this batch are not in the store yet.
    for (const row of updatedRows.values()) rows.push(row);
  }
  cache.settle();
  return rows;
}

