import { stateRowsIn } from './state.js';
import { groupPartials } from '../mapSide.js';
import type { MapSideInput, StatefulOperator } from '../operator.js';
import type { TransformWithStateOp } from '../types.js';
import { processorWakeMs, transformWithState } from './batch.js';

/** The parts of the two processor kinds that are one: their map side, their batch, their index. */
const processorKind = {
  // Event-time mode drops late rows and fires timers by the watermark.
  usesWatermark: (op: TransformWithStateOp) => op.timeMode === 'eventTime',
  lateOnMapSide: false,
  // A processor's rows are its own: none carries the event time on (Spark 4.0 without eventTimeColumnName).
  eventTimeColumnsOut: () => new Set<string>(),
  outputSchema: (op: TransformWithStateOp) => op.outputSchema,
  mapSideExprs: (op: TransformWithStateOp) => op.keys,
  mapSide: (op: TransformWithStateOp, input: MapSideInput) => groupPartials(op, input.schema, input.layout, input.udfs),
  run: transformWithState,
  wakeMs: processorWakeMs,
};

/** transformWithState (Spark's TransformWithStateExec): a key's value holds its variables' rows. */
export const transformWithStateOperator: StatefulOperator<TransformWithStateOp> = {
  kind: 'transformWithState',
  progressName: 'transformWithStateExec',
  ...processorKind,
  // A key may have several index entries (its timers and its expiry): a repartition scans the index.
  oldValues: { indexTimeOf: () => () => undefined, rowsIn: stateRowsIn },
};

/** flatMapGroupsWithState and mapGroupsWithState (Spark's FlatMapGroupsWithStateExec): a key's GroupState is one row. */
export const flatMapGroupsWithStateOperator: StatefulOperator<TransformWithStateOp> = {
  kind: 'flatMapGroupsWithState',
  progressName: 'flatMapGroupsWithState',
  ...processorKind,
  oldValues: { indexTimeOf: () => () => undefined },
};
