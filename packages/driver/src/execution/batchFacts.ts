/** What a batch's task results add up to: rows read and event times per source, and the stateful operators' metrics, shard markers and next wake. */
import type { EventTimeStats, MapFacts, StateOperatorMetrics, StateResult } from '@sluice/executor';
import type { BatchExecution, BatchPlan, SplitOfSource } from './IncrementalExecution.js';

/** The least nextWakeMs of `results`, if any has one. */
export function nextWake(results: readonly StateResult[]): Pick<BatchExecution, 'nextWakeMs'> {
  let least: number | undefined;
  for (const r of results) if (r.nextWakeMs !== undefined && (least === undefined || r.nextWakeMs < least)) least = r.nextWakeMs;
  return least === undefined ? {} : { nextWakeMs: least };
}

/** Rows read and event times, per source and in all, from the first stage's results. */
export function inputFacts(
  batch: BatchPlan,
  first: ReadonlyArray<{ numInputRows: number; eventTime?: EventTimeStats }>,
  numSources: number,
): Omit<BatchExecution, 'outputs'> {
  const inputRows = Array.from({ length: numSources }, () => 0);
  first.forEach((r, t) => {
    const i = (batch.splits[t] as SplitOfSource).source;
    inputRows[i] = (inputRows[i] as number) + r.numInputRows;
  });
  const eventTime = mergeEventTime(first);
  const eventTimeBySource = inputRows.map((_, i) => mergeEventTime(first.filter((_, t) => (batch.splits[t] as SplitOfSource).source === i)));
  return { inputRows, eventTime, eventTimeBySource };
}

export function mergeEventTime(results: ReadonlyArray<{ eventTime?: EventTimeStats }>): EventTimeStats | undefined {
  let merged: EventTimeStats | undefined;
  for (const r of results) {
    const e = r.eventTime;
    if (!e) continue;
    merged ??= { min: Infinity, max: -Infinity, sum: 0, count: 0 };
    merged.min = Math.min(merged.min, e.min);
    merged.max = Math.max(merged.max, e.max);
    merged.sum += e.sum;
    merged.count += e.count;
  }
  return merged;
}

/** A fused batch's outputs, its one operator's state metrics and shard markers. */
export function stateFacts(maps: readonly MapFacts[], outputs: StateResult[]): Pick<BatchExecution, 'outputs' | 'states' | 'shardMarkers' | 'nextWakeMs'> {
  const state = sumStateMetrics(outputs);
  // A deduplication's map tasks drop late rows before they keep a first row per key.
  for (const r of maps) state.numRowsDroppedByWatermark += r.numLateRows ?? 0;
  return { outputs, states: [state], shardMarkers: [outputs.map((r) => r.shardMarker)], ...nextWake(outputs) };
}

export function sumStateMetrics(results: readonly StateResult[]): StateOperatorMetrics {
  const total: StateOperatorMetrics = {
    numRowsTotal: 0,
    numRowsUpdated: 0,
    numRowsRemoved: 0,
    numRowsDroppedByWatermark: 0,
    memoryUsedBytes: 0,
    commitTimeMs: 0,
  };
  for (const { state: m } of results) {
    total.numRowsTotal += m.numRowsTotal;
    total.numRowsUpdated += m.numRowsUpdated;
    total.numRowsRemoved += m.numRowsRemoved;
    total.numRowsDroppedByWatermark += m.numRowsDroppedByWatermark;
    total.memoryUsedBytes += m.memoryUsedBytes;
    total.commitTimeMs += m.commitTimeMs;
    if (m.customMetrics) {
      total.customMetrics ??= {};
      for (const [k, v] of Object.entries(m.customMetrics)) total.customMetrics[k] = (total.customMetrics[k] ?? 0) + v;
    }
  }
  return total;
}
