/**
 * The logical plan of a query: a source, stateless operators, at most one stateful operator and
 * the operators after it. It is plain data (the expression tree and operator specs of
 * @sluice/executor), built by the DataFrame API and read by the planner and the executors.
 */
import { planOutputSchema, type Expr, type Op, type Schema, type StatefulOp } from '@sluice/executor';
import type { SourceSpec } from '../sources/resolveSource.js';

export interface LogicalPlan {
  source: SourceSpec;
  /** Operators before the stateful one (all of them in a stateless query). */
  ops: Op[];
  stateful?: StatefulOp;
  /** Operators after the stateful one. */
  post: Op[];
}

/** The watermarked column and delay, from the last withWatermark before the stateful operator. */
export function watermarkOf(plan: LogicalPlan): { column: string; delayMs: number } | undefined {
  const w = plan.ops.findLast((o) => o.kind === 'watermark');
  return w && w.kind === 'watermark' ? { column: w.column, delayMs: w.delayMs } : undefined;
}

/** Schema of the rows entering the stateful operator. */
export function statefulInputSchema(plan: LogicalPlan): Schema {
  return planOutputSchema(plan.ops, plan.source.schema);
}

/** A grouping key carries event time when it is the watermarked column or a window over it. */
export function isEventTimeKey(e: Expr, watermarkColumn: string): boolean {
  const inner = e.op === 'alias' ? e.expr : e;
  const time = inner.op === 'window' ? inner.expr : inner;
  return time.op === 'col' && time.name === watermarkColumn;
}
