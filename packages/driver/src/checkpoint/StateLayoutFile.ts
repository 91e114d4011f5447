/**
 * `state/<operatorId>/layout`: the state layout in force. It is read at every start and only
 * ever replaced whole (temp file, fsync, rename), so its replacement is the commit point of a
 * repartition: a reader sees the old layout or the new one, never a mix.
 */
import { existsSync } from 'node:fs';
import { contiguousAssignment, isAssignmentOf, type ShardAssignment, type StateLayout } from '@sluice/state';
import { readVersioned, writeVersioned } from './versionedFile.js';

export interface StateLayoutRecord extends StateLayout {
  /** Shard of each partition (index: partition). */
  shardOfPartition: ShardAssignment;
  /**
   * The operator whose state this is (its progress name), so that tools moving the state offline
   * know how its values count rows; absent in layouts written before it was recorded.
   */
  operator?: string;
}

function isRecord(v: unknown): v is StateLayoutRecord {
  const r = v as StateLayoutRecord;
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isInteger(r.keyGroups) &&
    Number.isInteger(r.partitions) &&
    Number.isInteger(r.shards) &&
    isAssignmentOf(r.shardOfPartition, r)
  );
}

/** The layout at `path`, or undefined when there is none; a damaged file is CHECKPOINT_CORRUPT. */
export function readStateLayout(path: string): StateLayoutRecord | undefined {
  return existsSync(path) ? readVersioned(path, isRecord) : undefined;
}

/** The layout of these counts whose shards hold contiguous blocks of partitions (a new checkpoint's, or the one an earlier Sluice pinned). */
export function contiguousLayout(counts: StateLayout): StateLayoutRecord {
  return { ...counts, shardOfPartition: contiguousAssignment(counts) };
}

/** The counts of a layout without its table: what tasks and a batch's offsets entry carry. */
export function layoutCounts(layout: StateLayout): { keyGroups: number; partitions: number; shards: number } {
  const { keyGroups, partitions, shards } = layout;
  return { keyGroups, partitions, shards };
}

export function writeStateLayout(path: string, layout: StateLayoutRecord): void {
  writeVersioned(path, layout);
}
