/**
 * Session windows: an aggregation grouped by session_window(time, gap) and other keys (Spark's
 * SessionWindowStateStoreRestoreExec and SessionWindowStateStoreSaveExec), the plan part. The map
 * side and the batch are in task.ts, a key's stored sessions in codec.ts.
 */
import type { Expr } from '../../expressions/types.js';
import { aggregationExprs, aggregateEventTimeColumns, type AggregateOp } from '../aggregate/plan.js';
import { aggregateOutputSchema, sessionOfKey } from '../aggregates.js';
import type { OperatorPlan } from '../operator.js';
import type { StatefulOp } from '../types.js';
import { sessionHeader } from './codec.js';

/** The hidden names of the map side's session start key and session end aggregate. */
const SESSION_START = '__session_start';
const SESSION_END = '__session_end';

/** The index of `op`'s session window key, or -1 (not an aggregation, or no session window). */
export function sessionKeyOf(op: StatefulOp): number {
  return op.kind === 'aggregate' ? op.keys.findIndex((k) => sessionOfKey(k) !== undefined) : -1;
}

/**
 * The aggregation the map side of a session aggregation runs: the other keys and the session's
 * start as keys (only the other keys route), the aggregates and then max(session end).
 */
export function sessionMapOp(op: AggregateOp): AggregateOp {
  const s = sessionKeyOf(op);
  const [time, gap] = sessionOfKey(op.keys[s] as Expr)!.args as [Expr, Expr];
  const end: Expr = { op: 'binary', fn: 'plus', left: time, right: { op: 'cast', expr: gap, to: 'interval' } };
  const others = op.keys.filter((_, i) => i !== s);
  return {
    kind: 'aggregate',
    keys: [...others, time],
    keyNames: [...op.keyNames.filter((_, i) => i !== s), SESSION_START],
    aggs: [...op.aggs, { fn: 'max', arg: end, name: SESSION_END }],
    eventTimeKey: null,
    routeKeys: others.length,
  };
}

/** An aggregation grouped by a session window (Spark's SessionWindowStateStoreSaveExec). */
export const sessionWindow: OperatorPlan<AggregateOp> = {
  kind: 'sessionWindow',
  progressName: 'sessionWindowStateStoreSaveExec',
  usesWatermark: (op) => op.eventTimeKey !== null,
  lateOnMapSide: false,
  eventTimeColumnsOut: aggregateEventTimeColumns,
  outputSchema: aggregateOutputSchema,
  mapSideExprs: (op) => aggregationExprs(sessionMapOp(op)),
  oldValues: { indexTimeOf: () => (_key, value) => sessionHeader(value).indexTime, rowsIn: (value) => sessionHeader(value).count },
};
