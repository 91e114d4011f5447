/**
 * What a query runs next, decided from the checkpoint's tail and the run's settings alone (a pure
 * function, tested without a disk; MicroBatchExecution and the `sluice` CLI carry it out):
 *
 * 1. An uncommitted data batch is replayed, with exactly its offsets, timestamp and watermark.
 * 2. An uncommitted control batch is finished, whatever the run asks for.
 * 3. When an operator's state layout differs from the counts the run asks for, a REPARTITION
 *    control batch moves it: the first operator's, then each one after it, one control batch each.
 *    So a start that asks for a third layout while a repartition is unfinished first finishes that
 *    one (2), then moves on to its own.
 * 4. Otherwise the sources are polled: new data makes a data batch; else a no-data batch when the
 *    watermark has passed the one the last batch ran with and the stateful operator uses it
 *    (Spark's rule, decided from the checkpoint, so a restart runs a due no-data batch too), or
 *    when the clock has reached a processor's next processing-time timer or expiry (the last
 *    commit records it; Spark runs a batch at every trigger then); else nothing.
 */
import { planRepartition, SluiceError, type StateLayout } from '@sluice/state';
import type { ControlOffsetSeq, DataOffsetSeq, SourceOffset } from '../checkpoint/OffsetLog.js';
import type { CheckpointTail } from '../checkpoint/recovery.js';
import { sameOffset } from '../sources/Source.js';
import { isRepartition, type RepartitionControl } from './Repartition.js';

export interface RunSettings {
  numSources: number;
  /**
   * A stateful query's asked counts: stateStore.partitions and stateStore.shards when set (`auto`:
   * the slot count), else what the state has.
   */
  state?: {
    partitions: number | undefined;
    shards: number | 'auto' | undefined;
    slots: number;
  };
  /** The trigger runs no-data batches and noDataMicroBatches.enabled is on. */
  runsNoDataBatches: boolean;
  /** The stateful operator drops late rows and evicts by the watermark. */
  usesWatermark: boolean;
}

export type NextBatch =
  | { kind: 'replay'; batch: DataOffsetSeq; start: Array<SourceOffset | null> }
  /** `entry`: the unfinished control batch's own entry, to finish; absent for a new one. */
  | { kind: 'control'; batchId: number; control: RepartitionControl; entry?: ControlOffsetSeq }
  /** The sources' latest offsets are needed to decide. */
  | { kind: 'poll' }
  | { kind: 'data'; batchId: number; start: Array<SourceOffset | null>; offsets: Array<SourceOffset | null>; watermarkMs: number }
  | { kind: 'noData'; batchId: number; start: Array<SourceOffset | null>; offsets: Array<SourceOffset | null>; watermarkMs: number }
  | { kind: 'idle' };

/** The counts `state` asks of a layout (unset counts keep the layout's); never more shards than partitions. */
export function askedCounts(state: NonNullable<RunSettings['state']>, current: StateLayout): StateLayout {
  const partitions = state.partitions ?? current.partitions;
  const shards = state.shards === 'auto' ? state.slots : (state.shards ?? current.shards);
  return { keyGroups: current.keyGroups, partitions, shards: Math.min(shards, partitions) };
}

/** End offsets of the last committed batch, per source (null: nothing read yet). */
export function committedEnds(tail: CheckpointTail, numSources: number): Array<SourceOffset | null> {
  const done = tail.committed ? tail.last : tail.last?.kind === 'control' ? tail.last : tail.previous;
  return done ? [...done.offsets] : Array.from({ length: numSources }, () => null);
}

/** The watermark the next new batch runs with: the last commit's (a replay keeps its own). */
export function nextWatermark(tail: CheckpointTail): number {
  return tail.commit?.nextBatchWatermarkMs ?? 0;
}

/**
 * The watermark of the batch before the next data batch (Spark's watermark for late events): the
 * last batch's for a new one, the one before it for a replay; 0 before any batch. A control batch
 * repeats the watermark of the data batch before it.
 */
export function lateWatermark(tail: CheckpointTail): number {
  const before = tail.last && !tail.committed && tail.last.kind === 'data' ? tail.previous : tail.last;
  return before?.batchWatermarkMs ?? 0;
}

export function nextBatch(tail: CheckpointTail, settings: RunSettings, latest?: ReadonlyArray<SourceOffset | null>, nowMs = Date.now()): NextBatch {
  const last = tail.last;
  if (last && !tail.committed) {
    if (last.kind === 'data') return { kind: 'replay', batch: last, start: committedEnds(tail, settings.numSources) };
    if (!isRepartition(last.control) || !settings.state) {
      throw new SluiceError(
        'UNRESUMABLE_CONTROL_BATCH',
        `batch ${last.batchId} is an unfinished ${last.control.type} control batch, which this query cannot finish`,
      );
    }
    return { kind: 'control', batchId: last.batchId, control: last.control, entry: last };
  }
  const batchId = last ? last.batchId + 1 : 0;
  // Each operator's layout as it stands is the tail's (a control batch updates it there).
  if (settings.state) {
    for (const [operatorId, from] of tail.layouts.entries()) {
      const asked = askedCounts(settings.state, from);
      if (asked.partitions !== from.partitions || asked.shards !== from.shards) {
        return { kind: 'control', batchId, control: { type: 'REPARTITION', operatorId, from, to: planRepartition(from, asked).layout } };
      }
    }
  }
  if (latest === undefined) return { kind: 'poll' };
  const start = committedEnds(tail, settings.numSources);
  const watermarkMs = nextWatermark(tail);
  if (latest.some((e, i) => e !== null && !sameOffset(e, start[i] ?? null))) return { kind: 'data', batchId, start, offsets: [...latest], watermarkMs };
  // The watermark the last batch ran with (a control batch repeats that of the data batch before it).
  if (settings.runsNoDataBatches && settings.usesWatermark && watermarkMs > (last?.batchWatermarkMs ?? 0)) {
    return { kind: 'noData', batchId, start, offsets: start, watermarkMs };
  }
  // A processor's processing-time timer or expiry is due.
  const wake = tail.commit?.nextWakeMs;
  if (settings.runsNoDataBatches && wake !== undefined && nowMs >= wake) return { kind: 'noData', batchId, start, offsets: start, watermarkMs };
  return { kind: 'idle' };
}
