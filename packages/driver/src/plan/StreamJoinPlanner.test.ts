/**
 * The plan of a join of two streams: where the conditions go (Spark's PushPredicateThroughJoin and
 * InferFiltersFromConstraints, then through selects and below withWatermark), how each side's state
 * expires, and the join types by Spark's names.
 */
import type { Expr, Op, Schema, StreamJoinOp } from '@sluice/executor';
import { describe, expect, it } from 'vitest';
import { consumersOf, sourceRoutes, statefulOperators, type LogicalPlan } from './LogicalPlan.js';
import { planStreamJoin, type JoinSidePlan } from './StreamJoinPlanner.js';

const col = (name: string): Expr => ({ op: 'col', name });
const lit = (value: number): Expr => ({ op: 'lit', value, type: 'int' });
const bin = (fn: 'gt' | 'lt' | 'geq' | 'leq' | 'equalTo' | 'and' | 'plus', left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right }) as Expr;
const alias = (expr: Expr, name: string): Expr => ({ op: 'alias', expr, name });

/** A memory-source side: `value INT, t TIMESTAMP`, selected as `<p>Id`, `<p>Time`, watermarked on the time. */
function side(p: string, extra: Op[] = []): JoinSidePlan {
  const source: Schema = [
    { name: 'value', type: 'int', nullable: true },
    { name: 't', type: 'timestamp', nullable: false },
  ];
  const ops: Op[] = [
    { kind: 'project', exprs: [alias(col('value'), `${p}Id`), alias(col('t'), `${p}Time`)] },
    { kind: 'watermark', column: `${p}Time`, delayMs: 5000 },
    ...extra,
  ];
  const schema: Schema = [
    { name: `${p}Id`, type: 'int', nullable: true },
    { name: `${p}Time`, type: 'timestamp', nullable: false },
  ];
  const plan: LogicalPlan = { source: { format: 'memory', schema: source, stream: undefined as never }, ops };
  return { plan, schema };
}

const opsOf = (plan: LogicalPlan, input: number): Op[] => plan.inputs?.[input]?.ops ?? [];
const opOf = (plan: LogicalPlan): StreamJoinOp => plan.operators?.at(-1)?.stateful as StreamJoinOp;
const filters = (ops: Op[]): Array<[number, Expr]> => ops.flatMap((o, i) => (o.kind === 'filter' ? [[i, o.cond] as [number, Expr]] : []));
/** The conditions of a side's filters, in any order. */
const conditions = (ops: Op[]): string[] =>
  filters(ops)
    .map(([, c]) => JSON.stringify(c))
    .sort();
const sorted = (exprs: Expr[]): string[] => exprs.map((e) => JSON.stringify(e)).sort();

describe('conditions pushed into the sides', () => {
  const onLeft = bin('gt', col('leftId'), lit(10));
  const onRight = bin('lt', col('rightId'), lit(300));
  const pairCond = bin('geq', col('rightTime'), col('leftTime'));
  const on = { keys: ['leftId'], rightKeys: ['rightId'], residual: bin('and', bin('and', onLeft, onRight), pairCond) };

  it('inner: each side gets its own conditions, the key not null and what the other side says of its key, all before its select and its watermark', () => {
    const plan = planStreamJoin(side('left'), side('right'), on, 'inner');
    // Onto the source's columns, before the select (index 0 .. n-1) and so before the watermark.
    const value = col('value');
    expect(conditions(opsOf(plan, 0))).toEqual(sorted([bin('gt', value, lit(10)), { op: 'unary', fn: 'isNotNull', expr: value }, bin('lt', value, lit(300))]));
    expect(conditions(opsOf(plan, 1))).toEqual(sorted([bin('lt', value, lit(300)), { op: 'unary', fn: 'isNotNull', expr: value }, bin('gt', value, lit(10))]));
    for (const input of [0, 1])
      expect(
        opsOf(plan, input)
          .slice(3)
          .map((o) => o.kind),
      ).toEqual(['project', 'watermark']);
    expect(opOf(plan).residual).toEqual(pairCond);
  });

  it('left outer: only the right side gets conditions; the left one stays in the join (it emits nulls)', () => {
    const plan = planStreamJoin(side('left'), side('right'), on, 'leftOuter');
    expect(filters(opsOf(plan, 0))).toEqual([]);
    expect(conditions(opsOf(plan, 1))).toEqual(sorted([bin('lt', col('value'), lit(300)), { op: 'unary', fn: 'isNotNull', expr: col('value') }]));
    expect(opOf(plan).residual).toEqual(bin('and', onLeft, pairCond));
  });

  it('full outer: nothing is pushed', () => {
    const plan = planStreamJoin(side('left'), side('right'), on, 'full_outer');
    expect([filters(opsOf(plan, 0)), filters(opsOf(plan, 1))]).toEqual([[], []]);
    expect(opOf(plan).residual).toEqual(bin('and', bin('and', onLeft, onRight), pairCond));
  });

  it("a condition on one side's key is inferred for the other's (Spark's self-join case); one reading the watermarked column stays after the watermark", () => {
    const even = bin('equalTo', { op: 'binary', fn: 'mod', left: col('rightId'), right: lit(2) } as Expr, lit(0));
    const late = bin('gt', col('rightTime'), { op: 'lit', value: 0, type: 'timestamp' });
    const right = side('right', [
      { kind: 'filter', cond: even },
      { kind: 'filter', cond: late },
    ]);
    const plan = planStreamJoin(side('left'), right, { keys: ['leftId'], rightKeys: ['rightId'] }, 'left_semi');
    const leftFilters = filters(opsOf(plan, 0)).map(([, c]) => JSON.stringify(c));
    expect(leftFilters).toContain(JSON.stringify(bin('equalTo', { op: 'binary', fn: 'mod', left: col('value'), right: lit(2) } as Expr, lit(0))));
    // The filter on the watermarked column is not moved before the watermark (index 1).
    const rightOps = opsOf(plan, 1);
    expect(rightOps.findIndex((o) => o.kind === 'filter' && JSON.stringify(o.cond) === JSON.stringify(late))).toBeGreaterThan(1);
  });

  it('a null-safe key gets no not-null condition', () => {
    const plan = planStreamJoin(side('left'), side('right'), { keys: ['leftId'], rightKeys: ['rightId'], nullSafe: [true] }, 'inner');
    expect(filters(opsOf(plan, 0))).toEqual([]);
    expect(opOf(plan).nullSafe).toEqual([true]);
  });
});

describe('state expiry', () => {
  it('a watermarked key evicts both sides by it; else a side is evicted by the bound on its time, or never', () => {
    const byKey = planStreamJoin(side('left'), side('right'), { keys: ['leftTime'], rightKeys: ['rightTime'] }, 'inner');
    expect([opOf(byKey).left.eviction, opOf(byKey).right.eviction]).toEqual([
      { kind: 'key', key: 0 },
      { kind: 'key', key: 0 },
    ]);
    // rightTime >= leftTime bounds the right side by the left's watermark only.
    const range = planStreamJoin(
      side('left'),
      side('right'),
      { keys: ['leftId'], rightKeys: ['rightId'], residual: bin('geq', col('rightTime'), col('leftTime')) },
      'inner',
    );
    expect([opOf(range).left.eviction, opOf(range).right.eviction]).toEqual([null, { kind: 'value' }]);
    expect([opOf(range).left.eventTime, opOf(range).right.watermarked]).toEqual(['leftTime', ['rightTime']]);
  });
});

describe('join types', () => {
  it.each([
    ['inner', 'inner'],
    ['LEFT_OUTER', 'left_outer'],
    ['leftOuter', 'left_outer'],
    ['right', 'right_outer'],
    ['outer', 'full_outer'],
    ['fullouter', 'full_outer'],
    ['semi', 'left_semi'],
  ])('%s is %s', (how, type) => {
    expect(opOf(planStreamJoin(side('left'), side('right'), { keys: ['leftId'], rightKeys: ['rightId'] }, how)).how).toBe(type);
  });

  it('left anti and unknown names are refused with Spark-like messages', () => {
    const join = (how: string) => () => planStreamJoin(side('left'), side('right'), { keys: ['leftId'], rightKeys: ['rightId'] }, how);
    expect(join('left_anti')).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: 'Left anti joins with a streaming DataFrame/Dataset on the right are not supported' }),
    );
    expect(join('cross')).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', option: 'how' }));
  });
});

describe('sides with stateful operators of their own', () => {
  /** `side(p)` deduplicated on its id: a stateful operator on that side. */
  const deduplicated = (p: string): JoinSidePlan => {
    const s = side(p);
    return { ...s, plan: { ...s.plan, operators: [{ stateful: { kind: 'dropDuplicates', columns: [`${p}Id`], eventTimeColumn: null }, post: [] }] } };
  };
  const on = { keys: ['leftId'], rightKeys: ['rightId'], residual: bin('gt', col('leftId'), lit(10)) };

  it("a tree: the right side's operators first, then the left's, then the join, fed by the rows each side's last one emits", () => {
    const plan = planStreamJoin(deduplicated('left'), deduplicated('right'), on, 'inner');
    const ops = statefulOperators(plan);
    expect(ops.map((o) => o.stateful.kind)).toEqual(['dropDuplicates', 'dropDuplicates', 'streamJoin']);
    expect(ops.map((o) => o.feeds)).toEqual([
      [{ sources: [1, 2] }],
      [{ sources: [0, 1] }],
      [
        { operator: 1, side: 0 },
        { operator: 0, side: 1 },
      ],
    ]);
    expect(consumersOf(ops)).toEqual([{ operator: 2, side: 1 }, { operator: 2, side: 0 }, undefined]);
    expect(sourceRoutes(ops)).toEqual([{ operator: 1 }, { operator: 0 }]);
    // A condition on a side goes after its last stateful operator, never into its inputs.
    expect(filters(opsOf(plan, 0))).toEqual([]);
    expect(conditions(ops[1]?.post ?? [])).toEqual(sorted([on.residual, { op: 'unary', fn: 'isNotNull', expr: col('leftId') }]));
  });

  it("a stateful side and a plain one: the join reads the plain side's inputs itself", () => {
    const plan = planStreamJoin(deduplicated('left'), side('right'), on, 'inner');
    const ops = statefulOperators(plan);
    expect(ops.map((o) => o.feeds)).toEqual([
      [{ sources: [0, 1] }],
      [
        { operator: 0, side: 0 },
        { sources: [1, 2], side: 1 },
      ],
    ]);
    expect(sourceRoutes(ops)).toEqual([{ operator: 0 }, { operator: 1, side: 1 }]);
    // The plain side still gets its conditions in its inputs.
    expect(conditions(opsOf(plan, 1)).length).toBeGreaterThan(0);
  });
});
