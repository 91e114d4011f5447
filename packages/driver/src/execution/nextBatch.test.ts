/**
 * What a query runs next, decided from a checkpoint's tail and the run's settings alone: no disk,
 * no sources. Each case is a tail a start or a batch leaves.
 */
import { describe, expect, it } from 'vitest';
import { contiguousAssignment, planRepartition } from '@sluice/state';
import type { ControlOffsetSeq, DataOffsetSeq } from '../checkpoint/OffsetLog.js';
import type { CheckpointTail } from '../checkpoint/recovery.js';
import type { StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';
import { nextBatch, type RunSettings } from './nextBatch.js';
import type { RepartitionControl } from './Repartition.js';

const layout = (partitions: number, shards: number): StateLayoutRecord => {
  const counts = { keyGroups: 4096, partitions, shards };
  return { ...counts, shardOfPartition: contiguousAssignment(counts) };
};

const data = (batchId: number, end: number, watermarkMs = 0): DataOffsetSeq => ({
  batchId,
  kind: 'data',
  batchTimestampMs: 1000 + batchId,
  batchWatermarkMs: watermarkMs,
  offsets: [end],
  conf: {},
});

const repartition = (from: StateLayoutRecord, to: { partitions: number; shards: number }, operatorId = 0): RepartitionControl => ({
  type: 'REPARTITION',
  operatorId,
  from,
  to: planRepartition(from, { keyGroups: 4096, ...to }).layout,
});

const control = (batchId: number, c: RepartitionControl, after: DataOffsetSeq): ControlOffsetSeq => ({ ...after, batchId, kind: 'control', control: c });

const tail = (t: Partial<CheckpointTail>): CheckpointTail => ({ last: undefined, previous: undefined, committed: false, commit: undefined, layouts: [], ...t });

const stateless: RunSettings = { numSources: 1, runsNoDataBatches: true, usesWatermark: false };
const stateful = (partitions?: number, shards?: number | 'auto'): RunSettings => ({
  numSources: 1,
  state: { partitions, shards, slots: 2 },
  runsNoDataBatches: true,
  usesWatermark: true,
});

describe('nextBatch', () => {
  it('a new checkpoint polls its sources, and new data makes batch 0 from nothing read', () => {
    const t = tail({});
    expect(nextBatch(t, stateless)).toEqual({ kind: 'poll' });
    expect(nextBatch(t, stateless, [6])).toEqual({ kind: 'data', batchId: 0, start: [null], offsets: [6], watermarkMs: 0 });
    expect(nextBatch(t, stateless, [null])).toEqual({ kind: 'idle' });
  });

  it('after a committed batch: new data from its ends under the committed watermark; the same ends are idle', () => {
    const t = tail({ last: data(3, 24, 5), previous: data(2, 18), committed: true, commit: { nextBatchWatermarkMs: 5 } });
    expect(nextBatch(t, stateless, [30])).toEqual({ kind: 'data', batchId: 4, start: [24], offsets: [30], watermarkMs: 5 });
    expect(nextBatch(t, stateless, [24])).toEqual({ kind: 'idle' });
  });

  it('replays an uncommitted data batch with its own entry, from the ends before it, whatever the sources say', () => {
    const t = tail({ last: data(4, 30), previous: data(3, 24), commit: { nextBatchWatermarkMs: 0 } });
    expect(nextBatch(t, stateless)).toEqual({ kind: 'replay', batch: data(4, 30), start: [24] });
    expect(nextBatch(t, stateless, [99])).toEqual({ kind: 'replay', batch: data(4, 30), start: [24] });
    expect(nextBatch(tail({ last: data(0, 6) }), stateless)).toEqual({ kind: 'replay', batch: data(0, 6), start: [null] });
  });

  it('a no-data batch is due when the watermark passed the one the last batch ran with, the operator uses it and the trigger runs them', () => {
    const t = tail({ last: data(3, 24, 5), committed: true, commit: { nextBatchWatermarkMs: 9 } });
    expect(nextBatch(t, stateful(), [24])).toEqual({ kind: 'noData', batchId: 4, start: [24], offsets: [24], watermarkMs: 9 });
    expect(nextBatch(t, { ...stateful(), runsNoDataBatches: false }, [24])).toEqual({ kind: 'idle' });
    expect(nextBatch(t, { ...stateful(), usesWatermark: false }, [24])).toEqual({ kind: 'idle' });
    expect(nextBatch({ ...t, commit: { nextBatchWatermarkMs: 5 } }, stateful(), [24])).toEqual({ kind: 'idle' });
  });

  it("a no-data batch is due when the clock reaches a processor's next processing-time timer or expiry, as the last commit recorded it", () => {
    const t = tail({ last: data(3, 24, 5), committed: true, commit: { nextBatchWatermarkMs: 5, nextWakeMs: 10_000 } });
    const settings = { ...stateful(), usesWatermark: false };
    expect(nextBatch(t, settings, [24], 9_999)).toEqual({ kind: 'idle' });
    expect(nextBatch(t, settings, [24], 10_000)).toEqual({ kind: 'noData', batchId: 4, start: [24], offsets: [24], watermarkMs: 5 });
    expect(nextBatch(t, { ...settings, runsNoDataBatches: false }, [24], 10_000)).toEqual({ kind: 'idle' });
    // New data is a data batch all the same.
    expect(nextBatch(t, settings, [30], 10_000)).toMatchObject({ kind: 'data', offsets: [30] });
  });

  it("a layout other than the asked counts is moved by a REPARTITION control batch after the last batch; unset counts keep the state's", () => {
    const t = tail({ last: data(3, 24), committed: true, commit: { nextBatchWatermarkMs: 0 }, layouts: [layout(8, 2)] });
    expect(nextBatch(t, stateful(4))).toEqual({ kind: 'control', batchId: 4, control: repartition(layout(8, 2), { partitions: 4, shards: 2 }) });
    expect(nextBatch(t, stateful(8, 'auto'))).toEqual({ kind: 'poll' });
    expect(nextBatch(t, stateful(undefined, 1))).toEqual({ kind: 'control', batchId: 4, control: repartition(layout(8, 2), { partitions: 8, shards: 1 }) });
    // Never more shards than partitions.
    expect(nextBatch({ ...t, layouts: [layout(1, 1)] }, stateful(undefined, 3))).toEqual({ kind: 'poll' });
  });

  it("moves each stateful operator's state in turn, the first's then the ones after it, each with its own layout", () => {
    const chained = (layouts: StateLayoutRecord[]): CheckpointTail =>
      tail({ last: data(3, 24), committed: true, commit: { nextBatchWatermarkMs: 0 }, layouts });
    expect(nextBatch(chained([layout(8, 2), layout(8, 2), layout(6, 3)]), stateful(4))).toEqual({
      kind: 'control',
      batchId: 4,
      control: repartition(layout(8, 2), { partitions: 4, shards: 2 }),
    });
    // The first one moved: the second operator (id 1) is next, with its own shard count kept; then the third.
    expect(nextBatch(chained([layout(4, 2), layout(8, 2), layout(6, 3)]), stateful(4))).toEqual({
      kind: 'control',
      batchId: 4,
      control: repartition(layout(8, 2), { partitions: 4, shards: 2 }, 1),
    });
    expect(nextBatch(chained([layout(4, 2), layout(4, 2), layout(6, 3)]), stateful(4))).toEqual({
      kind: 'control',
      batchId: 4,
      control: repartition(layout(6, 3), { partitions: 4, shards: 3 }, 2),
    });
    expect(nextBatch(chained([layout(4, 2), layout(4, 2), layout(4, 3)]), stateful(4), [30]).kind).toBe('data');
  });

  it('a replay runs before the move: with the layout it ran with', () => {
    const t = tail({ last: data(4, 30), previous: data(3, 24), commit: { nextBatchWatermarkMs: 0 }, layouts: [layout(8, 2)] });
    expect(nextBatch(t, stateful(4)).kind).toBe('replay');
  });

  it('finishes an unfinished control batch first, then moves on to a third layout the run asks for', () => {
    const toSeven = repartition(layout(8, 2), { partitions: 7, shards: 2 });
    const entry = control(4, toSeven, data(3, 24));
    const t = tail({ last: entry, previous: data(3, 24), commit: { nextBatchWatermarkMs: 0 }, layouts: [layout(8, 2)] });
    expect(nextBatch(t, stateful(100))).toEqual({ kind: 'control', batchId: 4, control: toSeven, entry });
    // Once it committed, the layout is the one it moved to, and the asked one is next.
    const done = tail({ last: entry, previous: data(3, 24), committed: true, commit: { nextBatchWatermarkMs: 0 }, layouts: [toSeven.to] });
    expect(nextBatch(done, stateful(100))).toEqual({ kind: 'control', batchId: 5, control: repartition(toSeven.to, { partitions: 100, shards: 2 }) });
    expect(nextBatch(done, stateful(7), [30])).toEqual({ kind: 'data', batchId: 5, start: [24], offsets: [30], watermarkMs: 0 });
  });

  it('an unfinished control batch it cannot finish is UNRESUMABLE_CONTROL_BATCH', () => {
    const t = tail({ last: { ...data(5, 30), kind: 'control', control: { type: 'COMPACT' } }, committed: false });
    expect(() => nextBatch(t, stateful())).toThrow(expect.objectContaining({ code: 'UNRESUMABLE_CONTROL_BATCH' }));
    const repartitioning = tail({ last: control(5, repartition(layout(8, 2), { partitions: 4, shards: 2 }), data(4, 24)) });
    expect(() => nextBatch(repartitioning, stateless)).toThrow(expect.objectContaining({ code: 'UNRESUMABLE_CONTROL_BATCH' }));
  });
});
