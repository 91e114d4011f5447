import { describe, expect, it } from 'vitest';
import { decideRecovery } from './recovery.js';
import type { ControlOffsetSeq, DataOffsetSeq } from './OffsetLog.js';

const seq = (batchId: number): DataOffsetSeq => ({
  batchId,
  kind: 'data',
  batchTimestampMs: 1000 + batchId,
  batchWatermarkMs: 0,
  offsets: [{ logOffset: batchId }],
  conf: {},
});

const control = (batchId: number): ControlOffsetSeq => ({
  ...seq(batchId - 1),
  batchId,
  kind: 'control',
  control: { type: 'REPARTITION', phase: 'copy' },
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

  it('resumes after a committed control batch like after a data batch', () => {
    const d = decideRecovery(control(5), seq(4), { batchId: 5, nextBatchWatermarkMs: 9 }, '/c/offsets');
    expect(d).toEqual({ kind: 'resume', last: control(5), watermarkMs: 9 });
  });

  it('finishes an uncommitted control batch before anything else, with the watermark committed before it', () => {
    const d = decideRecovery(control(5), seq(4), { batchId: 4, nextBatchWatermarkMs: 9 }, '/c/offsets');
    expect(d).toEqual({ kind: 'resumeControl', batch: control(5), previous: seq(4), watermarkMs: 9 });
  });

  it('refuses a commit log ahead of the offset log', () => {
    expect(() => decideRecovery(seq(1), seq(0), { batchId: 2, nextBatchWatermarkMs: 0 }, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets' }),
    );
  });

  it('refuses a commit log more than one batch behind the offset log', () => {
    expect(() => decideRecovery(seq(5), seq(4), { batchId: 3, nextBatchWatermarkMs: 0 }, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets', message: expect.stringContaining('2 batches behind') }),
    );
    expect(() => decideRecovery(seq(2), seq(1), undefined, '/c/offsets')).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT' }));
  });
});
