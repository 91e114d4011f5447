/**
 * Reduce side of a stateful batch (StateTask in messages.ts), run on the slot that owns the shard.
 *
 * 1. Roll back an earlier attempt at this batch (the shard's marker is this batch), so every
 *    attempt, a retry or a replay after a restart, starts from the state before it.
 * 2. Merge the shuffle blocks per key; drop late keys (event time <= the batch's watermark).
 * 3. Read the prior state of those keys in one getMany, and update it.
 * 4. Evict keys whose event time (window end, or expiry) is <= the watermark, by scanning the
 *    shard's time index: the cost is what is evicted, not the total state.
 * 5. Emit rows by output mode, run the operators after the stateful one, commit the shard once
 *    (changes, undo record and marker in one synced batch), then deliver the rows.
 */
import { sep } from 'node:path';
import { threadId } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import {
  dataKey,
  dataKeyOf,
  dataRange,
  decodeDataKey,
  decodeKey,
  indexKey,
  indexRangeUpTo,
  openLevelShard,
  ShardRegistry,
  SluiceError,
  type ShardChange,
  type ShardStore,
} from '@sluice/state';
import { aggregatorOf, statefulOutputSchema, type AggBuffer, type Aggregator } from './aggregates.js';
import { decodeBuffers, encodeBuffers } from './aggBufferCodec.js';
import { exprType } from '../expressions/exprTypes.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { dropStateCache, keyString, stateCache, type StateCache } from './stateCache.js';
import { aggregateCells, cellLayoutOf, ChangeStream } from './compactAggregate.js';
import type { StateOperatorMetrics, StateResult, StateTask } from '../task/messages.js';
import { decodeBlock, forEachAggregateRecord, type DedupRecord } from '../shuffle/shuffleCodec.js';
import { compileStages, runStages } from '../task/stages.js';
import { deliver } from '../task/taskOutput.js';
import { operatorUsesWatermark } from './watermark.js';
import type { StatefulOp } from './types.js';
import type { Row } from '../schema/types.js';

/**
 * Test seam (stateTask.test.ts): true sends every aggregation through the general path, so the
 * tests can run both paths on the same batches.
 */
let generalPath = false;
export function useGeneralAggregatePath(on: boolean): void {
  generalPath = on;
}

/**
 * Shards stay open across tasks and batches in the worker that owns them, while the worker's
 * budgets allow; a shard closed to make room takes its decoded state cache with it.
 */
export let shards = new ShardRegistry(openLevelShard, dropStateCache);

/**
 * Test seam (stateTask.test.ts): replaces this worker's shard registry, e.g. with one whose opener
 * returns memory shards, and returns the previous one so a test can put it back.
 */
export function useShardRegistry(registry: ShardRegistry): ShardRegistry {
  const previous = shards;
  shards = registry;
  return previous;
}

/** Deduplication state values: [keyValues, timeMs | null]. Aggregation values: aggBufferCodec.ts. */
const values = new Packr({ useRecords: false, moreTypes: false });

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

interface Counters {
  updated: number;
  removed: number;
  dropped: number;
  rowDelta: number;
}

const copy = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

export async function runStateTask(task: StateTask, udfs: UdfRegistry): Promise<StateResult> {
  const result = await shards.use(task.shardDir, task.storeOptions, task.workerBudget, (store) => runOnOpenShard(task, store, udfs));
  const stateStores = shards.usage();
  return { ...result, ...(stateStores && { stateStores }) };
}

async function runOnOpenShard(task: StateTask, store: ShardStore, udfs: UdfRegistry): Promise<Omit<StateResult, 'stateStores'>> {
  const cache = stateCache(task.shardDir, task.storeOptions.stateCacheBytes);
  try {
    if (await store.rollbackIfAt(task.batchId)) cache.clear();
    if (task.expectedMarker !== null && store.marker !== task.expectedMarker) {
      const state = store.marker < 0 ? 'holds no commit at all' : `last committed batch ${store.marker}`;
      throw new SluiceError(
        'STATE_STORE_CORRUPT',
        `state shard ${task.shardDir} ${state}, but the checkpoint's commit log says it committed batch ${task.expectedMarker}: ` +
          `it lacks batch ${task.expectedMarker}'s state (the shard was deleted, emptied, replaced or lost the tail of its log); restore it or use a new checkpoint`,
        { file: task.shardDir },
      );
    }
    return await runOnShard(task, store, cache, udfs);
  } catch (e) {
    // The cache may hold writes this attempt never committed.
    cache.clear();
    throw e;
  }
}

async function runOnShard(task: StateTask, store: ShardStore, cache: StateCache, udfs: UdfRegistry): Promise<Omit<StateResult, 'stateStores'>> {
  const counters: Counters = { updated: 0, removed: 0, dropped: 0, rowDelta: 0 };
  const changes: ShardChange[] = [];
  const schema = statefulOutputSchema(task.stateful, task.stateInputSchema);
  const op = task.stateful;
  const cells = op.kind === 'aggregate' && !generalPath ? cellLayoutOf(op, task.stateInputSchema) : undefined;
  const out = new ChangeStream(store, task.batchId);
  const emitted =
    op.kind !== 'aggregate'
      ? await deduplicate(task, op, store, changes, counters)
      : cells !== undefined
        ? await aggregateCells(task, op, cells, store, cache, watermarkOf(task), out, counters)
        : await aggregate(task, op, store, cache, changes, counters);
  await out.add(changes);

  const post = await compileStages(schema, task.post, udfs);
  const { rows } = runStages(post, emitted);
  const committed = await out.finish(counters.rowDelta, task.pruneUndoBelow);
  const commitTimeMs = committed === undefined ? 0 : Math.round(committed.commitTimeMs);
  const state: StateOperatorMetrics = {
    numRowsTotal: store.numRows,
    numRowsUpdated: counters.updated,
    numRowsRemoved: counters.removed,
    numRowsDroppedByWatermark: counters.dropped,
    memoryUsedBytes: store.memoryUsedBytes() + cache.memoryUsedBytes,
    commitTimeMs,
  };
  const base: Omit<StateResult, 'stateStores'> = { ok: true, kind: 'state', threadId, numOutputRows: rows.length, state, shardMarker: store.marker };
  return deliver(base, task.output, rows, post.outputSchema);
}

/** The batch's watermark when the operator uses it (drops late keys, evicts), else undefined. */
function watermarkOf(task: StateTask): number | undefined {
  return operatorUsesWatermark(task.stateful, task.hasWatermark, task.outputMode) ? task.watermarkMs : undefined;
}

// ---- aggregation ------------------------------------------------------------------------------

async function aggregate(
  task: StateTask,
  op: AggregateOp,
  store: ShardStore,
  cache: StateCache,
  changes: ShardChange[],
  c: Counters,
): Promise<Row[]> {
  const aggs = op.aggs.map((spec) => aggregatorOf(spec, task.stateInputSchema));
  const keyTypes = op.keys.map((k) => exprType(k, task.stateInputSchema));
  const watermark = watermarkOf(task);

  // Partials of one key from several map tasks merge into one. Keys are views into the blocks.
  interface Partial {
    k: string;
    dk: Uint8Array;
    time: number | null;
    buffers: AggBuffer[];
    /** The key's state before this batch: decoded from the cache, or the stored bytes. */
    cached?: AggBuffer[] | undefined;
    stored?: Uint8Array | undefined;
    /** The key's value after this batch. */
    bytes?: Uint8Array;
  }
  const merged = new Map<string, Partial>();
  for (const block of task.blocks) {
    forEachAggregateRecord(block.data, (dk, time, bytes) => {
      const k = keyString(dk);
      const have = merged.get(k);
      const buffers = decodeBuffers(bytes);
      if (have) have.buffers = have.buffers.map((b, i) => (aggs[i] as Aggregator).merge(b, buffers[i] as AggBuffer));
      else merged.set(k, { k, dk, time, buffers });
    });
  }
  const live: Partial[] = [];
  for (const p of merged.values()) {
    if (watermark !== undefined && p.time !== null && p.time <= watermark) c.dropped += 1;
    else live.push(p);
  }

  // Prior values: from the cache, else one getMany for the misses.
  const misses: Partial[] = [];
  for (const p of live) if ((p.cached = cache.get(p.k)) === undefined) misses.push(p);
  const fetched = await store.getMany(misses.map((p) => p.dk));
  misses.forEach((p, i) => (p.stored = fetched[i]));
  for (const p of live) {
    // Encoded before the merge below, which may update the cached buffers in place.
    const priorBytes = p.cached ? encodeBuffers(p.cached) : p.stored;
    if (priorBytes) {
      const prior = p.cached ?? decodeBuffers(priorBytes);
      p.buffers = prior.map((b, j) => (aggs[j] as Aggregator).merge(b, p.buffers[j] as AggBuffer));
    } else {
      c.rowDelta += 1;
      if (p.time !== null) {
        const { kg, key } = decodeDataKey(p.dk);
        changes.push({ key: indexKey(p.time, kg, key), value: EMPTY, prior: null });
      }
    }
    p.bytes = encodeBuffers(p.buffers);
    changes.push({ key: p.dk, value: p.bytes, prior: priorBytes ?? null });
    cache.set(p.k, p.buffers);
  }
  c.updated = live.length;

  const toRow = (keyValues: unknown[], buffers: AggBuffer[]): Row => {
    const row: Row = {};
    op.keyNames.forEach((n, i) => (row[n] = keyValues[i]));
    op.aggs.forEach((a, i) => (row[a.name] = (aggs[i] as Aggregator).finalize(buffers[i] as AggBuffer)));
    return row;
  };
  const keyValues = (dk: Uint8Array): unknown[] => decodeKey(decodeDataKey(dk).key, keyTypes);
  const fromState = (dk: Uint8Array, bytes: Uint8Array): Row => toRow(keyValues(dk), decodeBuffers(bytes));
  // Keys updated in this batch are later than the watermark, so eviction never meets them.
  const known = (k: string): Uint8Array | undefined => {
    const cached = cache.get(k);
    return cached && encodeBuffers(cached);
  };
  const evicted = watermark !== undefined && op.eventTimeKey !== null ? await evict(store, watermark, known, changes, c) : [];
  for (const [dk] of evicted) cache.delete(keyString(dk));
  switch (task.outputMode) {
    case 'append':
      return evicted.map(([dk, bytes]) => fromState(dk, bytes));
    case 'update':
      return live.map((p) => toRow(keyValues(p.dk), p.buffers));
    case 'complete': {
      // Complete mode writes the whole result each batch: the state as it stands after this batch.
      const rows: Row[] = [];
      const [gte, lt] = dataRange();
      for (const [key, value] of await store.range(gte, lt)) {
        const p = merged.get(keyString(key));
        rows.push(p?.bytes ? toRow(keyValues(key), p.buffers) : fromState(key, value));
      }
      for (const p of live) if (!p.stored && !p.cached) rows.push(toRow(keyValues(p.dk), p.buffers));
      return rows;
    }
  }
}

const EMPTY = new Uint8Array(0);

/**
 * Removes every key whose index time is <= the watermark (data and index entries) and returns the
 * removed [data key, value] pairs, values as they stand after this batch's updates.
 */
async function evict(
  store: ShardStore,
  watermark: number,
  known: (key: string) => Uint8Array | undefined,
  changes: ShardChange[],
  c: Counters,
): Promise<Array<[Uint8Array, Uint8Array]>> {
  const [gte, lt] = indexRangeUpTo(Math.floor(watermark));
  const index = await store.range(gte, lt);
  if (index.length === 0) return [];
  const data = index.map(([k]) => dataKeyOf(k));
  const unknown = data.filter((k) => known(keyString(k)) === undefined);
  const stored = await store.getMany(unknown);
  const read = new Map(unknown.map((k, i) => [keyString(k), stored[i]]));
  const removed: Array<[Uint8Array, Uint8Array]> = [];
  index.forEach(([ik], i) => {
    const dk = data[i] as Uint8Array;
    const k = keyString(dk);
    const value = known(k) ?? read.get(k);
    if (value === undefined) {
      // An index entry without data emits nothing, but must not be read again every batch.
      changes.push({ key: copy(ik), value: null, prior: EMPTY });
      return;
    }
    // A key updated in this batch had its prior recorded by the update; this prior is its new value.
    changes.push({ key: dk, value: null, prior: value });
    changes.push({ key: copy(ik), value: null, prior: EMPTY });
    removed.push([dk, value]);
    c.removed += 1;
    c.rowDelta -= 1;
  });
  return removed;
}

// ---- deduplication ----------------------------------------------------------------------------

async function deduplicate(
  task: StateTask,
  op: Exclude<StatefulOp, AggregateOp>,
  store: ShardStore,
  changes: ShardChange[],
  c: Counters,
): Promise<Row[]> {
  const watermark = watermarkOf(task);
  const first = new Map<string, DedupRecord>();
  for (const block of task.blocks) {
    for (const rec of decodeBlock<DedupRecord>(block.data)) {
      // Late records drop before deduplicating (Spark filters late rows first), so a late record of
      // a key from one map task cannot hide an on-time record of it from another
      // (dropDuplicatesWithinWatermark, whose key leaves the event time out).
      if (watermark !== undefined && rec[4] !== null && rec[4] <= watermark) {
        c.dropped += 1;
        continue;
      }
      const k = keyString(rec[1]);
      if (!first.has(k)) first.set(k, [rec[0], copy(rec[1]), rec[2], rec[3], rec[4]]);
    }
  }
  const live = [...first.values()];
  const keys = live.map((r) => dataKey(r[0], r[1]));
  const prior = await store.getMany(keys);
  const rows: Row[] = [];
  const touched = new Map<string, Uint8Array>();
  live.forEach((rec, i) => {
    if (prior[i]) return; // seen before: a duplicate
    const time = rec[4];
    // dropDuplicatesWithinWatermark keeps a key until its first event time plus the delay.
    const expiry = op.kind === 'dropDuplicatesWithinWatermark' && time !== null ? time + op.delayMs : time;
    const value = values.pack([rec[2], expiry]);
    changes.push({ key: keys[i] as Uint8Array, value, prior: null });
    if (expiry !== null && watermark !== undefined) {
      changes.push({ key: indexKey(expiry, rec[0], rec[1]), value: new Uint8Array(0), prior: null });
    }
    touched.set(keyString(keys[i] as Uint8Array), value);
    c.rowDelta += 1;
    rows.push(rec[3]);
  });
  c.updated = rows.length;
  if (watermark !== undefined) await evict(store, watermark, (k) => touched.get(k), changes, c);
  return rows;
}

/**
 * Closes the shards under `stateDir` (a query stopped); the next batch reopens them. Returns the
 * shards whose close failed, with the reason: a retry could not close them again (the registry
 * has let them go), so the driver reports them instead.
 */
export async function releaseShards(stateDir: string): Promise<Array<{ dir: string; error: string }>> {
  const dirs = shards.dirs().filter((d) => d.startsWith(stateDir + sep));
  for (const d of dirs) dropStateCache(d);
  const closed = await Promise.allSettled(dirs.map((d) => shards.close(d)));
  return closed.flatMap((r, i) =>
    r.status === 'rejected' ? [{ dir: dirs[i] as string, error: (r.reason as Error)?.message ?? String(r.reason) }] : [],
  );
}
