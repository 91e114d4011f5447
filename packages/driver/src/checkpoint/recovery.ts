/**
 * Where a restarted query picks up, decided from the tails of the offset and commit logs alone
 * (a pure function, tested without a disk).
 *
 * The protocol allows exactly one batch in flight: `offsets/N` is written, then the batch runs,
 * then `commits/N`. So the commit log is at the offset log's last batch, or one behind it; any
 * other tail was damaged.
 */
import { SluiceError } from '@sluice/state';
import type { CommitLog, CommitMetadata } from './CommitLog.js';
import type { ControlOffsetSeq, DataOffsetSeq, OffsetLog, OffsetSeq } from './OffsetLog.js';

export type RecoveryDecision =
  /** A new checkpoint. */
  | { kind: 'fresh' }
  /** The last planned batch (data or control) committed: continue after it. */
  | { kind: 'resume'; last: OffsetSeq; watermarkMs: number }
  /** `offsets/N` of a data batch without `commits/N`: run batch N again with the same offsets and timestamp. */
  | { kind: 'replay'; batch: DataOffsetSeq; previous: OffsetSeq | undefined }
  /**
   * `offsets/N` of a control batch without `commits/N`: finish it (its payload records how far it
   * got) before any new data batch. `watermarkMs` is the watermark committed before it.
   */
  | { kind: 'resumeControl'; batch: ControlOffsetSeq; previous: OffsetSeq | undefined; watermarkMs: number };

export function decideRecovery(
  latestOffsets: OffsetSeq | undefined,
  previousOffsets: OffsetSeq | undefined,
  latestCommit: { batchId: number; nextBatchWatermarkMs: number } | undefined,
  offsetsDir: string,
): RecoveryDecision {
  if (!latestOffsets) {
    if (latestCommit) {
      throw new SluiceError('CHECKPOINT_CORRUPT', `commit log has batch ${latestCommit.batchId} but the offset log is empty`, {
        file: offsetsDir,
      });
    }
    return { kind: 'fresh' };
  }
  const committed = latestCommit?.batchId ?? -1;
  if (committed > latestOffsets.batchId) {
    throw new SluiceError(
      'CHECKPOINT_CORRUPT',
      `commit log is ahead of the offset log (commit ${committed}, offsets ${latestOffsets.batchId})`,
      { file: offsetsDir },
    );
  }
  if (committed < latestOffsets.batchId - 1) {
    throw new SluiceError(
      'CHECKPOINT_CORRUPT',
      `commit log is ${latestOffsets.batchId - committed} batches behind the offset log (offsets ${latestOffsets.batchId}, ` +
        `last commit ${committed < 0 ? 'none' : committed}); only the last batch may be uncommitted`,
      { file: offsetsDir },
    );
  }
  if (committed === latestOffsets.batchId) {
    return { kind: 'resume', last: latestOffsets, watermarkMs: (latestCommit as { nextBatchWatermarkMs: number }).nextBatchWatermarkMs };
  }
  if (latestOffsets.kind === 'control') {
    return { kind: 'resumeControl', batch: latestOffsets, previous: previousOffsets, watermarkMs: latestCommit?.nextBatchWatermarkMs ?? 0 };
  }
  return { kind: 'replay', batch: latestOffsets, previous: previousOffsets };
}

/** decideRecovery on the logs on disk, with the last commit's entry (its watermark and shard markers). */
export function readRecovery(offsetLog: OffsetLog, commitLog: CommitLog): { decision: RecoveryDecision; lastCommit: CommitMetadata | undefined } {
  const latest = offsetLog.getLatest();
  const commitId = commitLog.latestId();
  const lastCommit = commitId === undefined ? undefined : commitLog.get(commitId);
  const decision = decideRecovery(
    latest?.value,
    latest ? offsetLog.get(latest.batchId - 1) : undefined,
    lastCommit && { batchId: commitId as number, nextBatchWatermarkMs: lastCommit.nextBatchWatermarkMs },
    offsetLog.dir,
  );
  return { decision, lastCommit };
}
