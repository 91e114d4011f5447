/**
 * What the `sluice checkpoint` commands do, as functions: inspecting a checkpoint, and running a
 * REPARTITION control batch on it without starting its query. Both take the checkpoint's lock
 * first, so a checkpoint in use is refused (CHECKPOINT_LOCKED).
 */
import { existsSync } from 'node:fs';
import { dataRange, decodeDataKey, movesBetween, openLevelShard, partitionOfKeyGroup, rangeInChunks, SluiceError, type ShardOptions } from '@sluice/state';
import { operatorNamed, rowsInOf } from '@sluice/executor';
import { BatchTransaction } from '../checkpoint/BatchTransaction.js';
import { CheckpointLock } from '../checkpoint/CheckpointLock.js';
import { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { CommitLog } from '../checkpoint/CommitLog.js';
import { OffsetLog } from '../checkpoint/OffsetLog.js';
import type { QueryMetadata } from '../checkpoint/QueryMetadata.js';
import { storedLayouts } from '../checkpoint/recovery.js';
import type { StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';
import { readVersioned } from '../checkpoint/versionedFile.js';
import { clock } from '../execution/clock.js';
import { nextBatch, type RunSettings } from '../execution/nextBatch.js';
import { runControlBatch, sameLayout, type RepartitionControl, type RepartitionHooks, type RepartitionResult } from '../execution/Repartition.js';

/** Small caches: the tool reads each shard once. */
const TOOL_STORE: ShardOptions = { cacheBytes: 8 << 20, writeBufferBytes: 4 << 20, maxOpenFiles: 200 };

export interface CheckpointReport {
  dir: string;
  queryId: string;
  createdAt: string;
  sources: Array<{ format: string; path?: string }>;
  lastBatch: { planned: number | null; kind: 'data' | 'control' | null; committed: number | null; uncommitted: boolean };
  /** Settings fixed at creation. */
  pinned: { keyHash?: string; keyGroups?: number };
  /** The first stateful operator's state (operators[0]). */
  state?: OperatorState;
  /** Every stateful operator's state, by operator id (a query that chains several has several). */
  operators?: OperatorState[];
}

export interface OperatorState {
  operatorId: number;
  /** The stateful operator's name (progress's operatorName), when the layout file records it. */
  operator?: string;
  layout: { partitions: number; shards: number; shardOfPartition: number[] };
  shards: Array<{ shard: number; partitions: number[]; rows: number; bytes: number; marker: number }>;
  partitions: Array<{ partition: number; shard: number; rows: number; bytes: number }>;
}

function withLock<T>(dir: string, fn: (paths: CheckpointPaths) => Promise<T>): Promise<T> {
  const paths = new CheckpointPaths(dir);
  if (!existsSync(paths.metadata)) {
    throw new SluiceError('PATH_NOT_FOUND', `${dir} is no Sluice checkpoint: it has no metadata file`, { file: paths.metadata });
  }
  const lock = CheckpointLock.acquire(paths.lock, dir);
  return fn(paths).finally(() => lock.release());
}

function metadataOf(paths: CheckpointPaths): QueryMetadata {
  return readVersioned<QueryMetadata>(paths.metadata, (v): v is QueryMetadata => typeof (v as QueryMetadata)?.id === 'string');
}

/** Rows and bytes of one operator's state, per shard and partition. */
async function inspectOperator(paths: CheckpointPaths, operatorId: number, layout: StateLayoutRecord): Promise<OperatorState> {
  const partitions = Array.from({ length: layout.partitions }, (_, partition) => ({
    partition,
    shard: layout.shardOfPartition[partition] as number,
    rows: 0,
    bytes: 0,
  }));
  const { rowsIn } = rowsInOf(operatorNamed(layout.operator));
  const shards = [];
  for (let shard = 0; shard < layout.shards; shard++) {
    const row = { shard, partitions: partitions.filter((p) => p.shard === shard).map((p) => p.partition), rows: 0, bytes: 0, marker: -1 };
    const dirOfShard = paths.shard(operatorId, shard);
    if (existsSync(dirOfShard)) {
      const store = await openLevelShard(dirOfShard, TOOL_STORE);
      try {
        row.marker = store.marker;
        const [gte, lt] = dataRange();
        for await (const chunk of rangeInChunks(store, gte, lt)) {
          for (const [k, v] of chunk) {
            const p = partitions[partitionOfKeyGroup(decodeDataKey(k).kg, layout)] as (typeof partitions)[number];
            const rows = rowsIn?.(v) ?? 1;
            p.rows += rows;
            p.bytes += k.length + v.length;
            row.rows += rows;
            row.bytes += k.length + v.length;
          }
        }
      } finally {
        await store.close();
      }
    }
    shards.push(row);
  }
  return {
    operatorId,
    ...(layout.operator !== undefined && { operator: layout.operator }),
    layout: { partitions: layout.partitions, shards: layout.shards, shardOfPartition: [...layout.shardOfPartition] },
    shards,
    partitions,
  };
}

/** Query id, last batch, pinned settings, the state layout, rows and bytes per shard and partition. */
export function inspectCheckpoint(dir: string): Promise<CheckpointReport> {
  return withLock(dir, async (paths) => {
    const meta = metadataOf(paths);
    const offsets = new OffsetLog(paths.offsets);
    const planned = offsets.getLatest();
    const committed = new CommitLog(paths.commits).latestId();
    const report: CheckpointReport = {
      dir,
      queryId: meta.id,
      createdAt: new Date(meta.createdAtMs).toISOString(),
      sources: meta.sources ?? [],
      lastBatch: {
        planned: planned?.batchId ?? null,
        kind: planned?.value.kind ?? null,
        committed: committed ?? null,
        uncommitted: planned !== undefined && planned.batchId !== committed,
      },
      pinned: { ...(meta.keyHash !== undefined && { keyHash: meta.keyHash }), keyGroups: meta.keyGroups ?? meta.stateLayout?.keyGroups },
    };
    // The layouts in force: the layout files, or the one an earlier Sluice pinned in metadata.
    const layouts = storedLayouts(paths, meta.stateLayout);
    if (layouts.length === 0) return report;
    const operators = [];
    for (const [id, l] of layouts.entries()) operators.push(await inspectOperator(paths, id, l));
    report.state = operators[0];
    report.operators = operators;
    return report;
  });
}

/** One control batch the tool ran: an unfinished one it finished, or the one the counts ask for. */
export interface OfflineRepartition extends RepartitionResult {
  batchId: number;
  /** The stateful operator whose state moved (0: the first). */
  operatorId: number;
  from: { partitions: number; shards: number };
  to: { partitions: number; shards: number };
  durationMs: number;
}

export interface RepartitionOptions extends RepartitionHooks {
  /** Log entries kept (sluice.sql.streaming.minBatchesToRetain of the query; default 100, as the conf's). */
  minBatchesToRetain?: number;
  /** Told, before each control batch, how to estimate the rows it moves (for a progress bar: it opens each shard). */
  onPlan?(estimate: () => Promise<number>): void | Promise<void>;
}

/**
 * Runs the REPARTITION control batches that a start with these counts would run, without the
 * query, through the same decision (nextBatch) and batch transaction as the query: an unfinished
 * one is finished first, then one moves the state to the counts asked for (`shards` left out
 * keeps the state's). A state that has these counts already runs none (no batches). The
 * last data batch must have committed: only the query can replay it.
 */
export function repartitionCheckpoint(
  dir: string,
  partitions: number,
  shards: number | undefined,
  options: RepartitionOptions = {},
): Promise<{ batches: OfflineRepartition[]; layout: { partitions: number; shards: number } }> {
  return withLock(dir, async (paths) => {
    const meta = metadataOf(paths);
    // The layout files only: a layout an earlier Sluice pinned in metadata is refused.
    const layouts = storedLayouts(paths, undefined);
    if (layouts.length === 0) {
      throw new SluiceError(
        'CHECKPOINT_INCOMPATIBLE',
        meta.stateLayout
          ? `checkpoint ${dir} was written by an earlier Sluice: start its query once, which moves its state layout into ${paths.stateLayout(0)}`
          : `checkpoint ${dir} belongs to a stateless query: it has no state to repartition`,
        { file: paths.stateLayout(0) },
      );
    }
    // Every operator's state has the checkpoint's key groups.
    const keyGroups = Math.min(...layouts.map((layout) => layout.keyGroups));
    if (partitions < 1 || partitions > keyGroups || (shards !== undefined && shards < 1)) {
      throw new SluiceError('INVALID_OPTION', `--partitions must be from 1 to ${keyGroups} and --shards at least 1`, { option: 'partitions' });
    }
    const txn = new BatchTransaction(paths, { retain: options.minBatchesToRetain ?? 100 }, { ...BatchTransaction.readTail(paths), layouts });
    // Every operator's state moves, the first's then each one after it (nextBatch), from the layouts in the transaction's tail.
    const settings: RunSettings = { numSources: meta.numSources, state: { partitions, shards, slots: 1 }, runsNoDataBatches: false, usesWatermark: false };
    const ran: OfflineRepartition[] = [];
    for (let step = nextBatch(txn.tail, settings); step.kind !== 'poll'; step = nextBatch(txn.tail, settings)) {
      if (step.kind !== 'control') {
        const batchId = txn.tail.last?.batchId as number;
        throw new SluiceError(
          'UNRESUMABLE_CONTROL_BATCH',
          `checkpoint ${dir} ends with batch ${batchId}, which did not commit: start the query once to finish it, then repartition`,
          { file: txn.offsets.pathOf(batchId) },
        );
      }
      const t0 = clock.now();
      const { control } = step;
      const { from, to } = control;
      const current = txn.tail.layouts[control.operatorId] ?? from;
      // Once the copy has committed (the layout file holds the new layout) only the clean-up is left.
      await options.onPlan?.(async () => (sameLayout(current, to) ? 0 : rowsToMove(paths, control)));
      const result = await runControlBatch(txn, step, meta.numSources, TOOL_STORE, { ...options, ...rowsInOf(operatorNamed(current.operator)) });
      ran.push({
        numKeyGroupsMoved: result.numKeyGroupsMoved,
        numRowsMoved: result.numRowsMoved,
        numBytesMoved: result.numBytesMoved,
        touchedShards: result.touchedShards,
        batchId: step.batchId,
        operatorId: control.operatorId,
        from: { partitions: from.partitions, shards: from.shards },
        to: { partitions: to.partitions, shards: to.shards },
        durationMs: clock.now() - t0,
      });
    }
    await txn.settled(); // the last batch's purge
    // The command reports the first operator's counts, as it did before queries had several.
    const { partitions: p, shards: n } = txn.tail.layouts[0] as StateLayoutRecord;
    return { batches: ran, layout: { partitions: p, shards: n } };
  });
}

/** An estimate of the rows a repartition moves, for a progress bar: rows of shards by moved share. */
async function rowsToMove(paths: CheckpointPaths, control: RepartitionControl): Promise<number> {
  const { moves } = movesBetween(control.from, control.to);
  let total = 0;
  for (let shard = 0; shard < control.from.shards; shard++) {
    const moved = moves.filter((m) => m.from === shard).reduce((k, m) => k + m.kgEnd - m.kgStart, 0);
    if (moved === 0 || !existsSync(paths.shard(control.operatorId, shard))) continue;
    const held = control.from.shardOfPartition.filter((s) => s === shard).length / control.from.partitions;
    const store = await openLevelShard(paths.shard(control.operatorId, shard), TOOL_STORE);
    total += Math.round((store.numRows * moved) / Math.max(1, held * control.from.keyGroups));
    await store.close();
  }
  return total;
}
