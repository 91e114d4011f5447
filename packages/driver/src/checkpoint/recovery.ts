/**
 * What a checkpoint's logs hold at their tail, read at start. The protocol allows exactly one batch
 * in flight (BatchTransaction: `offsets/N` is written, then the batch runs, then `commits/N`), so
 * the commit log is at the offset log's last batch or one behind it; any other tail was damaged.
 * What runs next is decided from the tail by nextBatch.ts.
 */
import { SluiceError } from '@sluice/state';
import type { CommitLog, CommitMetadata } from './CommitLog.js';
import type { OffsetLog, OffsetSeq } from './OffsetLog.js';
import type { StateLayoutRecord } from './StateLayoutFile.js';

export interface CheckpointTail {
  /** The last planned batch (data or control), and the one before it. */
  last: OffsetSeq | undefined;
  previous: OffsetSeq | undefined;
  /** Whether `last` has committed. */
  committed: boolean;
  /** The latest commit entry: `last`'s when it committed, else the one before it (its watermark and shard markers). */
  commit: CommitMetadata | undefined;
  /** A stateful query's state layout in force (its layout file). */
  layout?: StateLayoutRecord;
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
export function readTail(offsetLog: OffsetLog, commitLog: CommitLog): CheckpointTail {
  const latest = offsetLog.getLatest();
  const commitId = commitLog.latestId();
  checkTail(latest?.batchId, commitId, offsetLog.dir);
  return {
    last: latest?.value,
    previous: latest ? offsetLog.get(latest.batchId - 1) : undefined,
    committed: latest !== undefined && latest.batchId === commitId,
    commit: commitId === undefined ? undefined : commitLog.get(commitId),
  };
}
