/**
 * transformWithState and flatMapGroupsWithState (Spark's TransformWithStateExec and
 * FlatMapGroupsWithStateExec), the plan part: the two kinds' OperatorPlans, and the initial state
 * rows the driver packs for the first batch's state tasks. The map side and the batch are in
 * task.ts (batch.ts, handle.ts, calls.ts); a key's stored state in state.ts.
 */
import type { Row } from '../../schema/types.js';
import { plainPackr } from '../../task/packers.js';
import type { OperatorPlan } from '../operator.js';
import type { TransformWithStateOp } from '../types.js';
import { stateRowsIn } from './state.js';

/** An initial state's rows (engine form) as the first batch's state tasks carry them. */
export function packInitialState(rows: readonly Row[]): Uint8Array {
  return plainPackr.pack(rows);
}

/** The rows packInitialState packed. */
export function initialStateRows(packed: Uint8Array): Row[] {
  return plainPackr.unpack(packed) as Row[];
}

/** The plan parts of the two processor kinds that are one. */
const processorPlan = {
  // Event-time mode drops late rows and fires timers by the watermark.
  usesWatermark: (op: TransformWithStateOp) => op.timeMode === 'eventTime',
  lateOnMapSide: false,
  // A processor's rows are its own: none carries the event time on (Spark 4.0 without eventTimeColumnName).
  eventTimeColumnsOut: () => new Set<string>(),
  outputSchema: (op: TransformWithStateOp) => op.outputSchema,
  mapSideExprs: (op: TransformWithStateOp) => op.keys,
};

/** transformWithState (Spark's TransformWithStateExec): a key's value holds its variables' rows. */
export const transformWithStateOperator: OperatorPlan<TransformWithStateOp> = {
  kind: 'transformWithState',
  progressName: 'transformWithStateExec',
  ...processorPlan,
  // A key may have several index entries (its timers and its expiry): a repartition scans the index.
  oldValues: { indexTimeOf: () => () => undefined, rowsIn: stateRowsIn },
};

/** flatMapGroupsWithState and mapGroupsWithState (Spark's FlatMapGroupsWithStateExec): a key's GroupState is one row. */
export const flatMapGroupsWithStateOperator: OperatorPlan<TransformWithStateOp> = {
  kind: 'flatMapGroupsWithState',
  progressName: 'flatMapGroupsWithState',
  ...processorPlan,
  oldValues: { indexTimeOf: () => () => undefined },
};
