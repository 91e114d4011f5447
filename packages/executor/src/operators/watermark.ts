/**
 * Whether a stateful operator uses the watermark, decided here once for the driver and the
 * workers alike: the driver runs a no-data batch only for an operator that uses it, and map tasks
 * drop a deduplication's late rows; the state task drops late keys and evicts state.
 *
 * As in Spark, an operator uses the watermark when the query has one and the operator is keyed
 * by event time (a window over the watermarked column, or that column itself); a
 * dropDuplicatesWithinWatermark always does. Complete mode never does: it neither drops late
 * rows nor evicts, so it runs no no-data batches either.
 */
import type { OutputMode, StatefulOp } from './types.js';

export function operatorUsesWatermark(op: StatefulOp, hasWatermark: boolean, outputMode: OutputMode): boolean {
  if (!hasWatermark || outputMode === 'complete') return false;
  if (op.kind === 'aggregate') return op.eventTimeKey !== null;
  if (op.kind === 'dropDuplicates') return op.eventTimeColumn !== null;
  // A join drops late rows of a watermarked side, and evicts and emits outer rows by the watermark.
  if (op.kind === 'streamJoin') return op.left.eventTime !== null || op.right.eventTime !== null;
  // A processor drops late rows and fires its timers by the watermark in event-time mode only.
  if (op.kind === 'transformWithState') return op.timeMode === 'eventTime';
  return true;
}
