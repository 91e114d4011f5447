/**
 * What a checkpoint holds at its tail, read at start: the logs' last entries and the stateful
 * operators' state layouts. The protocol allows exactly one batch in flight (BatchTransaction:
 * `offsets/N` is written, then the batch runs, then `commits/N`), so the commit log is at the
 * offset log's last batch or one behind it; any other tail was damaged. What runs next is decided
 * from the tail by nextBatch.ts.
 *
 * Older Sluices kept the first operator's state apart on disk (its layout in metadata, its shard
 * markers in a commit's `stateShardMarkers`); those forms are read here into the one list by
 * operator id that everything after the start uses.
 */
import { SluiceError, type StateLayout } from '@sluice/state';
import type { CheckpointPaths } from './CheckpointPaths.js';
import type { CommitLog, CommitMetadata } from './CommitLog.js';
import type { OffsetLog, OffsetSeq } from './OffsetLog.js';
import { contiguousLayout, readStateLayout, type StateLayoutRecord } from './StateLayoutFile.js';

/** What the checkpoint's logs hold at their tail. */
export interface LogTail {
  /** The last planned batch (data or control), and the one before it. */
  last: OffsetSeq | undefined;
  previous: OffsetSeq | undefined;
  /** Whether `last` has committed. */
  committed: boolean;
  /**
   * The latest commit entry: `last`'s when it committed, else the one before it (its watermark
   * and shard markers, by operator id in `shardMarkers` whatever form it was written in).
   */
  commit: CommitMetadata | undefined;
}

export interface CheckpointTail extends LogTail {
  /** The state layout in force of each stateful operator, by operator id (empty: a stateless query). */
  layouts: readonly StateLayoutRecord[];
}

/** Refuses a tail the protocol cannot leave: a commit log ahead of the offset log, or more than one batch behind. */
export function checkTail(lastPlanned: number | undefined, lastCommitted: number | undefined, offsetsDir: string): void {
  if (lastPlanned === undefined) {
    if (lastCommitted !== undefined) {
      throw new SluiceError('CHECKPOINT_CORRUPT', `commit log has batch ${lastCommitted} but the offset log is empty`, { file: offsetsDir });
    }
    return;
  }
  const committed = lastCommitted ?? -1;
  if (committed > lastPlanned) {
    throw new SluiceError('CHECKPOINT_CORRUPT', `commit log is ahead of the offset log (commit ${committed}, offsets ${lastPlanned})`, { file: offsetsDir });
  }
  if (committed < lastPlanned - 1) {
    throw new SluiceError(
      'CHECKPOINT_CORRUPT',
      `commit log is ${lastPlanned - committed} batches behind the offset log (offsets ${lastPlanned}, ` +
        `last commit ${committed < 0 ? 'none' : committed}); only the last batch may be uncommitted`,
      { file: offsetsDir },
    );
  }
}

/** The tail of the logs on disk, checked. */
export function readTail(offsetLog: OffsetLog, commitLog: CommitLog): LogTail {
  const latest = offsetLog.getLatest();
  const commitId = commitLog.latestId();
  checkTail(latest?.batchId, commitId, offsetLog.dir);
  const stored = commitId === undefined ? undefined : commitLog.get(commitId);
  return {
    last: latest?.value,
    previous: latest ? offsetLog.get(latest.batchId - 1) : undefined,
    committed: latest !== undefined && latest.batchId === commitId,
    commit: stored && commitOf(stored),
  };
}

/**
 * A commit entry as read, its shard markers by operator id in `shardMarkers`: a commit written
 * before `shardMarkers` kept the first operator's apart (`stateShardMarkers`) from the others'
 * (`downstreamShardMarkers`, index: operator id - 1).
 */
export function commitOf(stored: CommitMetadata): CommitMetadata {
  const { stateShardMarkers, downstreamShardMarkers, ...commit } = stored;
  if (commit.shardMarkers !== undefined || stateShardMarkers === undefined) return commit;
  return { ...commit, shardMarkers: [stateShardMarkers, ...(downstreamShardMarkers ?? [])] };
}

/**
 * Operator `operatorId`'s state layout as the checkpoint stores it: its layout file; for the
 * first operator of a checkpoint an earlier Sluice wrote, the one layout that Sluice pinned in
 * metadata (`legacy`, shards holding contiguous partitions), which the next start moves into the
 * layout file. `inLayoutFile`: read from the layout file.
 */
export function storedLayout(
  paths: CheckpointPaths,
  operatorId: number,
  legacy: StateLayout | undefined,
): { layout: StateLayoutRecord; inLayoutFile: boolean } | undefined {
  const inFile = readStateLayout(paths.stateLayout(operatorId));
  if (inFile) return { layout: inFile, inLayoutFile: true };
  return operatorId === 0 && legacy ? { layout: contiguousLayout(legacy), inLayoutFile: false } : undefined;
}

/** The stored layouts by operator id, 0, 1, ... up to the first operator without one (storedLayout; none: a stateless query). */
export function storedLayouts(paths: CheckpointPaths, legacy: StateLayout | undefined): StateLayoutRecord[] {
  const layouts: StateLayoutRecord[] = [];
  for (let id = 0; ; id++) {
    const stored = storedLayout(paths, id, legacy);
    if (stored === undefined) return layouts;
    layouts.push(stored.layout);
  }
}
