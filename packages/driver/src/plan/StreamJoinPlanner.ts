/**
 * The plan of a join of two streams (DataFrame.join of two streaming DataFrames), as Spark's
 * optimizer and planner shape it:
 *
 * - the query reads both sides' inputs, the left's first, each with its own operators;
 * - the conditions on one side alone go into that side where the join type allows it (never into
 *   a side whose rows an outer join keeps: PushPredicateThroughJoin), and so do the conditions
 *   Spark infers from the equalities (InferFiltersFromConstraints: a key is not null, and what
 *   holds of one side's key holds of the other's); each moves through the side's selects and
 *   below its withWatermark unless it reads the watermarked column, so rows it drops do not move
 *   the watermark;
 * - each side's state expires by a watermarked join key, or by the bound the condition puts on its
 *   event time (StreamJoinSide.eviction).
 */
import {
  conjuncts,
  joinExpiry,
  splitJoinCondition,
  walkExpr,
  type Expr,
  type Op,
  type Schema,
  type StreamJoinOp,
  type StreamJoinSide,
  type StreamJoinType,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import {
  eventTimeColumns,
  eventTimeColumnsOf,
  planInputs,
  statefulOperators,
  type ChainedOperator,
  type LogicalPlan,
  type OperatorFeed,
  type PlanInput,
} from './LogicalPlan.js';

const STREAM_JOIN_TYPES: Record<string, StreamJoinType> = {
  inner: 'inner',
  left: 'left_outer',
  leftouter: 'left_outer',
  right: 'right_outer',
  rightouter: 'right_outer',
  outer: 'full_outer',
  full: 'full_outer',
  fullouter: 'full_outer',
  semi: 'left_semi',
  leftsemi: 'left_semi',
  anti: 'left_anti',
  leftanti: 'left_anti',
};

/** A join of two streams' type, by Spark's names in any case, with or without underscores; left anti is refused as in Spark. */
function streamJoinType(how: string): StreamJoinOp['how'] {
  const t = STREAM_JOIN_TYPES[String(how).toLowerCase().replaceAll('_', '')];
  if (t === undefined) {
    throw new SluiceError('UNSUPPORTED_OPERATION', `join type ${how}: two streams join as inner, left_outer, right_outer, full_outer or left_semi`, {
      option: 'how',
    });
  }
  if (t === 'left_anti')
    throw new SluiceError('UNSUPPORTED_OPERATION', 'Left anti joins with a streaming DataFrame/Dataset on the right are not supported', { option: 'how' });
  return t;
}

/** `exprs` joined by AND (undefined for none). */
export function andAll(exprs: readonly Expr[]): Expr | undefined {
  return exprs.reduce<Expr | undefined>((acc, e) => (acc === undefined ? e : { op: 'binary', fn: 'and', left: acc, right: e }), undefined);
}

/** The column names an expression reads. */
export function exprColumns(e: Expr): string[] {
  const out: string[] = [];
  walkExpr(e, (x) => {
    if (x.op === 'col') out.push(x.name);
  });
  return out;
}

export interface JoinSidePlan {
  plan: LogicalPlan;
  schema: Schema;
}

export interface JoinKeys {
  keys: string[];
  /** Absent: a join on names (the same on both sides). */
  rightKeys?: string[];
  nullSafe?: boolean[];
  residual?: Expr;
}

/** The plan of `left` joined with `right` on `on` (keys and residual from DataFrame's equiJoinKeys). */
export function planStreamJoin(left: JoinSidePlan, right: JoinSidePlan, on: JoinKeys, how: string): LogicalPlan {
  for (const side of [left, right]) {
    if (side.plan.exchange) throw new SluiceError('UNSUPPORTED_OPERATION', 'a join of two streams cannot follow a repartition on either side');
    if (side.plan.inputs && side.plan.ops.some((o) => o.kind === 'watermark')) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'a side of a join of two streams is a union with a withWatermark after it: put withWatermark on its inputs',
      );
    }
  }
  const type = streamJoinType(how);
  const rightKeys = on.rightKeys ?? on.keys;
  const [leftOnly, rightOnly, both] = splitJoinCondition({ residual: on.residual, left, right });
  const intoLeft = type === 'inner' || type === 'right_outer' || type === 'left_semi';
  const intoRight = type === 'inner' || type === 'left_outer' || type === 'left_semi';
  const residual = andAll([...(intoLeft ? [] : leftOnly), ...(intoRight ? [] : rightOnly), ...both]);
  const sides = (side: JoinSidePlan): PlanInput[] => planInputs(side.plan).map((i) => ({ source: i.source, ops: [...i.ops, ...side.plan.ops] }));
  let leftInputs = sides(left);
  let rightInputs = sides(right);
  // A side with stateful operators of its own: its rows are those its last operator emits. Ids: the
  // right side's operators, then the left's, then the join; so, reversed, progress lists them as
  // Spark's plan does (the join, then its left subtree, then its right).
  const rightOps = renumbered(right.plan, leftInputs.length, 0);
  const leftOps = renumbered(left.plan, 0, rightOps.length);
  const pairs = on.keys.map((k, i) => [k, rightKeys[i] as string] as const).filter((_, i) => on.nullSafe?.[i] !== true);
  const endOps = (from: PlanInput[], ops: ChainedOperator[]): readonly Op[] =>
    ops.length > 0 ? (ops.at(-1) as ChainedOperator).post : from.length === 1 ? (from[0] as PlanInput).ops : [];
  const inferred = (from: PlanInput[], ops: ChainedOperator[], pushed: Expr[], rename: ReadonlyMap<string, string>, own: readonly string[]): Expr[] => [
    ...own.map((k): Expr => ({ op: 'unary', fn: 'isNotNull', expr: { op: 'col', name: k } })),
    ...[...outputConstraints(endOps(from, ops)), ...pushed].flatMap((c) => renamed(c, rename) ?? []),
  ];
  const toLeft = intoLeft
    ? [
        ...leftOnly,
        ...inferred(
          rightInputs,
          rightOps,
          intoRight ? rightOnly : [],
          new Map(pairs.map(([l, r]) => [r, l])),
          pairs.map(([l]) => l),
        ),
      ]
    : [];
  const toRight = intoRight
    ? [
        ...rightOnly,
        ...inferred(
          leftInputs,
          leftOps,
          intoLeft ? leftOnly : [],
          new Map(pairs),
          pairs.map(([, r]) => r),
        ),
      ]
    : [];
  // Into a side's inputs, or after its last stateful operator (never below it: that would change what it aggregates).
  const push = (inputs: PlanInput[], ops: ChainedOperator[], conds: Expr[]): PlanInput[] => {
    const last = ops.at(-1);
    if (last === undefined) return inputs.map((i) => ({ ...i, ops: pushFilters(i.ops, conds) }));
    last.post = pushFilters(last.post, conds);
    return inputs;
  };
  leftInputs = push(leftInputs, leftOps, toLeft);
  rightInputs = push(rightInputs, rightOps, toRight);
  const sideOf = (side: JoinSidePlan, input: PlanInput): StreamJoinSide => {
    const watermarked = side.plan.operators ? eventTimeColumns(side.plan) : eventTimeColumnsOf(input);
    const eventTime = side.schema.find((f) => watermarked.has(f.name))?.name ?? null;
    return { schema: side.schema, watermarked: [...watermarked], eventTime, eviction: null };
  };
  const base: StreamJoinOp = {
    kind: 'streamJoin',
    how: type,
    leftKeys: on.keys,
    rightKeys,
    ...(on.nullSafe !== undefined && { nullSafe: on.nullSafe }),
    using: on.rightKeys === undefined,
    ...(residual !== undefined && { residual }),
    left: sideOf(left, leftInputs[0] as PlanInput),
    right: sideOf(right, rightInputs[0] as PlanInput),
  };
  const op: StreamJoinOp = { ...base, left: { ...base.left, eviction: evictionOf(base, 0) }, right: { ...base.right, eviction: evictionOf(base, 1) } };
  const statics = [...(left.plan.statics ?? []), ...(right.plan.statics ?? [])];
  const n = leftInputs.length + rightInputs.length;
  const joinFeeds: OperatorFeed[] = [
    leftOps.length > 0 ? { operator: rightOps.length + leftOps.length - 1, side: 0 } : { sources: [0, leftInputs.length], side: 0 },
    rightOps.length > 0 ? { operator: rightOps.length - 1, side: 1 } : { sources: [leftInputs.length, n], side: 1 },
  ];
  return {
    source: (leftInputs[0] as PlanInput).source,
    inputs: [...leftInputs, ...rightInputs],
    ops: [],
    operators: [...rightOps, ...leftOps, { stateful: op, post: [], feeds: joinFeeds }],
    ...(statics.length > 0 && { statics }),
  };
}

/** A side's stateful operators, with their feeds in the joined query's numbering (its inputs from `sourceOffset` on, its operators from `idOffset`). */
function renumbered(plan: LogicalPlan, sourceOffset: number, idOffset: number): ChainedOperator[] {
  return statefulOperators(plan).map(({ stateful, post, feeds }) => ({
    stateful,
    post: [...post],
    feeds: feeds.map(
      (f): OperatorFeed =>
        'sources' in f ? { ...f, sources: [f.sources[0] + sourceOffset, f.sources[1] + sourceOffset] } : { ...f, operator: f.operator + idOffset },
    ),
  }));
}

/**
 * How a side's state rows expire (Spark's getStateWatermarkPredicates): both sides by the first join
 * key that carries a watermark (a left key, else a right one); else a side by its event time when
 * the condition bounds it by the other side's watermark; else never.
 */
function evictionOf(op: StreamJoinOp, side: 0 | 1): StreamJoinSide['eviction'] {
  const onLeft = op.leftKeys.findIndex((k) => op.left.watermarked.includes(k));
  const key = onLeft >= 0 ? onLeft : op.rightKeys.findIndex((k) => op.right.watermarked.includes(k));
  if (key >= 0) return { kind: 'key', key };
  const s = side === 0 ? op.left : op.right;
  const trial: StreamJoinOp = { ...op, [side === 0 ? 'left' : 'right']: { ...s, eviction: { kind: 'value' } } };
  return joinExpiry(trial, side) === undefined ? null : { kind: 'value' };
}

/** `cond` with its columns renamed by `names`, or undefined when it reads a column `names` lacks. */
function renamed(cond: Expr, names: ReadonlyMap<string, string>): Expr | undefined {
  return substituted(cond, new Map([...names].map(([from, to]) => [from, { op: 'col', name: to } as Expr])));
}

/** `cond` with the columns in `sources` replaced by their expressions, or undefined when it reads another column (or a lambda or udf). */
function substituted(cond: Expr, sources: ReadonlyMap<string, Expr>): Expr | undefined {
  let simple = true;
  walkExpr(cond, (x) => {
    if (x.op === 'lambda' || x.op === 'udf' || (x.op === 'col' && !sources.has(x.name))) simple = false;
  });
  if (!simple) return undefined;
  return JSON.parse(JSON.stringify(cond), (_k, v: unknown) => {
    const x = v as Expr;
    return x !== null && typeof x === 'object' && x.op === 'col' ? sources.get(x.name) : v;
  }) as Expr;
}

/** The columns a select passes through or renames: output name to its source column. */
function projectSources(exprs: readonly Expr[]): Map<string, Expr> {
  const sources = new Map<string, Expr>();
  for (const e of exprs) {
    if (e.op === 'col') sources.set(e.name, e);
    else if (e.op === 'alias') sources.set(e.name, e.expr);
  }
  return sources;
}

/**
 * The conditions every row leaving `ops` meets (Spark's constraints, of its filters only): a
 * filter's conjuncts, carried through selects that keep or rename their columns.
 */
function outputConstraints(ops: readonly Op[]): Expr[] {
  let conds: Expr[] = [];
  for (const op of ops) {
    if (op.kind === 'filter') conds.push(...conjuncts(op.cond));
    else if (op.kind === 'project') {
      // Forward: a source column kept or renamed by the select.
      const forward = new Map<string, string>();
      for (const e of op.exprs) {
        if (e.op === 'col' && !forward.has(e.name)) forward.set(e.name, e.name);
        else if (e.op === 'alias' && e.expr.op === 'col' && !forward.has(e.expr.name)) forward.set(e.expr.name, e.name);
      }
      conds = conds.flatMap((c) => renamed(c, forward) ?? []);
    } else if (op.kind !== 'watermark') conds = [];
  }
  return conds;
}

/**
 * A side's operators with conditions pushed into it: each as a filter at their end, moved before
 * the filters, watermarks (unless it reads the watermarked column) and selects (onto the columns
 * they read) it follows. A condition the side's rows already meet is not added again.
 */
function pushFilters(ops: readonly Op[], conds: readonly Expr[]): Op[] {
  const out = [...ops];
  const present = new Set(outputConstraints(ops).map((c) => JSON.stringify(c)));
  for (const pushed of conds) {
    const key = JSON.stringify(pushed);
    if (present.has(key)) continue;
    present.add(key);
    let cond = pushed;
    let at = out.length;
    for (; at > 0; at--) {
      const before = out[at - 1] as Op;
      if (before.kind === 'filter') continue;
      if (before.kind === 'watermark' && !exprColumns(cond).includes(before.column)) continue;
      const through = before.kind === 'project' ? substituted(cond, projectSources(before.exprs)) : undefined;
      if (through === undefined) break;
      cond = through;
    }
    out.splice(at, 0, { kind: 'filter', cond });
  }
  return out;
}
