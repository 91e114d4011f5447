/**
 * The reduce side of an aggregation, the one implementation (plan.ts has what the driver plans
 * with), without an object per key: partials merge in a KeyTable per task, the shard's decoded
 * state lives in a KeyTable between batches (the shard's StateCache holds it), and new values are
 * encoded into one buffer per task. Buffers are cells (aggCells.ts): numbers in typed arrays, any
 * other buffer in an object slot. Stored values are the state value header (the key's index time)
 * and the buffers in aggBufferCodec.ts's format, which shuffle blocks keep too.
 */
import { dataKeyOf, dataRange, decodeDataKey, decodeKey, indexKey, indexKeyTime } from '@sluice/state';
import { aggregateCellsStart, cellLayoutOf, cellReader, cellTable, finalizeInto, mergeCells, ValueArena } from '../aggCells.js';
import { KeyTable } from '../keyTable.js';
import { aggregationPartials } from '../mapSide.js';
import type { OperatorTask } from '../operator.js';
import { useIndexPage, type StateContext } from '../stateContext.js';
import { forEachAggregateRecordAt } from '../../shuffle/shuffleCodec.js';
import { keyString } from '../stateCache.js';
import type { ShuffleBlock } from '../../task/messages.js';
import type { Row } from '../../schema/types.js';
import { exprType } from '../../expressions/exprTypes.js';
import type { AggregateOp } from './plan.js';

// ---- the task ----------------------------------------------------------------------------------

const EMPTY = new Uint8Array(0);

/** Block bytes a state task merges at a time: its partitions are taken in groups of about this. */
let chunkBytes = 4 << 20;
/** Test seam: smaller groups and index pages, so that small tests cross their boundaries. */
export function useStateChunks(bytes: number, page: number): void {
  chunkBytes = bytes;
  useIndexPage(page);
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

/**
 * The aggregation's batch over cells (see stateTask.ts for the steps): writes the changes a
 * partition group at a time, fills the counters, and returns the rows the output mode emits.
 */
export async function aggregateCells(ctx: StateContext, op: AggregateOp): Promise<Row[]> {
  const { task, store, cache, watermark, counters: c, writer: out } = ctx;
  const L = cellLayoutOf(op, task.stateInputSchema);
  let state = cache.table(L, store);
  if (state.count - state.size > Math.max(1024, state.size)) state.compact();
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
    read(bytes, aggregateCellsStart(bytes), bytes.length, decoded, d);
    return rowOf(dk, decoded, d);
  };
  const partial = cellTable(L, 1);
  const slot = partial.insert(EMPTY, 0, 0, 0);
  const rows: Row[] = [];
  /** Keys updated in this batch and their new rows, for complete mode (keyString -> row). */
  const updatedRows = task.outputMode === 'complete' ? new Map<string, Row>() : undefined;
  /**
   * New values of keys this batch updated that its eviction removes (their time is at or below the
   * watermark), for the eviction to find when the cache was dropped since (keyString -> value): a
   * group's are kept here only when the cache let go of them (most batches, none).
   */
  const dueNow = new Map<string, Uint8Array>();

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

    // 2. Late keys drop; the others find their state in the cache, or in one getMany (none when
    // the cache holds every key of the shard: a key it lacks is new).
    const n = batch.count;
    const entry = new Int32Array(n).fill(-1);
    const live: number[] = [];
    const misses: number[] = [];
    const complete = cache.cellsComplete;
    for (let g = 0; g < n; g++) {
      if (ctx.isLate(times[g])) {
        c.dropped += 1;
        continue;
      }
      live.push(g);
      const e = state.findFrom(batch, g);
      if (e >= 0) entry[g] = e;
      else if (!complete) misses.push(g);
    }
    // A key's data key: the one it was read with (the writer knows its prior by it), else a view of the batch's.
    const readKeys: Array<Uint8Array | undefined> = new Array(n);
    const missKeys = misses.map((g) => {
      const k = batch.key(g);
      readKeys[g] = k;
      return k;
    });
    const fetched = await out.read(missKeys);
    const stored = new Map<number, Uint8Array>();
    misses.forEach((g, i) => {
      const v = fetched[i];
      if (v !== undefined) stored.set(g, v);
    });

    // 3. New values: prior (cache or store) merged with the batch's partial.
    /** This group's keys at or below the watermark and their new values, key then value. */
    const due: Uint8Array[] = [];
    if (live.length > 0) await out.begin();
    for (const g of live) {
      const dk = readKeys[g] ?? batch.keyView(g);
      // The key's index time: the event time of its key, the same every batch.
      const indexTime = Number.isNaN(times[g]!) ? null : times[g]!;
      let e = entry[g]!;
      let unread = false;
      if (e >= 0) {
        // The cache's value is the shard's: the writer records it before the merge changes it.
        out.cached(dk, priors.encodeValue(state, e, indexTime));
        mergeCells(L, state, e, batch, g);
      } else {
        e = state.insertFrom(batch, g);
        entry[g] = e;
        const s = stored.get(g);
        if (s !== undefined) {
          read(s, aggregateCellsStart(s), s.length, state, e);
          mergeCells(L, state, e, batch, g);
        } else {
          state.copyValues(e, batch, g);
          unread = complete;
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
            out.addIndex(indexKey(t, kg, key));
          }
        }
      }
      const value = values.encodeValue(state, e, indexTime);
      // A new key of a complete cache was not read: its prior is that it was absent.
      if (unread) out.cached(dk, null);
      out.put(dk, value);
      if (watermark !== undefined && op.eventTimeKey !== null && times[g]! <= watermark) due.push(dk, value);
      if (task.outputMode === 'update') rows.push(rowOf(dk, state, e));
      else if (updatedRows !== undefined) updatedRows.set(keyString(dk), rowOf(dk, state, e));
    }
    c.updated += live.length;
    // The group's keys are views of the batch table, which the next group reuses.
    await out.flush();
    // Over its budget the cache goes now, not after the task: LevelDB holds every key it had.
    cache.settle();
    const next = cache.table(L);
    if (next !== state) for (let i = 0; i < due.length; i += 2) dueNow.set(keyString(due[i]!), due[i + 1]!);
    state = next;
  }

  // 4. Eviction: keys whose index time is <= the watermark (one new in this batch went above).
  if (op.eventTimeKey !== null) {
    await ctx.forEachExpired(async (index) => {
      const values = new ValueArena(L);
      const data = index.map((ik) => dataKeyOf(ik));
      const inCache = data.map((dk) => state.find(dk, 0, dk.length, KeyTable.hash(dk, 0, dk.length)));
      const updated = data.map((dk, i) => (inCache[i]! >= 0 || dueNow.size === 0 ? undefined : dueNow.get(keyString(dk))));
      const fetched = await out.read(data.filter((_, i) => inCache[i]! < 0 && updated[i] === undefined));
      let u = 0;
      index.forEach((ik, i) => {
        const dk = data[i]!;
        const e = inCache[i]!;
        let value: Uint8Array | undefined;
        if (e >= 0 || updated[i] !== undefined) {
          // This batch's value (the first prior, the shard's, went with the key's update).
          value = updated[i] ?? values.encodeValue(state, e, indexKeyTime(ik));
          out.cached(dk, value);
        } else value = fetched[u++];
        // An index entry without data emits nothing, but must not be read again every batch.
        if (value !== undefined) {
          out.delete(dk);
          // A cached key's row comes from its cells, not from the bytes just encoded from them.
          if (task.outputMode === 'append') rows.push(e >= 0 ? rowOf(dk, state, e) : rowOfBytes(dk, value));
          c.removed += 1;
          c.rowDelta -= 1;
        }
        out.removeIndex(ik);
        if (e >= 0) state.remove(e);
      });
      await out.flush();
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
  return rows;
}

export const aggregationTask: OperatorTask<AggregateOp> = {
  mapSide: (op, input) => aggregationPartials(op, input.schema, input.layout, input.udfs),
  mapSideAggregation: (op) => op,
  run: aggregateCells,
};
