/**
 * transformWithState and flatMapGroupsWithState, the task part, one for both kinds: the map side
 * sends a task's rows grouped by key, and the batch (batch.ts) calls the processor; plan.ts has
 * what the driver plans with.
 */
import { groupPartials } from '../mapSide.js';
import type { OperatorTask } from '../operator.js';
import type { TransformWithStateOp } from '../types.js';
import { processorWakeMs, transformWithState } from './batch.js';

export const processorTask: OperatorTask<TransformWithStateOp> = {
  mapSide: (op, input) => groupPartials(op, input.schema, input.layout, input.udfs),
  run: transformWithState,
  wakeMs: processorWakeMs,
};
