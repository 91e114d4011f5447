import { describe, expect, it } from 'vitest';
import { decideRecovery } from './recovery.js';
import type { OffsetSeq } from './OffsetLog.js';

const seq = (batchId: number): OffsetSeq => ({
  batchId,
  batchTimestampMs: 1000 + batchId,
  batchWatermarkMs: 0,
  offsets: [{ logOffset: batchId }],
  conf: {},
});

describe('decideRecovery', () => {
  it('starts fresh on an empty checkpoint', () => {
    expect(decideRecovery(undefined, undefined, undefined, '/c/offsets')).toEqual({ kind: 'fresh' });
  });

  it('resumes after a committed batch with its watermark', () => {
    const d = decideRecovery(seq(3), seq(2), { batchId: 3, nextBatchWatermarkMs: 77 }, '/c/offsets');
    expect(d).toEqual({ kind: 'resume', last: seq(3), watermarkMs: 77 });
  });

  it('replays an uncommitted batch with its own offsets and timestamp', () => {
    const d = decideRecovery(seq(4), seq(3), { batchId: 3, nextBatchWatermarkMs: 0 }, '/c/offsets');
    expect(d).toEqual({ kind: 'replay', batch: seq(4), previous: seq(3) });
  });

  it('replays batch 0 when nothing committed yet', () => {
    expect(decideRecovery(seq(0), undefined, undefined, '/c/offsets')).toEqual({
      kind: 'replay',
      batch: seq(0),
      previous: undefined,
    });
  });

  it('refuses a commit log ahead of the offset log', () => {
    expect(() => decideRecovery(seq(1), seq(0), { batchId: 2, nextBatchWatermarkMs: 0 }, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets' }),
    );
  });
});
