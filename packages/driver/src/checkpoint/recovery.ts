/**
 * Where a restarted query picks up, decided from the tails of the offset and commit logs alone
 * (a pure function, tested without a disk).
 */
import { SluiceError } from '@sluice/state';
import type { OffsetSeq } from './OffsetLog.js';

export type RecoveryDecision =
  /** A new checkpoint. */
  | { kind: 'fresh' }
  /** The last planned batch committed: continue after it. */
  | { kind: 'resume'; last: OffsetSeq; watermarkMs: number }
  /** `offsets/N` without `commits/N`: run batch N again with the same offsets and timestamp. */
  | { kind: 'replay'; batch: OffsetSeq; previous: OffsetSeq | undefined };

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
  if (latestCommit && latestCommit.batchId > latestOffsets.batchId) {
    throw new SluiceError(
      'CHECKPOINT_CORRUPT',
      `commit log is ahead of the offset log (commit ${latestCommit.batchId}, offsets ${latestOffsets.batchId})`,
      { file: offsetsDir },
    );
  }
  if (latestCommit && latestCommit.batchId === latestOffsets.batchId) {
    return { kind: 'resume', last: latestOffsets, watermarkMs: latestCommit.nextBatchWatermarkMs };
  }
  return { kind: 'replay', batch: latestOffsets, previous: previousOffsets };
}
