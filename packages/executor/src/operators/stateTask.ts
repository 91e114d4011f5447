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
import {
  dataKey,
  dataKeyOf,
  encodeDedupValue,
  indexKey,
  indexRangeUpTo,
  openLevelShard,
  ShardRegistry,
  SluiceError,
  workerFault,
  type ShardChange,
  type ShardStore,
} from '@sluice/state';
import { statefulOutputSchema } from './aggregates.js';
import { cellLayoutOf } from './aggCells.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { dropStateCache, keyString, stateCache, type StateCache } from './stateCache.js';
import { aggregateCells, ChangeStream } from './compactAggregate.js';
import type { StateOperatorMetrics, StateResult, StateTask } from '../task/messages.js';
import { decodeBlock, type DedupRecord } from '../shuffle/shuffleCodec.js';
import { compileStages, runStages } from '../task/stages.js';
import { loadMapSideUdfs, streamPartials } from './mapSide.js';
import { deliver } from '../task/taskOutput.js';
import { symmetricHashJoin } from './streamJoin.js';
import { processorWakeMs, transformWithState, type ProcessorMetrics } from './transformWithState.js';
import { sessionAggregate, sessionKeyOf } from './sessionWindow.js';
import { operatorUsesWatermark } from './watermark.js';
import type { StatefulOp } from './types.js';
import type { Row } from '../schema/types.js';

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

/**
 * State values: an aggregation's in aggBufferCodec.ts's encoding, a session window's in
 * sessionWindow.ts, a deduplication's in @sluice/state's dedupState.ts, a join's in streamJoin.ts,
 * a processor's in processorState.ts.
 */

interface Counters {
  updated: number;
  removed: number;
  dropped: number;
  rowDelta: number;
}

const copy = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

export async function runStateTask(task: StateTask, udfs: UdfRegistry): Promise<StateResult> {
  const result = await shards.use(task.shardDir, task.storeOptions, task.workerBudget, (store) => runOnOpenShard(task, store, udfs));
  workerFault('worker-after-state-commit');
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
  const out = new ChangeStream(store, task.batchId);
  let processor: ProcessorMetrics | undefined;
  const emitted =
    op.kind === 'transformWithState'
      ? await transformWithState(task, op, store, cache, changes, counters).then((r) => {
          processor = r.metrics;
          return r.rows;
        })
      : op.kind === 'aggregate'
        ? sessionKeyOf(op) >= 0
          ? await sessionAggregate(task, op, store, watermarkOf(task), out, counters)
          : await aggregateCells(task, op, cellLayoutOf(op, task.stateInputSchema), store, cache, watermarkOf(task), out, counters)
        : op.kind === 'streamJoin'
          ? await symmetricHashJoin(task, op, store, cache, watermarkOf(task), changes, counters, udfs)
          : await deduplicate(task, op, store, changes, counters);
  await out.add(changes);

  const post = await compileStages(schema, task.post, udfs);
  const { rows } = runStages(post, emitted);
  // A stateful operator after this one: its map side runs here, on the rows this one emits.
  if (task.next) await loadMapSideUdfs(task.next.stateful, udfs);
  const next = task.next && streamPartials(task.next.stateful, post.outputSchema, task.next.layout, udfs, task.next.lateThresholdMs, task.next.joinSide);
  if (next) for (const row of rows) next.add(row);
  const partials = next?.finish();
  const committed = await out.finish(counters.rowDelta, task.pruneUndoBelow);
  const commitTimeMs = committed === undefined ? 0 : Math.round(committed.commitTimeMs);
  const state: StateOperatorMetrics = {
    numRowsTotal: store.numRows,
    numRowsUpdated: counters.updated,
    numRowsRemoved: counters.removed,
    numRowsDroppedByWatermark: counters.dropped,
    // What the operator's state holds in this shard, not what the shard was allotted.
    memoryUsedBytes: (await store.stateBytes()) + cache.memoryUsedBytes,
    commitTimeMs,
    ...(processor && { customMetrics: { ...processor } }),
  };
  const wake = op.kind === 'transformWithState' ? await processorWakeMs(store, op) : undefined;
  const base: Omit<StateResult, 'stateStores'> = {
    ok: true,
    kind: 'state',
    threadId,
    numOutputRows: rows.length,
    state,
    shardMarker: store.marker,
    ...(wake !== undefined && { nextWakeMs: wake }),
  };
  if (partials) return { ...base, blocks: partials.blocks, ...(partials.numLate > 0 && { numLateRows: partials.numLate }) };
  return deliver(base, task.output, rows, post.outputSchema);
}

/** The batch's watermark when the operator uses it (drops late keys, evicts), else undefined. */
function watermarkOf(task: StateTask): number | undefined {
  return operatorUsesWatermark(task.stateful, task.hasWatermark, task.outputMode) ? task.watermarkMs : undefined;
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
  op: Extract<StatefulOp, { kind: 'dropDuplicates' | 'dropDuplicatesWithinWatermark' }>,
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
      if (watermark !== undefined && rec[3] !== null && rec[3] <= (task.lateWatermarkMs ?? watermark)) {
        c.dropped += 1;
        continue;
      }
      const k = keyString(rec[1]);
      if (!first.has(k)) first.set(k, [rec[0], copy(rec[1]), rec[2], rec[3]]);
    }
  }
  const live = [...first.values()];
  const keys = live.map((r) => dataKey(r[0], r[1]));
  const prior = await store.getMany(keys);
  const rows: Row[] = [];
  const touched = new Map<string, Uint8Array>();
  live.forEach((rec, i) => {
    if (prior[i]) return; // seen before: a duplicate
    const time = rec[3];
    // dropDuplicatesWithinWatermark keeps a key until its first event time plus the delay.
    const expiry = op.kind === 'dropDuplicatesWithinWatermark' && time !== null ? time + op.delayMs : time;
    if (watermark !== undefined && expiry !== null && expiry <= watermark) {
      // Already expired (late rows drop by the batch before's watermark, an operator after
      // another): emitted, and never stored.
      c.removed += 1;
      rows.push(rec[2]);
      return;
    }
    const value = encodeDedupValue(expiry);
    changes.push({ key: keys[i] as Uint8Array, value, prior: null });
    if (expiry !== null && watermark !== undefined) {
      changes.push({ key: indexKey(expiry, rec[0], rec[1]), value: new Uint8Array(0), prior: null });
    }
    touched.set(keyString(keys[i] as Uint8Array), value);
    c.rowDelta += 1;
    rows.push(rec[2]);
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
  // The query stopped: its shards settle, so that LevelDB holds every commit when the next open comes.
  const closed = await Promise.allSettled(dirs.map((d) => shards.close(d, { settle: true })));
  return closed.flatMap((r, i) => (r.status === 'rejected' ? [{ dir: dirs[i] as string, error: (r.reason as Error)?.message ?? String(r.reason) }] : []));
}
