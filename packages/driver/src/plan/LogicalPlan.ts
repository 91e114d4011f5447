/**
 * The logical plan of a query: a source, stateless operators, at most one stateful operator and
 * the operators after it. It is plain data (the expression tree and operator specs of
 * @sluice/executor), built by the DataFrame API and read by the planner and the executors.
 */
import { exprName, planOutputSchema, type Expr, type Op, type Schema, type StatefulOp } from '@sluice/executor';
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

/**
 * The columns entering the stateful operator that carry event time: the watermarked column, and
 * every column projected from it or from a window over it under any name. Spark keeps the
 * watermark on such attributes (SPARK-27340), so `select(window('t', ...).alias('w'))` then
 * `groupBy('w')` is keyed by event time.
 */
export function eventTimeColumns(plan: LogicalPlan): Set<string> {
  let schema = plan.source.schema;
  let columns = new Set<string>();
  for (const op of plan.ops) {
    if (op.kind === 'watermark') columns = new Set([op.column]);
    else if (op.kind === 'project') {
      const next = new Set<string>();
      for (const e of op.exprs) if (carriesEventTime(e, columns)) next.add(exprName(e, schema));
      columns = next;
    }
    schema = planOutputSchema([op], schema);
  }
  return columns;
}

/** An event-time column, or a window over one, under any number of aliases. */
export function carriesEventTime(e: Expr, columns: ReadonlySet<string>): boolean {
  let inner = e;
  while (inner.op === 'alias') inner = inner.expr;
  if (inner.op === 'window') return carriesEventTime(inner.expr, columns);
  return inner.op === 'col' && columns.has(inner.name);
}
