/**
 * The registry of stateful operator kinds' task parts (OperatorTask, operator.ts), for the worker
 * threads alone: a kind's map side, fed the rows of a map task (or of the state task of the
 * operator before it), its batch on a shard, and when the shard next needs a batch without data.
 * What the driver asks of a kind is in registry.ts, which the engine entry uses.
 */
import { loadUdfs, type UdfRegistry } from '../expressions/udfs.js';
import type { Schema } from '../schema/types.js';
import type { StateLayoutMsg } from '../task/messages.js';
import { aggregationTask } from './aggregate/task.js';
import { dedupTask } from './dedup/task.js';
import { streamJoinTask } from './join/task.js';
import { limitTask } from './limit/task.js';
import type { ColumnPartials, MapSideInput, OperatorKind, OperatorTask, Partials } from './operator.js';
import { processorTask } from './processor/task.js';
import { kindOf, mapSideExprs } from './registry.js';
import { sessionWindowTask } from './sessionWindow/task.js';
import type { StatefulOp } from './types.js';

const TASKS: { [K in OperatorKind]: OperatorTask<never> } = {
  aggregate: aggregationTask,
  sessionWindow: sessionWindowTask,
  dropDuplicates: dedupTask,
  dropDuplicatesWithinWatermark: dedupTask,
  streamJoin: streamJoinTask,
  transformWithState: processorTask,
  flatMapGroupsWithState: processorTask,
  limit: limitTask,
};

/** The task part of the kind of `op`: its batch (`run`) and its wake-up (`wakeMs`). */
export function taskOf<O extends StatefulOp>(op: O): OperatorTask<O> {
  return TASKS[kindOf(op)] as unknown as OperatorTask<O>;
}

/** The aggregation `op`'s map side runs, when it runs one: a map task over column batches then runs it on columns. */
export function mapSideAggregation(op: StatefulOp): Extract<StatefulOp, { kind: 'aggregate' }> | undefined {
  return taskOf(op).mapSideAggregation?.(op);
}

/** Imports the udfs that `op`'s map side calls (once per worker). */
export async function loadMapSideUdfs(op: StatefulOp, udfs: UdfRegistry): Promise<void> {
  await loadUdfs(mapSideExprs(op), udfs);
}

/** Whether `op`'s kind has a map side over column batches. */
export function takesColumns(op: StatefulOp): boolean {
  return taskOf(op).mapSideColumns !== undefined;
}

/** `op`'s map side over column batches, when its kind has one. */
export function mapSideColumns(op: StatefulOp, input: MapSideInput): ColumnPartials | undefined {
  return taskOf(op).mapSideColumns?.(op, input);
}

/**
 * A task's partials, fed one row at a time (rows of `schema`, entering the stateful operator):
 * `finish` encodes its records in one block per partition of `layout`. Synchronous: udfs must be loaded.
 */
export function streamPartials(
  op: StatefulOp,
  schema: Schema,
  layout: StateLayoutMsg,
  udfs: UdfRegistry = new Map(),
  lateThresholdMs: number | null = null,
  joinSide: 0 | 1 = 0,
): Partials {
  return taskOf(op).mapSide(op, { schema, layout, udfs, lateThresholdMs, joinSide });
}
