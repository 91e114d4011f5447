/**
 * The reduce side of an aggregation, the one implementation, without an object per key: partials
 * merge in a KeyTable per task, the shard's decoded state lives in a KeyTable between batches (the
 * shard's StateCache holds it), and new values are encoded into one buffer per task. Buffers are
 * cells (aggCells.ts): numbers in typed arrays, any other buffer in an object slot. Stored values,
 * undo records and shuffle blocks keep aggBufferCodec.ts's format.
 */
import {
  dataKeyOf,
  dataRange,
  decodeDataKey,
  decodeKey,
  indexKey,
  indexRangeUpTo,
  type CommitBuilder,
  type CommitResult,
  type ShardChange,
  type ShardStore,
} from '@sluice/state';
import { cellReader, cellTable, finalizeInto, mergeCells, ValueArena, type CellLayout } from './aggCells.js';
import { KeyTable } from './keyTable.js';
import { forEachAggregateRecordAt } from '../shuffle/shuffleCodec.js';
import type { StatefulOp } from './types.js';
import { keyString, type StateCache } from './stateCache.js';
import type { ShuffleBlock, StateTask } from '../task/messages.js';
import type { Row } from '../schema/types.js';
import { exprType } from '../expressions/exprTypes.js';

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

// ---- the task ----------------------------------------------------------------------------------

interface Counters {
  updated: number;
  removed: number;
  dropped: number;
  rowDelta: number;
}

const EMPTY = new Uint8Array(0);

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
export function partitionGroups(blocks: readonly ShuffleBlock[]): ShuffleBlock[][] {
  const byPartition = new Map<number, ShuffleBlock[]>();
  for (const b of blocks) {
    let list = byPartition.get(b.partition);
    if (list === undefined) {
      list = [];
      byPartition.set(b.partition, list);
    }
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
export async function forEachIndexPage(store: ShardStore, watermark: number, fn: (page: Uint8Array[]) => Promise<void>): Promise<void> {
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
  let state = cache.table(L);
  if (state.count - state.size > Math.max(1024, state.size)) state.compact();
  const late = watermark === undefined ? undefined : (task.lateWatermarkMs ?? watermark);
  const keyTypes = op.keys.map((k) => exprType(k, task.stateInputSchema));
  const keyValues = (dk: Uint8Array): unknown[] => decodeKey(decodeDataKey(dk).key, keyTypes);
  const rowOf = (dk: Uint8Array, t: KeyTable, e: number): Row => {
    const row: Row = {};
    const kv = keyValues(dk);
    op.keyNames.forEach((name, i) => {
      row[name] = kv[i];
    });
    finalizeInto(L, row, t, e);
    return row;
  };
  const read = cellReader(L);
  const decoded = cellTable(L, 1);
  const d = decoded.insert(EMPTY, 0, 0, 0);
  const rowOfBytes = (dk: Uint8Array, bytes: Uint8Array): Row => {
    read(bytes, 0, bytes.length, decoded, d);
    return rowOf(dk, decoded, d);
  };
  const partial = cellTable(L, 1);
  const slot = partial.insert(EMPTY, 0, 0, 0);
  const rows: Row[] = [];
  /** Keys updated in this batch and their new rows, for complete mode (keyString -> row). */
  const updatedRows = task.outputMode === 'complete' ? new Map<string, Row>() : undefined;

  // One table for every group's partials (reset per group, so its arrays are allocated once).
  const batch = cellTable(L);
  let times = new Float64Array(1024);
  for (const blocks of partitionGroups(task.blocks)) {
    const values = new ValueArena(L);
    const priors = new ValueArena(L);

    // 1. Partials of one key from several map tasks merge into one; the first block's time stays.
    batch.reset();
    for (const block of blocks) {
      const data = block.data;
      forEachAggregateRecordAt(data, (k0, kl, t, b0, end) => {
        const h = KeyTable.hash(data, k0, kl);
        let g = batch.find(data, k0, kl, h);
        if (g < 0) {
          g = batch.insert(data, k0, kl, h);
          read(data, b0, end, batch, g);
          if (g >= times.length) {
            const next = new Float64Array(times.length * 2);
            next.set(times);
            times = next;
          }
          times[g] = t;
        } else {
          read(data, b0, end, partial, slot);
          mergeCells(L, batch, g, partial, slot);
        }
      });
    }

    // 2. Late keys drop; the others find their state in the cache, or in one getMany.
    const n = batch.count;
    const entry = new Int32Array(n).fill(-1);
    const live: number[] = [];
    const misses: number[] = [];
    for (let g = 0; g < n; g++) {
      const t = times[g]!;
      if (late !== undefined && !Number.isNaN(t) && t <= late) {
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
        prior = priors.encode(state, e);
        mergeCells(L, state, e, batch, g);
      } else {
        e = state.insertFrom(batch, g);
        entry[g] = e;
        const s = stored.get(g);
        if (s !== undefined) {
          prior = s;
          read(s, 0, s.length, state, e);
          mergeCells(L, state, e, batch, g);
        } else {
          prior = null;
          state.copyValues(e, batch, g);
          const t = times[g]!;
          if (watermark !== undefined && op.eventTimeKey !== null && !Number.isNaN(t) && t <= watermark) {
            // New, and already at or below the watermark (late rows drop by the batch before's,
            // an operator after another): it is final now, emitted and never stored.
            if (task.outputMode !== 'complete') rows.push(rowOf(dk, state, e));
            state.remove(e);
            c.removed += 1;
            continue;
          }
          c.rowDelta += 1;
          if (!Number.isNaN(t)) {
            const { kg, key } = decodeDataKey(dk);
            out.change(indexKey(t, kg, key), EMPTY, null);
          }
        }
      }
      out.change(dk, values.encode(state, e), prior);
      if (task.outputMode === 'update') rows.push(rowOf(dk, state, e));
      else if (updatedRows !== undefined) updatedRows.set(keyString(dk), rowOf(dk, state, e));
    }
    c.updated += live.length;
    // Over its budget the cache goes now, not after the task: LevelDB holds every key it had.
    cache.settle();
    state = cache.table(L);
  }

  // 4. Eviction: keys whose index time is <= the watermark (one new in this batch went above).
  if (watermark !== undefined && op.eventTimeKey !== null) {
    await forEachIndexPage(store, watermark, async (index) => {
      await out.open();
      const values = new ValueArena(L);
      const data = index.map((ik) => dataKeyOf(ik));
      const inCache = data.map((dk) => state.find(dk, 0, dk.length, KeyTable.hash(dk, 0, dk.length)));
      const fetched = await store.getMany(data.filter((_, i) => inCache[i]! < 0));
      let u = 0;
      index.forEach((ik, i) => {
        const dk = data[i]!;
        const e = inCache[i]!;
        const value = e >= 0 ? values.encode(state, e) : fetched[u++];
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
