/**
 * The registry of stateful operator kinds' plan parts (OperatorPlan, operator.ts): the one place
 * that tells a plan's operator's kind, and what the driver and the workers ask of any operator
 * through it: its names, whether it uses the watermark, its output, the expressions of its map
 * side, and what a repartition needs of its stored values. It imports no kind's task code: the
 * workers find a kind's map side and batch in tasks.ts.
 */
import { valueHeader, type IndexTimeOf, type RowsIn } from '@sluice/state';
import { udfsIn } from '../expressions/udfs.js';
import type { Expr } from '../expressions/types.js';
import type { Schema } from '../schema/types.js';
import type { MapTask } from '../task/messages.js';
import { aggregation } from './aggregate/plan.js';
import { sessionOfKey } from './aggregates.js';
import { dropDuplicates, dropDuplicatesWithinWatermark } from './dedup/plan.js';
import { streamJoin } from './join/plan.js';
import { limit } from './limit/plan.js';
import type { OperatorKind, OperatorPlan } from './operator.js';
import { flatMapGroupsWithStateOperator, transformWithStateOperator } from './processor/plan.js';
import { sessionWindow } from './sessionWindow/plan.js';
import type { OutputMode, StatefulOp } from './types.js';

const PLANS: { [K in OperatorKind]: OperatorPlan<never> } = {
  aggregate: aggregation,
  sessionWindow,
  dropDuplicates,
  dropDuplicatesWithinWatermark,
  streamJoin,
  transformWithState: transformWithStateOperator,
  flatMapGroupsWithState: flatMapGroupsWithStateOperator,
  limit,
};

/** The kind of a plan's operator. */
export function kindOf(op: StatefulOp): OperatorKind {
  if (op.kind === 'aggregate') return op.keys.some((k) => sessionOfKey(k) !== undefined) ? 'sessionWindow' : 'aggregate';
  if (op.kind === 'transformWithState') return op.api === 'transformWithState' ? 'transformWithState' : 'flatMapGroupsWithState';
  return op.kind;
}

/** The plan part of the kind of `op`. */
export function operatorOf<O extends StatefulOp>(op: O): OperatorPlan<O> {
  return PLANS[kindOf(op)] as unknown as OperatorPlan<O>;
}

/** The kind a state layout file names (its progress name), for tools that have the checkpoint but not the query. */
export function operatorNamed(progressName: string | undefined): OperatorPlan | undefined {
  return Object.values(PLANS).find((o) => o.progressName === progressName) as OperatorPlan | undefined;
}

/**
 * Whether a stateful operator uses the watermark, decided here once for the driver and the
 * workers alike: the driver runs a no-data batch only for an operator that uses it, map tasks drop
 * late rows, and the state task drops late keys and evicts state. As in Spark, an operator uses it
 * when the query has a watermark and its kind says so (keyed by event time, for an aggregation);
 * complete mode never does: it neither drops late rows nor evicts, so it runs no no-data batches.
 */
export function operatorUsesWatermark(op: StatefulOp, hasWatermark: boolean, outputMode: OutputMode): boolean {
  return hasWatermark && outputMode !== 'complete' && operatorOf(op).usesWatermark(op);
}

/** The schema of the rows a stateful operator emits from rows of `inputSchema` (it checks the columns it names). */
export function statefulOutputSchema(op: StatefulOp, inputSchema: Schema): Schema {
  return operatorOf(op).outputSchema(op, inputSchema);
}

/**
 * A stored row's eviction index time, read from the row itself (a repartition writes each moved
 * row's index entry beside it): its value header's, or for a value written before the header, what
 * its kind knows of those (nothing: undefined, the repartition scans the index).
 */
export function indexTimeOf(op: StatefulOp, stateInputSchema: Schema, usesWatermark: boolean): IndexTimeOf {
  const old = operatorOf(op).oldValues?.indexTimeOf(op, stateInputSchema, usesWatermark);
  return (key, value) => {
    const h = valueHeader(value);
    return h === undefined ? old?.(key, value) : h.indexTime;
  };
}

/** How a repartition counts the rows of an operator's stored values: by their header (one row for a value before it, unless its kind says). */
export function rowsInOf(op: StatefulOp | OperatorPlan | undefined): { rowsIn: RowsIn } {
  const kind = op === undefined ? undefined : 'progressName' in op ? op : operatorOf(op);
  const old = kind?.oldValues?.rowsIn;
  return { rowsIn: (value) => valueHeader(value)?.rows ?? old?.(value) ?? 1 };
}

/** The expressions a map side evaluates, for loading their udfs before it runs (tasks.ts). */
export function mapSideExprs(op: StatefulOp): Expr[] {
  return operatorOf(op).mapSideExprs(op);
}

/** Whether a map task calls a udf, in its operators or its stateful operator's keys and arguments. */
export function mapTaskCallsUdfs(task: Pick<MapTask, 'ops' | 'stateful'>): boolean {
  return udfsIn(task.ops).length > 0 || udfsIn(mapSideExprs(task.stateful)).length > 0;
}
