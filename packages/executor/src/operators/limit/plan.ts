/**
 * limit(n) on a stream (Spark's StreamingLocalLimitExec and StreamingGlobalLimitExec), the plan
 * part: the first n rows of the stream, then none, across batches and restarts. The map side, the
 * batch and the stored count are in task.ts.
 */
import type { OperatorPlan } from '../operator.js';
import type { StatefulOp } from '../types.js';

export type LimitOp = Extract<StatefulOp, { kind: 'limit' }>;

export const limit: OperatorPlan<LimitOp> = {
  kind: 'limit',
  progressName: 'globalLimit',
  usesWatermark: () => false,
  lateOnMapSide: false,
  // Rows pass unchanged: their event-time columns too.
  eventTimeColumnsOut: (_op, input) => new Set(input),
  outputSchema: (_op, input) => input,
  mapSideExprs: () => [],
};
