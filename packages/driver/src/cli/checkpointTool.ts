/**
 * What the `sluice checkpoint` commands do, as functions: inspecting a checkpoint, and running a
 * REPARTITION control batch on it without starting its query. Both take the checkpoint's lock
 * first, so a checkpoint in use is refused (CHECKPOINT_LOCKED).
 */
import { existsSync } from 'node:fs';
import {
  dataRange,
  decodeDataKey,
  movesBetween,
  openLevelShard,
  partitionOfKeyGroup,
  planRepartition,
  rangeInChunks,
  SluiceError,
  type ShardOptions,
} from '@sluice/state';
import { CheckpointLock } from '../checkpoint/CheckpointLock.js';
import { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { CommitLog } from '../checkpoint/CommitLog.js';
import { OffsetLog } from '../checkpoint/OffsetLog.js';
import type { QueryMetadata } from '../checkpoint/QueryMetadata.js';
import { readRecovery } from '../checkpoint/recovery.js';
import { contiguousLayout, readStateLayout, type StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';
import { readVersioned } from '../checkpoint/versionedFile.js';
import {
  checkResumable,
  isRepartition,
  markersAfter,
  repartitionCommit,
  repartitionEntry,
  runRepartition,
  sameLayout,
  type RepartitionControl,
  type RepartitionHooks,
  type RepartitionResult,
} from '../execution/Repartition.js';

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
  state?: {
    layout: { partitions: number; shards: number; shardOfPartition: number[] };
    shards: Array<{ shard: number; partitions: number[]; rows: number; bytes: number; marker: number }>;
    partitions: Array<{ partition: number; shard: number; rows: number; bytes: number }>;
  };
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

/** The layout in force: the layout file, or the one an earlier Sluice pinned in metadata. */
function layoutOf(paths: CheckpointPaths, meta: QueryMetadata): StateLayoutRecord | undefined {
  return readStateLayout(paths.stateLayout(0)) ?? (meta.stateLayout && contiguousLayout(meta.stateLayout));
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
    const layout = layoutOf(paths, meta);
    if (!layout) return report;
    const partitions = Array.from({ length: layout.partitions }, (_, partition) => ({
      partition,
      shard: layout.shardOfPartition[partition] as number,
      rows: 0,
      bytes: 0,
    }));
    const shards = [];
    for (let shard = 0; shard < layout.shards; shard++) {
      const row = { shard, partitions: partitions.filter((p) => p.shard === shard).map((p) => p.partition), rows: 0, bytes: 0, marker: -1 };
      const dirOfShard = paths.shard(0, shard);
      if (existsSync(dirOfShard)) {
        const store = await openLevelShard(dirOfShard, TOOL_STORE);
        try {
          row.marker = store.marker;
          const [gte, lt] = dataRange();
          for await (const chunk of rangeInChunks(store, gte, lt)) {
            for (const [k, v] of chunk) {
              const p = partitions[partitionOfKeyGroup(decodeDataKey(k).kg, layout)] as (typeof partitions)[number];
              p.rows += 1;
              p.bytes += k.length + v.length;
              row.rows += 1;
              row.bytes += k.length + v.length;
            }
          }
        } finally {
          await store.close();
        }
      }
      shards.push(row);
    }
    report.state = { layout: { partitions: layout.partitions, shards: layout.shards, shardOfPartition: [...layout.shardOfPartition] }, shards, partitions };
    return report;
  });
}

export interface OfflineRepartition extends RepartitionResult {
  batchId: number;
  from: { partitions: number; shards: number };
  to: { partitions: number; shards: number };
  durationMs: number;
}

/**
 * Runs the REPARTITION control batch that a start with these counts would run (or finishes an
 * unfinished one), without the query. The last data batch must have committed: only the query
 * can replay it.
 */
export function repartitionCheckpoint(
  dir: string,
  partitions: number,
  shards: number | undefined,
  hooks: RepartitionHooks & { onPlan?(totalRows: number): void } = {},
): Promise<OfflineRepartition> {
  return withLock(dir, async (paths) => {
    const t0 = Date.now();
    const meta = metadataOf(paths);
    const current = readStateLayout(paths.stateLayout(0));
    if (!current) {
      throw new SluiceError(
        'CHECKPOINT_INCOMPATIBLE',
        meta.stateLayout
          ? `checkpoint ${dir} was written by an earlier Sluice: start its query once, which moves its state layout into ${paths.stateLayout(0)}`
          : `checkpoint ${dir} belongs to a stateless query: it has no state to repartition`,
        { file: paths.stateLayout(0) },
      );
    }
    if (partitions < 1 || partitions > current.keyGroups || (shards !== undefined && shards < 1)) {
      throw new SluiceError('INVALID_OPTION', `--partitions must be from 1 to ${current.keyGroups} and --shards at least 1`, { option: 'partitions' });
    }
    const offsetLog = new OffsetLog(paths.offsets);
    const commitLog = new CommitLog(paths.commits);
    const { decision, lastCommit: commit } = readRecovery(offsetLog, commitLog);
    if (decision.kind === 'replay') {
      throw new SluiceError(
        'UNRESUMABLE_CONTROL_BATCH',
        `checkpoint ${dir} ends with batch ${decision.batch.batchId}, which did not commit: start the query once to finish it, then repartition`,
        { file: offsetLog.pathOf(decision.batch.batchId) },
      );
    }
    const counts = { keyGroups: current.keyGroups, partitions, shards: Math.min(shards ?? current.shards, partitions) };
    let control: RepartitionControl;
    let batchId: number;
    if (decision.kind === 'resumeControl') {
      const pending = decision.batch.control;
      const file = offsetLog.pathOf(decision.batch.batchId);
      if (!isRepartition(pending)) {
        throw new SluiceError('UNRESUMABLE_CONTROL_BATCH', `batch ${decision.batch.batchId} is an unfinished ${pending.type} control batch, which this tool cannot finish`, { file });
      }
      // --shards left out finishes the repartition as planned, as a start with neither count set does.
      const asked = { partitions, shards: Math.min(shards ?? pending.to.shards, partitions) };
      checkResumable(decision.batch.batchId, pending, asked, {
        file,
        option: 'partitions',
        finishWith: (to) => `run with --partitions ${to.partitions} --shards ${to.shards} to finish it first`,
      });
      control = pending;
      batchId = decision.batch.batchId;
    } else {
      if (counts.partitions === current.partitions && counts.shards === current.shards) {
        throw new SluiceError('INVALID_OPTION', `the state already has ${current.partitions} partitions in ${current.shards} shards`, { option: 'partitions' });
      }
      control = { type: 'REPARTITION', operatorId: 0, from: current, to: planRepartition(current, counts).layout };
      batchId = decision.kind === 'resume' ? decision.last.batchId + 1 : 0;
      const last = decision.kind === 'resume' ? decision.last : { offsets: [], batchWatermarkMs: 0 };
      offsetLog.add(batchId, repartitionEntry(batchId, control, last));
    }
    // Once the copy has committed (the layout file holds the new layout) only the clean-up is left.
    hooks.onPlan?.(sameLayout(current, control.to) ? 0 : await rowsToMove(paths, control));
    const result = await runRepartition(paths, control, batchId, TOOL_STORE, hooks);
    const before = Array.from({ length: control.from.shards }, (_, s) => commit?.stateShardMarkers?.[s] ?? null);
    const markers = markersAfter(result, control.to, before, batchId);
    commitLog.add(batchId, repartitionCommit(markers, commit?.nextBatchWatermarkMs ?? 0));
    return {
      ...result,
      batchId,
      from: { partitions: control.from.partitions, shards: control.from.shards },
      to: { partitions: control.to.partitions, shards: control.to.shards },
      durationMs: Date.now() - t0,
    };
  });
}

/** An estimate of the rows a repartition moves, for a progress bar: rows of shards by moved share. */
async function rowsToMove(paths: CheckpointPaths, control: RepartitionControl): Promise<number> {
  const { moves } = movesBetween(control.from, control.to);
  let total = 0;
  for (let shard = 0; shard < control.from.shards; shard++) {
    const moved = moves.filter((m) => m.from === shard).reduce((k, m) => k + m.kgEnd - m.kgStart, 0);
    if (moved === 0 || !existsSync(paths.shard(0, shard))) continue;
    const held = control.from.shardOfPartition.filter((s) => s === shard).length / control.from.partitions;
    const store = await openLevelShard(paths.shard(0, shard), TOOL_STORE);
    total += Math.round((store.numRows * moved) / Math.max(1, held * control.from.keyGroups));
    await store.close();
  }
  return total;
}
