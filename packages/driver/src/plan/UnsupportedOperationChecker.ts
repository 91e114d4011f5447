/**
 * Spark's output-mode matrix for streaming queries, checked when a query starts
 * (UNSUPPORTED_OUTPUT_MODE), so no batch ever runs with a mode the plan cannot honour.
 */
import { SluiceError } from '@sluice/state';
import { watermarkOf, type LogicalPlan } from './LogicalPlan.js';
import type { OutputMode } from './QuerySpec.js';

function refuse(message: string): SluiceError {
  return new SluiceError('UNSUPPORTED_OUTPUT_MODE', message, { option: 'outputMode' });
}

export function checkOutputMode(plan: LogicalPlan, mode: OutputMode): void {
  const op = plan.stateful;
  if (!op || op.kind !== 'aggregate') {
    if (mode === 'complete') {
      throw refuse('complete output mode is not supported when there are no streaming aggregations on streaming DataFrames');
    }
    return;
  }
  // Append emits a group once, when the watermark says it can no longer change.
  if (mode === 'append' && (!watermarkOf(plan) || op.eventTimeKey === null)) {
    throw refuse(
      'append output mode is not supported when there are streaming aggregations without a watermark on a grouping key ' +
        "(add withWatermark on the event-time column and group by it or by a window over it, or use 'update' or 'complete')",
    );
  }
}
