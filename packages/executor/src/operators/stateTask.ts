/**
 * Reduce side of a stateful batch (StateTask in messages.ts), run on the slot that owns the shard,
 * the same for every operator kind (its task part, tasks.ts):
 *
 * 1. Roll back an earlier attempt at this batch (the shard's marker is this batch), so every
 *    attempt, a retry or a replay after a restart, starts from the state before it; check the
 *    marker against the commit log's.
 * 2. Run the kind's batch on a StateContext (stateContext.ts): it merges the shuffle blocks per
 *    key, drops late keys, reads and updates their state, and evicts what the watermark has passed
 *    through the shard's time index (the cost is what is evicted, not the total state); its
 *    writer records every change's undo prior.
 * 3. Run the operators after the stateful one (and the map side of a stateful operator after it),
 *    commit the shard once (changes, undo record and marker in one synced batch), then deliver
 *    the rows.
 */
import { sep } from 'node:path';
import { threadId } from 'node:worker_threads';
import { inShard, openLevelShard, ShardRegistry, SluiceError, workerFault, type ShardStore } from '@sluice/state';
import type { UdfRegistry } from '../expressions/udfs.js';
import { dropStateCache, stateCache, type StateCache } from './stateCache.js';
import type { StateOperatorMetrics, StateResult, StateTask } from '../task/messages.js';
import { compileStages, runStages } from '../task/stages.js';
import { deliver } from '../task/taskOutput.js';
import { operatorUsesWatermark, statefulOutputSchema } from './registry.js';
import { loadMapSideUdfs, streamPartials, taskOf } from './tasks.js';
import { StateContext } from './stateContext.js';

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
    throw inShard(e, task.shardDir);
  }
}

async function runOnShard(task: StateTask, store: ShardStore, cache: StateCache, udfs: UdfRegistry): Promise<Omit<StateResult, 'stateStores'>> {
  const op = task.stateful;
  const kind = taskOf(op);
  const usesWatermark = operatorUsesWatermark(op, task.hasWatermark, task.outputMode);
  const ctx = new StateContext(task, store, cache, udfs, usesWatermark ? task.watermarkMs : undefined);
  const emitted = await kind.run(ctx, op);
  // Over its budget the decoded cache goes whole (LevelDB holds every key it had).
  cache.settle();

  const post = await compileStages(statefulOutputSchema(op, task.stateInputSchema), task.post, udfs);
  const { rows } = runStages(post, emitted);
  // A stateful operator after this one: its map side runs here, on the rows this one emits.
  if (task.next) await loadMapSideUdfs(task.next.stateful, udfs);
  const next = task.next && streamPartials(task.next.stateful, post.outputSchema, task.next.layout, udfs, task.next.lateThresholdMs, task.next.joinSide);
  if (next) for (const row of rows) next.add(row);
  const partials = next?.finish();
  const c = ctx.counters;
  const committed = await ctx.writer.finish(c.rowDelta, task.pruneUndoBelow);
  const commitTimeMs = committed === undefined ? 0 : Math.round(committed.commitTimeMs);
  const state: StateOperatorMetrics = {
    numRowsTotal: store.numRows,
    numRowsUpdated: c.updated,
    numRowsRemoved: c.removed,
    numRowsDroppedByWatermark: c.dropped,
    // What the operator's state holds in this shard, not what the shard was allotted.
    memoryUsedBytes: (await store.stateBytes()) + cache.memoryUsedBytes,
    commitTimeMs,
    ...(ctx.customMetrics && { customMetrics: ctx.customMetrics }),
  };
  const wake = await kind.wakeMs?.(store, op);
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
