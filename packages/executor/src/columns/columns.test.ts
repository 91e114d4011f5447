/**
 * The column paths against references on the same rows: every type, nulls, NaN, -0, strings
 * outside the BMP. The row evaluators (compileExpr.ts, task/stages.ts) are the reference of column
 * expressions and stages; the map side of an aggregation has one implementation, fed by columns
 * or by rows, checked against mapSideTestKit's plain computation of the partials, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { bin, call, cast, col, lit, SCHEMA } from '../expressions/exprTestKit.js';
import { compileExpr } from '../expressions/compileExpr.js';
import type { Expr } from '../expressions/types.js';
import type { AggSpec, Op, StatefulOp } from '../operators/types.js';
import type { Row, Schema } from '../schema/types.js';
import type { MapTask, StateLayoutMsg } from '../task/messages.js';
import { partitionPartials, random, referencePartials } from '../operators/mapSideTestKit.js';
import { compileStages, runStages } from '../task/stages.js';
import { encodeRows } from '../task/rowCodec.js';
import { compileColumnExpr } from './columnExpr.js';
import { compileColumnStages } from './columnStages.js';
import { columnMapSide, columnStateless, mapBatches } from './columnMapSide.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readInput } from '../task/readInput.js';
import { kDefaultReadOptions } from '../formats/options.js';
import { batchFromRows, rowsFromBatch, valueAt } from './vectors.js';
import { BATCH_ROWS } from './columnSources.js';

const MIN = 60_000;
const FLAT = SCHEMA.filter((f) => f.name !== 'window');

function rowsOf(count: number, seed = 7): Row[] {
  const r = random(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const rows: Row[] = [];
  for (let k = 0; k < count; k++) {
    rows.push({
      id: pick(['a', 'b', 'B', '', 'ä', '😀', 'k1', null]),
      v: pick([0, -0, 0.5, -2.25, 1e300, Number.NaN, 3, null]),
      n: pick([0, 1, -7, 2 ** 40, 100, null]),
      i: pick([0, 1, -3, 2147483647, null]),
      ts: pick([0, 4 * MIN, 6 * MIN, -MIN, 11 * MIN + 1, null]),
      ok: pick([true, false, null]),
    });
  }
  return rows;
}

const ROWS = rowsOf(500);

describe('column expressions give what the row evaluator gives', () => {
  const exprs: Expr[] = [
    col('v'),
    col('id'),
    lit(3),
    lit(null),
    bin('plus', col('n'), lit(1)),
    bin('minus', col('i'), col('i')),
    bin('plus', col('i'), lit(2147483647, 'int')),
    bin('multiply', col('i'), col('i')),
    bin('multiply', col('v'), col('n')),
    bin('divide', col('n'), col('i')),
    bin('mod', col('n'), lit(7)),
    bin('mod', col('n'), lit(0)),
    bin('mod', col('v'), col('i')),
    bin('gt', col('v'), lit(0.5)),
    bin('leq', col('v'), col('v')),
    bin('equalTo', col('v'), col('v')),
    bin('notEqual', col('v'), lit(Number.NaN, 'double')),
    bin('lt', col('ts'), lit(5 * MIN, 'timestamp')),
    bin('equalTo', col('id'), lit('a')),
    bin('gt', col('id'), lit('b')),
    bin('lt', col('id'), col('id')),
    bin('gt', col('ts'), lit('1970-01-01T00:05:00Z')),
    bin('plus', col('id'), lit(1)),
    bin('and', col('ok'), bin('gt', col('n'), lit(0))),
    bin('or', col('ok'), bin('gt', col('n'), lit(0))),
    bin('and', col('ok'), lit(null)),
    { op: 'unary', fn: 'not', expr: col('ok') },
    { op: 'unary', fn: 'isNull', expr: col('id') },
    { op: 'unary', fn: 'isNotNull', expr: col('v') },
    { op: 'unary', fn: 'negate', expr: col('i') },
    cast(col('n'), 'string'),
    call('upper', col('id')),
    call('coalesce', col('n'), col('i')),
    { op: 'when', branches: [{ cond: col('ok'), value: col('n') }], otherwise: lit(-1) },
    { op: 'window', expr: col('ts'), sizeMs: 5 * MIN, slideMs: 5 * MIN, startMs: 0 },
    // Table functions of one column and constants: over the vector, once per distinct string.
    call('split', col('id'), lit('')),
    call('regexp_extract', col('id'), lit('([a-z])(\\d*)'), lit(2, 'int')),
    call('date_format', col('ts'), lit('yyyy-MM-dd HH:mm')),
    call('to_timestamp', call('date_format', col('ts'), lit('dd/MM/yyyy HH:mm:ss')), lit('dd/MM/yyyy HH:mm:ss')),
    call('hash', col('n')),
    call('hash', col('id')),
    call('from_json', call('to_json', call('named_struct', lit('n'), col('n'), lit('id'), col('id'))), lit('n LONG, id STRING')),
    call('concat_ws', lit('-'), col('id')),
    call('lpad', col('id'), lit(3), lit(null)),
    call('round', col('v'), lit(1)),
    call('size', call('split', col('id'), lit('k'))),
    // Text cast to a number for the function, null where it does not parse.
    call('sqrt', col('id')),
    call('date_add', lit('2024-01-01'), col('id')),
  ];
  for (const e of exprs) {
    it(JSON.stringify(e), () => {
      const want = ROWS.map(compileExpr(e, FLAT));
      const v = compileColumnExpr(e, FLAT)(batchFromRows(ROWS, FLAT));
      const got = ROWS.map((_, i) => valueAt(v, i));
      expect(got).toEqual(want);
      // toEqual treats -0 and 0 alike; the engine keeps them apart.
      expect(got.map((x) => Object.is(x, -0))).toEqual(want.map((x) => Object.is(x, -0)));
    });
  }

  it('rows come back from columns unchanged, in order', () => {
    const rows = rowsFromBatch(batchFromRows(ROWS, FLAT), FLAT);
    expect(rows).toEqual(ROWS.map((r) => Object.fromEntries(FLAT.map((f) => [f.name, r[f.name] ?? null]))));
    expect(Object.keys(rows[0]!)).toEqual(FLAT.map((f) => f.name));
  });

  it('a struct column and a nested field read as they do in rows', () => {
    const schema: Schema = SCHEMA;
    const rows = ROWS.map((r, i) => ({ ...r, window: i % 3 === 0 ? null : { start: i, end: i + 1 } }));
    const e = col('window.end');
    const v = compileColumnExpr(e, schema)(batchFromRows(rows, schema));
    expect(rows.map((_, i) => valueAt(v, i))).toEqual(rows.map(compileExpr(e, schema)));
  });
});

describe('column stages give what the row stages give', () => {
  const plans: Op[][] = [
    [{ kind: 'filter', cond: bin('gt', col('v'), lit(0)) }],
    [
      { kind: 'project', exprs: [col('id'), { op: 'alias', expr: bin('mod', col('n'), lit(3)), name: 'm' }, col('ts'), col('ok')] },
      { kind: 'watermark', column: 'ts', delayMs: MIN },
      { kind: 'filter', cond: col('ok') },
    ],
    [
      { kind: 'watermark', column: 'ts', delayMs: MIN },
      { kind: 'filter', cond: bin('equalTo', col('id'), lit('nothing')) },
      { kind: 'watermark', column: 'ts', delayMs: MIN },
    ],
  ];
  for (const ops of plans) {
    it(ops.map((o) => o.kind).join(' -> '), async () => {
      const plan = await compileStages(FLAT, ops, new Map());
      const want = runStages(plan, ROWS);
      const stages = compileColumnStages(ops, FLAT, new Map());
      const stats = { min: Infinity, max: -Infinity, sum: 0, count: 0 };
      const out = stages.run(batchFromRows(ROWS, FLAT), stats);
      expect(stages.outputSchema).toEqual(plan.outputSchema);
      expect(out.length === 0 ? [] : rowsFromBatch(out, stages.outputSchema)).toEqual(want.rows);
      expect(stats.count > 0 ? stats : undefined).toEqual(want.eventTime);
    });
  }
});

describe('a stateless task over JSON columns gives what its row path gives', () => {
  it('rows, input count and event times, malformed lines included, in every mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-columns-'));
    try {
      const file = join(dir, 'a.json');
      const lines = ROWS.slice(0, 200).map((r) => JSON.stringify(r));
      lines.splice(7, 0, '{"id": "broken', '[1]', '{"n": "not a number", "id": "x"}', '');
      writeFileSync(file, `${lines.join('\n')}\n`);
      const ops: Op[] = [
        { kind: 'filter', cond: bin('gt', col('v'), lit(0)) },
        { kind: 'watermark', column: 'ts', delayMs: MIN },
        { kind: 'project', exprs: [col('id'), col('n'), col('ts'), col('_corrupt_record')] },
      ];
      const schema: Schema = [...FLAT, { name: '_corrupt_record', type: 'string', nullable: true }];
      for (const mode of ['PERMISSIVE', 'DROPMALFORMED'] as const) {
        const options = { ...kDefaultReadOptions, mode };
        const input = { type: 'files' as const, format: 'json' as const, files: [file], schema, options };
        const plan = await compileStages(schema, ops, new Map());
        const rowsIn = readInput(input);
        const want = runStages(plan, rowsIn);
        const got = columnStateless(ops, input, schema, new Map());
        expect(got.numInputRows).toBe(rowsIn.length);
        expect(got.rows).toEqual(want.rows);
        expect(got.eventTime).toEqual(want.eventTime);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("an aggregation's map side gives the plain computation's partials byte for byte, from columns and from rows", () => {
  const layout: StateLayoutMsg = { keyGroups: 64, partitions: 5, shards: 2 };
  const tumbling: Expr = { op: 'window', expr: col('ts'), sizeMs: 5 * MIN, slideMs: 5 * MIN, startMs: 0 };
  const all = (arg: Expr): AggSpec[] => (['count', 'sum', 'avg', 'min', 'max'] as const).map((fn) => ({ fn, arg, name: `${fn}(${JSON.stringify(arg)})` }));
  const ordered = (arg: Expr): AggSpec[] => all(arg).filter((a) => a.fn !== 'sum' && a.fn !== 'avg');
  const cases: Array<[string, Expr[], AggSpec[], number | null]> = [
    ['window + long key, count(*)', [tumbling, col('n')], [{ fn: 'count', arg: null, name: 'count' }], 0],
    ['string and boolean keys, every aggregate of a double', [col('id'), col('ok')], all(col('v')), null],
    ['double key (-0, NaN), every aggregate of a long and an int', [col('v')], [...all(col('n')), ...all(col('i'))], null],
    ['no key, aggregates of strings, booleans and timestamps', [], [...all(col('id')), ...ordered(col('ok')), ...ordered(col('ts'))], null],
    ['an expression key and argument', [bin('mod', col('n'), lit(3)), tumbling], all(bin('plus', col('v'), col('i'))), 1],
    ['timestamp key', [col('ts')], [{ fn: 'count', arg: col('id'), name: 'c' }], 0],
    ['sliding window + string key', [{ op: 'window', expr: col('ts'), sizeMs: 10 * MIN, slideMs: 5 * MIN, startMs: 0 }, col('id')], all(col('v')), 0],
    [
      'sliding window of a size that is no multiple of its slide',
      [{ op: 'window', expr: col('ts'), sizeMs: 7 * MIN, slideMs: 3 * MIN, startMs: MIN }],
      [{ fn: 'count', arg: null, name: 'c' }],
      0,
    ],
  ];
  const rows = rowsOf(3 * BATCH_ROWS + 17, 11);
  for (const [name, keys, aggs, eventTimeKey] of cases) {
    it(name, () => {
      const op = { kind: 'aggregate' as const, keys, keyNames: keys.map((_, i) => `k${i}`), aggs, eventTimeKey };
      const want = referencePartials(rows, op, FLAT, layout);
      // Several groups, or the one group of an aggregation without keys.
      if (keys.length === 0) expect(want.numRecords).toBe(1);
      else expect(want.numRecords).toBeGreaterThan(1);
      // Batches straight from the rows: the rows codec would turn -0 into 0 on the way.
      const fromColumns = mapBatches({ ops: [], stateful: op, layout }, FLAT, new Map(), (fn) => {
        for (let lo = 0; lo < rows.length; lo += BATCH_ROWS) fn(batchFromRows(rows, FLAT, lo, Math.min(rows.length, lo + BATCH_ROWS)));
        return rows.length;
      });
      const fromRows = partitionPartials(rows, op, FLAT, layout);
      expect(fromColumns).toBeDefined();
      expect(fromColumns!.numInputRows).toBe(rows.length);
      for (const got of [fromColumns!, fromRows]) {
        expect(got.numRecords).toBe(want.numRecords);
        expect(got.blocks.map((b) => b.partition)).toEqual(want.blocks.map((b) => b.partition));
        got.blocks.forEach((b, k) => {
          expect(Buffer.from(b.data).equals(Buffer.from(want.blocks[k]!.data))).toBe(true);
        });
      }
    });
  }

  it('a struct key compares its fields as values: objects with equal fields (in any order) are one key', () => {
    const schema: Schema = [
      ...FLAT,
      {
        name: 'w',
        type: {
          struct: [
            { name: 'start', type: 'timestamp', nullable: true },
            { name: 'end', type: 'timestamp', nullable: true },
          ],
        },
        nullable: true,
      },
    ];
    const r = random(3);
    const withStructs = rows.map((row) => {
      const start = Math.floor(r() * 4) * MIN;
      const w = r() < 0.1 ? null : r() < 0.5 ? { start, end: start + MIN } : { end: start + MIN, start };
      return { ...row, w };
    });
    const op = {
      kind: 'aggregate' as const,
      keys: [col('w'), col('ok')],
      keyNames: ['w', 'ok'],
      aggs: [{ fn: 'sum' as const, arg: col('n'), name: 's' }],
      eventTimeKey: null,
    };
    const want = referencePartials(withStructs, op, schema, layout);
    expect(want.numRecords).toBe(15); // 4 windows and null, by true, false and null
    const got = partitionPartials(withStructs, op, schema, layout);
    expect(got.numRecords).toBe(want.numRecords);
    got.blocks.forEach((b, k) => {
      expect(Buffer.from(b.data).equals(Buffer.from(want.blocks[k]!.data))).toBe(true);
    });
  });

  it('reads a memory split (rows) in chunks', () => {
    const op: StatefulOp = { kind: 'aggregate', keys: [col('id')], keyNames: ['id'], aggs: [{ fn: 'count', arg: null, name: 'c' }], eventTimeKey: null };
    const want = referencePartials(rows, op, FLAT, layout);
    const task = {
      kind: 'map',
      input: { type: 'rows', data: encodeRows(rows) },
      inputSchema: FLAT,
      ops: [],
      stateful: op,
      layout,
      lateThresholdMs: null,
    } as unknown as MapTask;
    const got = columnMapSide(task, task.input, FLAT, new Map())!;
    expect(got.numInputRows).toBe(rows.length);
    got.blocks.forEach((b, k) => {
      expect(Buffer.from(b.data).equals(Buffer.from(want.blocks[k]!.data))).toBe(true);
    });
  });

  it('leaves deduplication to the row path', () => {
    const dedup: StatefulOp = { kind: 'dropDuplicates', columns: ['id'], eventTimeColumn: null };
    const task = {
      kind: 'map',
      input: { type: 'rows', data: encodeRows(rows) },
      inputSchema: FLAT,
      ops: [],
      stateful: dedup,
      layout,
      lateThresholdMs: null,
    } as unknown as MapTask;
    expect(columnMapSide(task, task.input, FLAT, new Map())).toBeUndefined();
  });
});
