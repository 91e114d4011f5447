/**
 * The logical plan of a query: a source (or, for a union, several inputs, each a source and its
 * own operators), stateless operators, then either a list of stateful operators (each with the
 * stateless operators after it) or a stateless shuffle and the operators after it. It is plain data (the expression tree and operator specs of @sluice/executor), built by the
 * DataFrame API and read by the planner and the executors.
 */
import { exprName, operatorOf, planOutputSchema, statefulOutputSchema, type Expr, type Op, type Schema, type StatefulOp } from '@sluice/executor';
import type { SourceSpec } from '../sources/resolveSource.js';

/** One input of a union: its source, and the operators its rows go through before the union. */
export interface PlanInput {
  source: SourceSpec;
  ops: Op[];
}

/**
 * Where a stateful operator's rows come from: the query's inputs [start, end) (the map tasks read
 * them), or the rows operator `operator` emits; `side` is the join side they are, when the operator
 * is a join of two streams.
 */
export type OperatorFeed = { sources: [start: number, end: number]; side?: 0 | 1 } | { operator: number; side?: 0 | 1 };

/** A stateful operator of the plan: the operator, the stateless operators after it, and where its rows come from. */
export interface ChainedOperator {
  stateful: StatefulOp;
  /** The operators after it, before the next stateful one (or the sink). */
  post: Op[];
  /** Absent: every input for the first operator, the rows of the operator before it for the others. */
  feeds?: OperatorFeed[];
}

export interface LogicalPlan {
  /** The source; for a union, the first input's. */
  source: SourceSpec;
  /** A union of streams: its inputs, in order (sources 0, 1, … of the checkpoint). */
  inputs?: PlanInput[];
  /** Operators before the stateful ones or the exchange (all of them in a stateless query); after a union, those past it. */
  ops: Op[];
  /**
   * The stateful operators, by id (absent in a stateless query, never empty). Each takes the rows
   * of its feeds, after their `post`. With feeds the operators form a tree, not a line: a join of
   * two streams whose sides have stateful operators of their own (StreamJoinPlanner). Ids go in
   * data order, so each operator's feeds come before it. Read them with statefulOperators.
   */
  operators?: ChainedOperator[];
  /**
   * A stateless shuffle (repartition; never with stateful operators): rows are hashed by `keys`
   * (none: round robin) into `partitions` partitions, or `sluice.sql.shuffle.partitions` of the
   * batch when unset; `post` runs after it.
   */
  exchange?: { keys: Expr[]; partitions?: number; post: Op[] };
  /** The static sides of joins, by the `broadcastId` of their join operator (the driver reads them). */
  statics?: Array<{ id: string; plan: LogicalPlan }>;
  /** The initial states of transformWithState operators, static plans by the id their operator names (read for the first batch). */
  initialStates?: Array<{ id: string; plan: LogicalPlan }>;
}

/** The query's inputs: the union's, or the one source with no operators of its own. */
export function planInputs(plan: LogicalPlan): PlanInput[] {
  return plan.inputs ?? [{ source: plan.source, ops: [] }];
}

type Watermark = { column: string; delayMs: number };

const lastWatermark = (ops: readonly Op[]): Watermark | undefined => {
  const w = ops.findLast((o) => o.kind === 'watermark');
  return w && w.kind === 'watermark' ? { column: w.column, delayMs: w.delayMs } : undefined;
};

/**
 * The watermarked column and delay, from the last withWatermark before the stateful operator (for
 * a union whose inputs carry their own, the first input's).
 */
export function watermarkOf(plan: LogicalPlan): Watermark | undefined {
  return (
    lastWatermark(plan.ops) ??
    planInputs(plan)
      .map((i) => lastWatermark(i.ops))
      .find((w) => w !== undefined)
  );
}

/**
 * The watermark delay an event-time column carries (Spark keeps it in the column's metadata): after
 * a join of two streams, that of the side whose watermarked column it is; else the query's.
 */
export function watermarkDelayOf(plan: LogicalPlan, column: string): number | undefined {
  const ops = statefulOperators(plan);
  const join = ops.at(-1);
  if (join?.stateful.kind === 'streamJoin' && !join.stateful.left.watermarked.includes(column) && join.stateful.right.watermarked.includes(column)) {
    const inputs = planInputs(plan);
    // The inputs under the right side's feed, through the operators that feed it.
    const under = (f: OperatorFeed): number[] =>
      'sources' in f
        ? Array.from({ length: f.sources[1] - f.sources[0] }, (_, k) => f.sources[0] + k)
        : (ops[f.operator] as PlannedOperator).feeds.flatMap(under);
    const right = join.feeds.filter((f) => f.side === 1).flatMap(under);
    return right.map((i) => lastWatermark((inputs[i] as PlanInput).ops)).find((w) => w !== undefined)?.delayMs;
  }
  return watermarkOf(plan)?.delayMs;
}

/**
 * The watermark inputs of the query, as Spark counts its EventTimeWatermark operators: one per
 * union input that has a withWatermark (`input` is its index), or the one of the query.
 */
export function watermarkInputs(plan: LogicalPlan): Array<{ input: number | undefined; delayMs: number }> {
  const own = lastWatermark(plan.ops);
  if (own || !plan.inputs) return own ? [{ input: undefined, delayMs: own.delayMs }] : [];
  return plan.inputs.flatMap((i, input) => {
    const w = lastWatermark(i.ops);
    return w ? [{ input, delayMs: w.delayMs }] : [];
  });
}

/** Schema of the rows entering `plan.ops`. */
function opsInputSchema(plan: LogicalPlan): Schema {
  const first = planInputs(plan)[0] as PlanInput;
  return planOutputSchema(first.ops, first.source.schema);
}

/** Schema of the rows entering the first stateful operator (or the exchange). */
export function statefulInputSchema(plan: LogicalPlan): Schema {
  return planOutputSchema(plan.ops, opsInputSchema(plan));
}

/** A stateful operator of a query, by id (its index in statefulOperators). */
export interface PlannedOperator {
  stateful: StatefulOp;
  /** Schema of its input rows (a join's are its sides' schemas). */
  inputSchema: Schema;
  /** The operators after it, before the next stateful one (or the sink). */
  post: Op[];
  feeds: OperatorFeed[];
}

/** The query's stateful operators in id order, each with the schema of its input rows, the operators after it and its feeds. */
export function statefulOperators(plan: LogicalPlan): PlannedOperator[] {
  const inputs = planInputs(plan);
  const out: PlannedOperator[] = [];
  for (const [id, { stateful, post, feeds }] of (plan.operators ?? []).entries()) {
    const fed = feeds ?? (id === 0 ? [{ sources: [0, inputs.length] }] : [{ operator: id - 1 }]);
    const first = fed[0] as OperatorFeed;
    let inputSchema: Schema;
    if ('operator' in first) inputSchema = operatorOutputSchema(out[first.operator] as PlannedOperator);
    else {
      const input = inputs[first.sources[0]] as PlanInput;
      inputSchema = planOutputSchema(plan.ops, planOutputSchema(input.ops, input.source.schema));
    }
    out.push({ stateful, inputSchema, post, feeds: fed });
  }
  return out;
}

/** The schema of the rows an operator emits, after its `post`. */
function operatorOutputSchema(op: PlannedOperator): Schema {
  return planOutputSchema(op.post, statefulOutputSchema(op.stateful, op.inputSchema));
}

/** The operator (and join side) whose map side reads each input, by input index. */
export function sourceRoutes(ops: readonly PlannedOperator[]): Array<{ operator: number; side?: 0 | 1 }> {
  const routes: Array<{ operator: number; side?: 0 | 1 }> = [];
  ops.forEach((op, operator) => {
    for (const f of op.feeds) {
      if ('sources' in f) for (let i = f.sources[0]; i < f.sources[1]; i++) routes[i] = { operator, ...(f.side !== undefined && { side: f.side }) };
    }
  });
  return routes;
}

/** The operator each operator's rows go to (and as which join side), by id; undefined for the last, whose rows go to the sink. */
export function consumersOf(ops: readonly PlannedOperator[]): Array<{ operator: number; side?: 0 | 1 } | undefined> {
  const consumers: Array<{ operator: number; side?: 0 | 1 } | undefined> = ops.map(() => undefined);
  ops.forEach((op, operator) => {
    for (const f of op.feeds) if ('operator' in f) consumers[f.operator] = { operator, ...(f.side !== undefined && { side: f.side }) };
  });
  return consumers;
}

/** The schema of the rows a plan outputs. */
export function planOutput(plan: LogicalPlan): Schema {
  const last = statefulOperators(plan).at(-1);
  if (last) return operatorOutputSchema(last);
  return plan.exchange ? planOutputSchema(plan.exchange.post, statefulInputSchema(plan)) : statefulInputSchema(plan);
}

/**
 * The columns entering the stateful operator that carry event time: the watermarked column, and
 * every column projected from it or from a window over it under any name. Spark keeps the
 * watermark on such attributes (SPARK-27340), so `select(window('t', ...).alias('w'))` then
 * `groupBy('w')` is keyed by event time.
 */
export function eventTimeColumns(plan: LogicalPlan): Set<string> {
  const inputs = planInputs(plan);
  const ofInput = (i: number): Set<string> => {
    const input = inputs[i] as PlanInput;
    return eventTimeColumnsOf({ source: input.source, ops: [...input.ops, ...plan.ops] });
  };
  // Past stateful operators: the columns of their output that carry event time, through their posts.
  const emitted: Array<Set<string>> = [];
  for (const { stateful, inputSchema, post, feeds } of statefulOperators(plan)) {
    const first = feeds[0] as OperatorFeed;
    const columns = operatorOf(stateful).eventTimeColumnsOut(
      stateful,
      'operator' in first ? (emitted[first.operator] as Set<string>) : ofInput(first.sources[0]),
    );
    emitted.push(eventTimeThrough(post, statefulOutputSchema(stateful, inputSchema), columns));
  }
  return emitted.at(-1) ?? ofInput(0);
}

/** Event-time columns through stateless operators (a select keeps those it projects, under their new names). */
function eventTimeThrough(ops: readonly Op[], input: Schema, start: ReadonlySet<string>): Set<string> {
  let schema = input;
  let columns = new Set(start);
  for (const op of ops) {
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

/** The same, for the rows leaving one input's operators. */
export function eventTimeColumnsOf(input: PlanInput): Set<string> {
  return eventTimeThrough(input.ops, input.source.schema, new Set());
}

/** An event-time column, or a window over one, under any number of aliases. */
export function carriesEventTime(e: Expr, columns: ReadonlySet<string>): boolean {
  let inner = e;
  while (inner.op === 'alias') inner = inner.expr;
  if (inner.op === 'window') return carriesEventTime(inner.expr, columns);
  if (inner.op === 'call' && inner.fn === 'session_window') return carriesEventTime(inner.args[0] as Expr, columns);
  // window_time(w): the event time of a window an earlier aggregation emitted.
  if (inner.op === 'call' && inner.fn === 'window_time') return carriesEventTime(inner.args[0] as Expr, columns);
  return inner.op === 'col' && columns.has(inner.name);
}
