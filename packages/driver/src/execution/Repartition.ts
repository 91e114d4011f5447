/**
 * The REPARTITION control batch: moves a stateful operator's state from one layout to another
 * (docs/guides/repartitioning.md). It runs in the calling thread (the driver, or the `sluice` CLI) on shards that no
 * task holds open, and may be resumed after a crash at any point:
 *
 * 1. Copy the key-group ranges whose shard changes (planRepartition) into their new shards,
 *    clearing each target range first, so that copying again is harmless.
 * 2. Replace the layout file with the new layout: the commit point.
 * 3. Garbage-collect: delete the moved ranges from the shards that gave them, and the directories
 *    of shards the new layout no longer has; deleting again is harmless.
 * 4. Shards that gave or received drop their undo records and take the control batch's id as
 *    their marker; a shard that neither gave nor received is not written at all.
 *
 * The phase is read from the layout file: the old layout means the copy had not committed (copy
 * again), the new one that it had (never copy again: finish the clean-up).
 */
import { existsSync, rmSync } from 'node:fs';
import {
  clearKeyGroups,
  copyKeyGroups,
  fault,
  movesBetween,
  openLevelShard,
  SluiceError,
  type IndexTimeOf,
  type RowsIn,
  type KeyGroupRange,
  type KnownKeys,
  type ShardOptions,
  type ShardStore,
} from '@sluice/state';
import type { BatchTimings, BatchTransaction } from '../checkpoint/BatchTransaction.js';
import type { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import type { CommitMetadata } from '../checkpoint/CommitLog.js';
import type { ControlOffsetSeq, ControlPayload, OffsetSeq } from '../checkpoint/OffsetLog.js';
import { layoutCounts, readStateLayout, writeStateLayout, type StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';
import { clock } from './clock.js';

export interface RepartitionControl extends ControlPayload {
  type: 'REPARTITION';
  operatorId: number;
  from: StateLayoutRecord;
  to: StateLayoutRecord;
}

export function isRepartition(c: ControlPayload): c is RepartitionControl {
  return c.type === 'REPARTITION' && typeof c.from === 'object' && typeof c.to === 'object';
}

export interface RepartitionResult {
  numKeyGroupsMoved: number;
  /** Rows and bytes this run copied (none when it only finished the clean-up of an earlier one). */
  numRowsMoved: number;
  numBytesMoved: number;
  /** Shards that gave or received key groups: their marker is now the control batch's id. */
  touchedShards: number[];
}

export interface RepartitionHooks {
  /** Told of each chunk of rows copied, out of `total` key groups to move. */
  onRows?(rows: number): void;
  /** The operator's index time of a stored row (executor's indexTimeOf): the copy then needs no scan of the index. */
  indexTimeOf?: IndexTimeOf;
  /** The rows a stored value holds, for an operator that keeps several in one (executor's stateRowsIn). */
  rowsIn?: RowsIn;
  /** Called between chunks; throwing stops the repartition there (it resumes at the next start). */
  checkpoint?(): void;
}

export function sameLayout(a: StateLayoutRecord, b: StateLayoutRecord): boolean {
  return (
    a.keyGroups === b.keyGroups && a.partitions === b.partitions && a.shards === b.shards && a.shardOfPartition.every((s, p) => s === b.shardOfPartition[p])
  );
}

/** The offsets entry of a REPARTITION control batch after the batch before it, whose ends and watermark it repeats. */
export function repartitionEntry(batchId: number, control: RepartitionControl, last: OffsetSeq | undefined, numSources: number): ControlOffsetSeq {
  return {
    batchId,
    kind: 'control',
    control,
    batchTimestampMs: clock.now(),
    batchWatermarkMs: last?.batchWatermarkMs ?? 0,
    offsets: last ? [...last.offsets] : Array.from({ length: numSources }, () => null),
    conf: layoutCounts(control.from),
  };
}

/**
 * The shard markers a commit records, by operator id (empty: none, a commit of an earlier Sluice
 * or of a stateless query). A commit of the older form was read into `shardMarkers` (recovery.ts's commitOf).
 */
export function allShardMarkers(commit: CommitMetadata | undefined): Array<number[] | undefined> {
  return commit?.shardMarkers?.map((m) => m ?? undefined) ?? [];
}

/** The shard markers a commit records for operator `operatorId` (none: a commit of an earlier Sluice). */
export function shardMarkersOf(commit: CommitMetadata | undefined, operatorId: number): number[] | undefined {
  return allShardMarkers(commit)[operatorId];
}

/**
 * The commit entry of a REPARTITION control batch of operator `operatorId`: the watermark
 * unchanged, that operator's shards' new markers, the other operators' as the last commit had them.
 */
export function repartitionCommit(last: CommitMetadata | undefined, operatorId: number, markers: Array<number | null>): CommitMetadata {
  const known = markers.every((m) => m !== null) ? (markers as number[]) : undefined;
  const all = [...allShardMarkers(last)];
  all[operatorId] = known;
  const shardMarkers = Array.from(all, (m) => m ?? null);
  return {
    nextBatchWatermarkMs: last?.nextBatchWatermarkMs ?? 0,
    ...(last?.nextWakeMs !== undefined && { nextWakeMs: last.nextWakeMs }),
    ...(shardMarkers.some((m) => m !== null) && { shardMarkers }),
  };
}

export interface ControlBatchHooks extends RepartitionHooks {
  /** Before the move, once the entry is written: the query closes its shards in the workers. */
  beforeMove?(): Promise<void>;
}

/**
 * Runs the REPARTITION control batch `batchId` (new, or the unfinished `entry`) through the
 * transaction: the move, the sink's log of the batch id, and its commit with each shard's marker
 * (markersAfter) under the watermark of the last commit.
 */
export async function runControlBatch(
  txn: BatchTransaction,
  step: { batchId: number; control: RepartitionControl; entry?: ControlOffsetSeq },
  numSources: number,
  storeOptions: ShardOptions,
  hooks: ControlBatchHooks = {},
): Promise<RepartitionResult & BatchTimings> {
  const { batchId, control } = step;
  const { last, commit, layouts } = txn.tail;
  let result: RepartitionResult | undefined;
  const timings = await txn.run(step.entry ?? repartitionEntry(batchId, control, last, numSources), async () => {
    await hooks.beforeMove?.();
    result = await runRepartition(txn.paths, control, batchId, storeOptions, hooks);
    const prior = shardMarkersOf(commit, control.operatorId);
    const before = Array.from({ length: control.from.shards }, (_, s) => prior?.[s] ?? null);
    return {
      commit: repartitionCommit(commit, control.operatorId, markersAfter(result, control.to, before, batchId)),
      // The moved operator's layout is the one it moved to, under its name, as its layout file holds it now.
      layouts: layouts.map((layout, operatorId) =>
        operatorId === control.operatorId ? { ...control.to, ...(layout.operator !== undefined && { operator: layout.operator }) } : layout,
      ),
    };
  });
  return { ...(result as RepartitionResult), ...timings };
}

/** Runs, or resumes, the repartition of control batch `batchId`. */
export async function runRepartition(
  paths: CheckpointPaths,
  control: RepartitionControl,
  batchId: number,
  storeOptions: ShardOptions,
  hooks: RepartitionHooks = {},
): Promise<RepartitionResult> {
  const { from, to, operatorId } = control;
  const layoutPath = paths.stateLayout(operatorId);
  const current = readStateLayout(layoutPath);
  const { moves, touchedShards, numKeyGroupsMoved } = movesBetween(from, to);
  const copyDone = current !== undefined && sameLayout(current, to);
  if (!copyDone && !(current && sameLayout(current, from))) {
    throw new SluiceError(
      'STATE_STORE_CORRUPT',
      `state layout file ${layoutPath} is neither the layout a repartition left (${from.partitions} partitions, ${from.shards} shards) nor the one it goes to (${to.partitions}, ${to.shards})`,
      { file: layoutPath },
    );
  }
  hooks.checkpoint?.();
  // Each shard opened once, whichever move asks first (the moves out of different shards run at once).
  const stores = new Map<number, Promise<ShardStore>>();
  const store = (shard: number): Promise<ShardStore> => {
    let s = stores.get(shard);
    if (!s) {
      s = openLevelShard(paths.shard(operatorId, shard), storeOptions);
      stores.set(shard, s);
    }
    return s;
  };
  const rangesOf = (pick: (m: (typeof moves)[number]) => boolean): KeyGroupRange[] => moves.filter(pick).map((m) => [m.kgStart, m.kgEnd] as const);
  let numRowsMoved = 0;
  let numBytesMoved = 0;
  // The keys each giving shard's copies read, so that its clean-up need not scan again.
  const found = new Map<number, KnownKeys>();
  try {
    const givers = [...new Set(moves.map((m) => m.from))];
    if (!copyDone) {
      // The moves out of each giving shard at once: their key groups, and so their writes, never meet.
      await settleAll(
        givers.map(async (a) => {
          const targets = [];
          for (const b of new Set(moves.filter((m) => m.from === a).map((m) => m.to))) {
            targets.push({ to: await store(b), ranges: rangesOf((m) => m.from === a && m.to === b) });
          }
          const copied = await copyKeyGroups(
            await store(a),
            targets,
            (rows) => {
              if (rows > 0) hooks.onRows?.(rows);
              hooks.checkpoint?.();
            },
            hooks.indexTimeOf,
            hooks.rowsIn,
          );
          numRowsMoved += copied.rows;
          numBytesMoved += copied.bytes;
          found.set(a, copied.sourceKeys);
        }),
      );
      hooks.checkpoint?.();
      writeStateLayout(layoutPath, { ...to, ...(current?.operator !== undefined && { operator: current.operator }) });
      fault('repartition-after-layout-commit');
    }
    await settleAll(
      givers
        .filter((shard) => shard < to.shards) // a vanished shard's whole directory goes below
        .map(async (shard) => {
          await clearKeyGroups(
            await store(shard),
            rangesOf((m) => m.from === shard),
            'repartition-mid-gc',
            found.get(shard),
            hooks.rowsIn,
          );
          hooks.checkpoint?.();
        }),
    );
    for (let shard = to.shards; shard < from.shards; shard++) {
      const dir = paths.shard(operatorId, shard);
      await (await stores.get(shard))?.close();
      stores.delete(shard);
      if (existsSync(dir)) {
        fault('repartition-mid-gc');
        rmSync(dir, { recursive: true, force: true });
      }
    }
    for (const shard of touchedShards) if (shard < to.shards) await (await store(shard)).resetMarker(batchId);
  } finally {
    await Promise.allSettled([...stores.values()].map(async (s) => (await s).close()));
  }
  return { numKeyGroupsMoved, numRowsMoved, numBytesMoved, touchedShards };
}

/** Waits for every one of `work` (none is left running), then throws the first failure, if any. */
async function settleAll(work: Array<Promise<void>>): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * The batch each shard of `to` last committed after the control batch `batchId`: touched shards
 * are at `batchId`; the others keep what they had (a shard that never held anything: -1).
 */
function markersAfter(result: RepartitionResult, to: StateLayoutRecord, before: ReadonlyArray<number | null>, batchId: number): Array<number | null> {
  return Array.from({ length: to.shards }, (_, shard) =>
    result.touchedShards.includes(shard) ? batchId : shard < before.length ? (before[shard] ?? null) : -1,
  );
}
