/**
 * Spark's output-mode matrix for streaming queries, checked when a query starts
 * (UNSUPPORTED_OUTPUT_MODE), so no batch ever runs with a mode the plan cannot honour; and Spark's
 * rules for a join of two streams and for a limit.
 */
import { lowerCaseNames, sessionKeyOf, stateValueWatermark, type Expr, type StreamJoinOp, type StreamJoinType } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { watermarkOf, type LogicalPlan } from './LogicalPlan.js';
import type { OutputMode } from './QuerySpec.js';

function refuse(message: string): SluiceError {
  return new SluiceError('UNSUPPORTED_OUTPUT_MODE', message, { option: 'outputMode' });
}

export function checkOutputMode(plan: LogicalPlan, mode: OutputMode): void {
  const [first, ...chain] = plan.operators ?? [];
  const op = first?.stateful;
  checkGroupsWithState(plan, mode);
  if (checkLimits(plan, mode)) return;
  if (chain.length > 0) {
    // Spark runs several stateful operators in Append mode only (each emits what is final).
    if (mode !== 'append') {
      throw refuse(
        `multiple stateful operators (${[op, ...chain.map((c) => c.stateful)].map((o) => o?.kind).join(', ')}) are supported in Append output mode only, as in Spark`,
      );
    }
    for (const next of chain) checkOutputMode({ ...plan, operators: [next] }, mode);
  }
  if (op?.kind === 'transformWithState' && chain.length === 0) {
    if (mode === 'complete') throw refuse(`Complete output mode is not supported for ${op.api} on streaming DataFrames/Datasets: use Append or Update`);
    return;
  }
  if (op?.kind === 'streamJoin') {
    checkStreamStreamJoin(streamStreamJoinOf(op), mode);
    return;
  }
  if (op?.kind !== 'aggregate') {
    if (mode === 'complete') {
      throw refuse('complete output mode is not supported when there are no streaming aggregations on streaming DataFrames');
    }
    return;
  }
  // A session may merge with a later one, so no row of it is final before the watermark closes it.
  const session = sessionKeyOf(op) >= 0;
  if (mode === 'update' && session) throw refuse('Update output mode not supported for session window on streaming DataFrames/DataSets');
  if (session && op.keys.length === 1) {
    // Spark's words. A key's sessions merge in one task, so one global key would be one task.
    throw new SluiceError('UNSUPPORTED_OPERATION', 'Global aggregation with session window in streaming query is not supported: group by another key as well');
  }
  // Append emits a group once, when the watermark says it can no longer change.
  if (mode === 'append' && (!watermarkOf(plan) || op.eventTimeKey === null)) {
    throw refuse(
      'append output mode is not supported when there are streaming aggregations without a watermark on a grouping key ' +
        "(add withWatermark on the event-time column and group by it or by a window over it, or use 'update' or 'complete')",
    );
  }
}

/**
 * Spark's rules for a limit on a stream: never in Update mode. In Complete mode only around one
 * aggregation: before it the limit keeps its count in state (Spark's SPARK-30658), after it it
 * limits each batch's whole result. True when that is the plan and its aggregation is checked.
 */
function checkLimits(plan: LogicalPlan, mode: OutputMode): boolean {
  const ops = (plan.operators ?? []).map((c) => c.stateful);
  if (!ops.some((o) => o.kind === 'limit')) return false;
  if (mode === 'update') throw refuse('Limits are not supported on streaming DataFrames/Datasets in Update output mode');
  const others = ops.filter((o) => o.kind !== 'limit');
  const aggregation = (plan.operators ?? []).find((c) => c.stateful.kind !== 'limit');
  if (mode !== 'complete' || others.length !== 1 || aggregation?.stateful.kind !== 'aggregate') return false;
  checkOutputMode({ ...plan, operators: [aggregation] }, mode);
  return true;
}

/**
 * Spark's rules for [flat]MapGroupsWithState (UnsupportedOperationChecker): mapGroupsWithState in
 * Update mode only and without aggregations; flatMapGroupsWithState's own output mode must be the
 * query's when there is no aggregation, and Append when an aggregation follows it; never after an
 * aggregation.
 */
function checkGroupsWithState(plan: LogicalPlan, mode: OutputMode): void {
  const ops = (plan.operators ?? []).map((c) => c.stateful);
  const aggregates = ops.some((o) => o.kind === 'aggregate');
  const shown = { append: 'Append', update: 'Update', complete: 'Complete' };
  const maps = ops.filter((o) => o.kind === 'transformWithState' && o.api === 'mapGroupsWithState');
  const flats = ops.filter((o) => o.kind === 'transformWithState' && o.api === 'flatMapGroupsWithState');
  if (maps.length >= 2) throw new SluiceError('UNSUPPORTED_OPERATION', 'Multiple mapGroupsWithStates are not supported on a streaming DataFrames/Datasets');
  if (maps.length > 0 && flats.length > 0) {
    throw new SluiceError(
      'UNSUPPORTED_OPERATION',
      'Mixing mapGroupsWithStates and flatMapGroupsWithStates are not supported on a streaming DataFrames/Datasets',
    );
  }
  if (flats.length >= 2 && (mode !== 'append' || flats.some((o) => o.kind === 'transformWithState' && o.outputMode !== 'append'))) {
    throw refuse(
      'Multiple flatMapGroupsWithStates are not supported when they are not all in append mode or the output mode is not append on a streaming DataFrames/Datasets',
    );
  }
  ops.forEach((op, i) => {
    if (op.kind !== 'transformWithState' || op.api === 'transformWithState') return;
    if (op.api === 'mapGroupsWithState') {
      if (aggregates) throw new SluiceError('UNSUPPORTED_OPERATION', 'mapGroupsWithState is not supported with aggregation on a streaming DataFrame/Dataset');
      if (mode !== 'update') throw refuse(`mapGroupsWithState is not supported with ${shown[mode]} output mode on a streaming DataFrame/Dataset`);
      return;
    }
    if (!aggregates) {
      if (op.outputMode !== mode) {
        throw refuse(`flatMapGroupsWithState in ${op.outputMode} mode is not supported with ${shown[mode]} output mode on a streaming DataFrame/Dataset`);
      }
      return;
    }
    if (op.outputMode === 'update')
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'flatMapGroupsWithState in update mode is not supported with aggregation on a streaming DataFrame/Dataset',
      );
    if (ops.slice(0, i).some((o) => o.kind === 'aggregate')) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'flatMapGroupsWithState in append mode is not supported after aggregation on a streaming DataFrame/Dataset',
      );
    }
  });
}

const SPARK_JOIN_NAMES: Record<StreamJoinType, string> = {
  inner: 'Inner',
  left_outer: 'LeftOuter',
  right_outer: 'RightOuter',
  full_outer: 'FullOuter',
  left_semi: 'LeftSemi',
  left_anti: 'LeftAnti',
};

/** A join of two streams as the checks see it: its columns by side (lower case), the watermarked ones, its equi-join keys and condition. */
export interface StreamStreamJoin {
  how: StreamJoinType;
  left: ReadonlySet<string>;
  right: ReadonlySet<string>;
  leftWatermarked: ReadonlySet<string>;
  rightWatermarked: ReadonlySet<string>;
  /** Pairs of equal columns [left, right] of the condition. */
  keys: ReadonlyArray<[string, string]>;
  condition?: Expr;
}

/** The checks' view of a join's operator. */
function streamStreamJoinOf(op: StreamJoinOp): StreamStreamJoin {
  return {
    how: op.how,
    left: lowerCaseNames(op.left.schema.map((f) => f.name)),
    right: lowerCaseNames(op.right.schema.map((f) => f.name)),
    leftWatermarked: lowerCaseNames(op.left.watermarked),
    rightWatermarked: lowerCaseNames(op.right.watermarked),
    keys: op.leftKeys.map((k, i) => [k.toLowerCase(), (op.rightKeys[i] as string).toLowerCase()]),
    ...(op.residual !== undefined && { condition: op.residual }),
  };
}

/**
 * Spark's rules for a join of two streams (UnsupportedOperationChecker): append mode only; no
 * left anti join; and an outer or semi join needs a watermarked join key, or a watermark on the
 * nullable side and a range condition that bounds the other side's state (StreamingJoinHelper, tried
 * with a watermark of 1000000 as Spark does). An inner join without either is allowed, with state
 * that grows without bound. UNSUPPORTED_OPERATION with Spark's message otherwise.
 */
export function checkStreamStreamJoin(join: StreamStreamJoin, mode: OutputMode): void {
  const name = SPARK_JOIN_NAMES[join.how];
  if (mode !== 'append') {
    const shown = mode === 'update' ? 'Update' : 'Complete';
    throw new SluiceError(
      'UNSUPPORTED_OUTPUT_MODE',
      `Join between two streaming DataFrames/Datasets is not supported in ${shown} output mode, only in Append output mode`,
      { option: 'outputMode' },
    );
  }
  if (join.how === 'left_anti')
    throw new SluiceError('UNSUPPORTED_OPERATION', 'Left anti joins with a streaming DataFrame/Dataset on the right are not supported');
  if (join.how === 'inner') return;
  const watermarkInKeys = join.keys.some(([l, r]) => join.leftWatermarked.has(l) || join.rightWatermarked.has(r));
  const bounds = (side: ReadonlySet<string>, watermarked: ReadonlySet<string>): boolean =>
    join.condition !== undefined && stateValueWatermark(join.condition, { side, watermarked }, 1_000_000) !== undefined;
  const leftBounded = (): boolean => bounds(join.left, join.rightWatermarked);
  const rightBounded = (): boolean => bounds(join.right, join.leftWatermarked);
  const validRange = join.how === 'right_outer' ? rightBounded() : join.how === 'full_outer' ? leftBounded() || rightBounded() : leftBounded();
  if (!watermarkInKeys && !validRange) {
    throw new SluiceError(
      'UNSUPPORTED_OPERATION',
      `Stream-stream ${name} join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition`,
    );
  }
}
