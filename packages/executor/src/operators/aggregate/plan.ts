/**
 * An aggregation by keys, windows among them (Spark's StateStoreSaveExec), the plan part. The
 * reduce side is in task.ts, the map side in columns/columnAggregate.ts.
 */
import { decodeDataKey, decodeKey } from '@sluice/state';
import { exprType } from '../../expressions/exprTypes.js';
import type { Expr } from '../../expressions/types.js';
import { aggregateOutputSchema, eventTimeOfKey } from '../aggregates.js';
import type { OperatorPlan } from '../operator.js';
import type { StatefulOp } from '../types.js';

export type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

/** The expressions an aggregation's map side evaluates: its keys and its aggregates' arguments. */
export const aggregationExprs = (op: AggregateOp): Expr[] => [...op.keys, ...op.aggs.flatMap((a) => (a.arg === null ? [] : [a.arg]))];

/** An aggregation's output carries event time in its event-time key (a window, or the watermarked column), if it has one. */
export const aggregateEventTimeColumns = (op: AggregateOp): Set<string> => new Set(op.eventTimeKey === null ? [] : [op.keyNames[op.eventTimeKey] as string]);

export const aggregation: OperatorPlan<AggregateOp> = {
  kind: 'aggregate',
  progressName: 'stateStoreSave',
  // Keyed by event time: a window over the watermarked column, or that column itself.
  usesWatermark: (op) => op.eventTimeKey !== null,
  lateOnMapSide: false,
  eventTimeColumnsOut: aggregateEventTimeColumns,
  outputSchema: aggregateOutputSchema,
  mapSideExprs: aggregationExprs,
  oldValues: {
    // The event time of its key (a window's end, or the watermarked column's value), decoded from the key.
    indexTimeOf(op, inputSchema) {
      const keyTypes = op.keys.map((k) => exprType(k, inputSchema));
      const timeOf = eventTimeOfKey(op, keyTypes);
      if (timeOf === undefined) return () => null;
      return (key) => timeOf(decodeKey(decodeDataKey(key).key, keyTypes)) ?? null;
    },
  },
};
