/**
 * A join of two streams (Spark's StreamingSymmetricHashJoinExec), the plan part: what the driver
 * plans with (each side's expiry, the watermark the join passes on, the condition split by side)
 * and the kind's OperatorPlan. The map side is in task.ts, the batch in batch.ts.
 */
import { walkExpr } from '../../expressions/exprTree.js';
import { joinedSchema } from '../../expressions/exprTypes.js';
import { conjuncts, lowerCaseNames, stateValueWatermark } from '../../expressions/joinBounds.js';
import type { Expr } from '../../expressions/types.js';
import type { Row, Schema } from '../../schema/types.js';
import type { OperatorPlan } from '../operator.js';
import type { StatefulOp, StreamJoinSide } from '../types.js';
import { joinIndexTimeOf, joinRowsIn } from './codec.js';

export type StreamJoinOp = Extract<StatefulOp, { kind: 'streamJoin' }>;
/** 0: the left side, 1: the right. */
export type JoinSide = 0 | 1;

const sideOf = (op: StreamJoinOp, side: JoinSide): StreamJoinSide => (side === 0 ? op.left : op.right);
const keysOf = (op: StreamJoinOp, side: JoinSide): string[] => (side === 0 ? op.leftKeys : op.rightKeys);

/** The time of an event-time value: a TIMESTAMP's own, a window's end; null for null. */
export function eventTimeOf(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'number' ? v : (v as { end: number }).end;
}

/**
 * When a side's stored row expires: its index time, the watermark at or past which it goes (null:
 * never). A key-evicted side's row goes with its key's time; a value-evicted side's once its event
 * time is at or below the condition's bound on it, `watermark + offset` (stateValueWatermark is
 * the watermark plus a constant), so its index time is its event time less the offset.
 */
export function joinExpiry(op: StreamJoinOp, side: JoinSide): ((row: Row) => number | null) | undefined {
  const e = joinExpiryColumn(op, side);
  if (e === undefined) return undefined;
  const { column, offset } = e;
  return (row) => {
    const t = eventTimeOf(row[column]);
    return t === null ? null : t - offset;
  };
}

/** The same, as the column a row's expiry is read from and the offset taken from its time. */
export function joinExpiryColumn(op: StreamJoinOp, side: JoinSide): { column: string; offset: number } | undefined {
  const s = sideOf(op, side);
  if (s.eviction === null) return undefined;
  if (s.eviction.kind === 'key') return { column: keysOf(op, side)[s.eviction.key] as string, offset: 0 };
  const offset = valueEvictionOffset(op, side);
  const column = s.eventTime;
  return offset === undefined || column === null ? undefined : { column, offset };
}

/**
 * The watermark a join passes on to the operator after it (Spark's produceOutputWatermark): the
 * least of its sides' state watermarks (a side evicted by key: the watermark; by value: the bound
 * on its event time), since a row it may still emit is no older; undefined when neither side's
 * state expires (the operator after it then has no watermark).
 */
export function joinOutputWatermark(op: StreamJoinOp, watermarkMs: number): number | undefined {
  let least: number | undefined;
  for (const side of [0, 1] as const) {
    const eviction = sideOf(op, side).eviction;
    const offset = eviction?.kind === 'key' ? 0 : eviction?.kind === 'value' ? valueEvictionOffset(op, side) : undefined;
    if (offset !== undefined) least = least === undefined ? watermarkMs + offset : Math.min(least, watermarkMs + offset);
  }
  return least;
}

/** The constant the condition's bound on a side's event time adds to the other side's watermark, if it is one. */
function valueEvictionOffset(op: StreamJoinOp, side: JoinSide): number | undefined {
  if (op.residual === undefined) return undefined;
  const sides = { side: lowerCaseNames(sideOf(op, side).schema.map((f) => f.name)), watermarked: lowerCaseNames(sideOf(op, side === 0 ? 1 : 0).watermarked) };
  const at0 = stateValueWatermark(op.residual, sides, 0);
  const at1 = stateValueWatermark(op.residual, sides, 1_000_000_000);
  return at0 !== undefined && at1 === at0 + 1_000_000_000 ? at0 : undefined;
}

function columnsOf(e: Expr): string[] {
  const out: string[] = [];
  walkExpr(e, (x) => {
    if (x.op === 'col') out.push(x.name);
  });
  return out;
}

/**
 * Spark's JoinConditionSplitPredicates: a conjunct on the left columns alone (or on none) is the
 * left's pre-join filter, one on the right's alone the right's; the rest is checked on pairs.
 */
export function splitJoinCondition(op: { residual?: Expr | undefined; left: { schema: Schema }; right: { schema: Schema } }): [Expr[], Expr[], Expr[]] {
  const leftNames = new Set(op.left.schema.map((f) => f.name));
  const rightNames = new Set(op.right.schema.map((f) => f.name));
  const parts: [Expr[], Expr[], Expr[]] = [[], [], []];
  for (const c of op.residual === undefined ? [] : conjuncts(op.residual)) {
    const cols = columnsOf(c);
    if (cols.every((n) => leftNames.has(n))) parts[0].push(c);
    else if (cols.every((n) => rightNames.has(n))) parts[1].push(c);
    else parts[2].push(c);
  }
  return parts;
}

export const streamJoin: OperatorPlan<StreamJoinOp> = {
  kind: 'streamJoin',
  progressName: 'symmetricHashJoin',
  // It drops late rows of a watermarked side, and evicts and emits outer rows by the watermark.
  usesWatermark: (op) => op.left.eventTime !== null || op.right.eventTime !== null,
  lateOnMapSide: true,
  outputWatermark: joinOutputWatermark,
  eventTimeColumnsOut: (op) => new Set([...op.left.watermarked, ...op.right.watermarked]),
  outputSchema: (op) => joinedSchema(op, op.left.schema, op.right.schema),
  mapSideExprs: () => [],
  // The time its value records: its rows' least expiry.
  oldValues: { indexTimeOf: () => (_key, value) => joinIndexTimeOf(value), rowsIn: joinRowsIn },
};
