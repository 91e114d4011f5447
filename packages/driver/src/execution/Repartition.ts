/**
 * The REPARTITION control batch: moves a stateful operator's state from one layout to another
 * (DESIGN §5). It runs in the calling thread (the driver, or the `sluice` CLI) on shards that no
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
  CONF_KEYS,
  copyKeyGroups,
  fault,
  movesBetween,
  openLevelShard,
  SluiceError,
  type KeyGroupRange,
  type ShardOptions,
  type ShardStore,
} from '@sluice/state';
import type { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import type { CommitMetadata } from '../checkpoint/CommitLog.js';
import type { ControlOffsetSeq, ControlPayload } from '../checkpoint/OffsetLog.js';
import { layoutCounts, readStateLayout, writeStateLayout, type StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';

export interface RepartitionControl extends ControlPayload {
  type: 'REPARTITION';
  operatorId: number;
  from: StateLayoutRecord;
  to: StateLayoutRecord;
}

export function isRepartition(c: ControlPayload): c is RepartitionControl {
  return c.type === 'REPARTITION' && typeof c['from'] === 'object' && typeof c['to'] === 'object';
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
  /** Called between chunks; throwing stops the repartition there (it resumes at the next start). */
  checkpoint?(): void;
}

const K = CONF_KEYS;

export function sameLayout(a: StateLayoutRecord, b: StateLayoutRecord): boolean {
  return (
    a.keyGroups === b.keyGroups &&
    a.partitions === b.partitions &&
    a.shards === b.shards &&
    a.shardOfPartition.every((s, p) => s === b.shardOfPartition[p])
  );
}

/**
 * Whether the unfinished repartition `control` may be finished with the counts `asked`: only the
 * layout it goes to may be asked for; another would need a second repartition before the first is
 * done (UNRESUMABLE_CONTROL_BATCH, naming the option and saying how to finish it).
 */
export function checkResumable(
  batchId: number,
  control: RepartitionControl,
  asked: { partitions: number; shards: number },
  refusal: { file: string; option: string; finishWith(to: StateLayoutRecord): string },
): void {
  const to = control.to;
  if (asked.partitions === to.partitions && asked.shards === to.shards) return;
  throw new SluiceError(
    'UNRESUMABLE_CONTROL_BATCH',
    `batch ${batchId} is an unfinished repartition to ${to.partitions} partitions in ${to.shards} shards, and this run asks for ` +
      `${asked.partitions} partitions in ${asked.shards} shards; ${refusal.finishWith(to)}`,
    { file: refusal.file, option: refusal.option },
  );
}

/** How a start finishes an unfinished repartition (checkResumable's advice). */
export const finishByStart = {
  option: K.stateStorePartitions,
  finishWith: (to: StateLayoutRecord): string => `start with ${K.stateStorePartitions}=${to.partitions} and ${K.stateStoreShards}=${to.shards} (or neither set) to finish it, then change them`,
};

/** The offsets entry of a REPARTITION control batch after batch `last` (which it repeats). */
export function repartitionEntry(batchId: number, control: RepartitionControl, last: { offsets: unknown[]; batchWatermarkMs: number }): ControlOffsetSeq {
  return {
    batchId,
    kind: 'control',
    control,
    batchTimestampMs: Date.now(),
    batchWatermarkMs: last.batchWatermarkMs,
    offsets: [...last.offsets],
    conf: layoutCounts(control.from),
  };
}

/** The commit entry of a REPARTITION control batch: the watermark unchanged, the shards' new markers. */
export function repartitionCommit(markers: Array<number | null>, watermarkMs: number): CommitMetadata {
  return {
    nextBatchWatermarkMs: watermarkMs,
    ...(markers.every((m) => m !== null) && { stateShardMarkers: markers as number[] }),
  };
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
  const stores = new Map<number, ShardStore>();
  const store = async (shard: number): Promise<ShardStore> => {
    let s = stores.get(shard);
    if (!s) stores.set(shard, (s = await openLevelShard(paths.shard(operatorId, shard), storeOptions)));
    return s;
  };
  const rangesOf = (pick: (m: (typeof moves)[number]) => boolean): KeyGroupRange[] =>
    moves.filter(pick).map((m) => [m.kgStart, m.kgEnd] as const);
  let numRowsMoved = 0;
  let numBytesMoved = 0;
  // Index keys each giving shard's copies found, so that its clean-up need not scan again.
  const foundIndex = new Map<number, Uint8Array[]>();
  try {
    if (!copyDone) {
      for (const a of new Set(moves.map((m) => m.from))) {
        const targets = [];
        for (const b of new Set(moves.filter((m) => m.from === a).map((m) => m.to))) {
          targets.push({ to: await store(b), ranges: rangesOf((m) => m.from === a && m.to === b) });
        }
        const copied = await copyKeyGroups(await store(a), targets, (rows) => {
          if (rows > 0) hooks.onRows?.(rows);
          hooks.checkpoint?.();
        });
        numRowsMoved += copied.rows;
        numBytesMoved += copied.bytes;
        foundIndex.set(a, copied.sourceIndexKeys);
      }
      hooks.checkpoint?.();
      writeStateLayout(layoutPath, to);
      fault('repartition-after-layout-commit');
    }
    for (const shard of new Set(moves.map((m) => m.from))) {
      if (shard >= to.shards) continue; // its whole directory goes below
      await clearKeyGroups(await store(shard), rangesOf((m) => m.from === shard), 'repartition-mid-gc', copyDone ? undefined : (foundIndex.get(shard) ?? []));
      hooks.checkpoint?.();
    }
    for (let shard = to.shards; shard < from.shards; shard++) {
      const dir = paths.shard(operatorId, shard);
      await stores.get(shard)?.close();
      stores.delete(shard);
      if (existsSync(dir)) {
        fault('repartition-mid-gc');
        rmSync(dir, { recursive: true, force: true });
      }
    }
    for (const shard of touchedShards) if (shard < to.shards) await (await store(shard)).resetMarker(batchId);
  } finally {
    await Promise.allSettled([...stores.values()].map((s) => s.close()));
  }
  return { numKeyGroupsMoved, numRowsMoved, numBytesMoved, touchedShards };
}

/**
 * The batch each shard of `to` last committed after the control batch `batchId`: touched shards
 * are at `batchId`; the others keep what they had (a shard that never held anything: -1).
 */
export function markersAfter(
  result: RepartitionResult,
  to: StateLayoutRecord,
  before: ReadonlyArray<number | null>,
  batchId: number,
): Array<number | null> {
  return Array.from({ length: to.shards }, (_, shard) =>
    result.touchedShards.includes(shard) ? batchId : shard < before.length ? (before[shard] ?? null) : -1,
  );
}
