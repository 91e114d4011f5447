/**
 * Queries written with SQL text (`expr`, `selectExpr`, `filter("...")`, `session.sql` over
 * temporary views) run as the same queries written with Column calls: the seed query's windowed
 * count both ways, side by side on the same input, and projections, aggregates with HAVING, joins
 * and unions whose rows are checked one by one.
 */
import { describe, expect, it } from 'vitest';
import { col, expr, window, count } from '@sluice/driver';
import { jsonLines, tempDir, useSession, writeInput } from './helpers.js';

const session = useSession({ 'sluice.sql.shuffle.partitions': 4 });

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute));
const byJson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();

describe('SQL text in DataFrame operators', () => {
  it("the seed query with expr(\"window(ts, '5 minutes')\") and expr('count(*) AS count') gives the Column query's rows", async () => {
    const stream = session().memoryStream('sql_seed', 'id STRING, ts TIMESTAMP');
    const df = session().readStream.format('memory').load('sql_seed').withWatermark('ts', '10 minutes');
    const start = (name: string, grouped: ReturnType<typeof df.groupBy>, agg: Parameters<typeof grouped.agg>[0]) =>
      grouped.agg(agg).writeStream.format('memory').queryName(name).outputMode('append').option('checkpointLocation', tempDir()).start();
    const withSql = await start('sql_seed_text', df.groupBy(expr("window(ts, '5 minutes')"), col('id')), expr('count(*) AS count'));
    const withColumns = await start('sql_seed_columns', df.groupBy(window('ts', '5 minutes'), 'id'), count('*').alias('count'));
    const batches = [
      [
        ['a', 1],
        ['a', 2],
        ['b', 4],
        ['a', 7],
      ],
      [
        ['a', 12],
        ['b', 13],
        ['b', 3],
      ],
      [['b', 21]],
      [
        ['a', 3],
        ['a', 14],
        ['c', 9],
      ],
      [['z', 100]],
    ] as const;
    for (const b of batches) {
      stream.addData(b.map(([id, minute]) => ({ id, ts: at(minute) })));
      await withSql.processAllAvailable();
      await withColumns.processAllAvailable();
    }
    const text = await session().memoryTable('sql_seed_text');
    expect(text.length).toBeGreaterThan(0);
    expect(byJson(text)).toEqual(byJson(await session().memoryTable('sql_seed_columns')));
    // Window [0, 5) of a: minutes 1 and 2 (the late minute 3 came after the watermark passed 5).
    expect(text).toContainEqual({ window: { start: at(0), end: at(5) }, id: 'a', count: 2 });
    expect(Object.keys(text[0] as object)).toEqual(['window', 'id', 'count']);
  });

  it('filter and selectExpr take SQL text: every row, each value as Spark computes it', async () => {
    const stream = session().memoryStream('sql_rows', 'id STRING, v LONG');
    const q = await session()
      .readStream.format('memory')
      .load('sql_rows')
      .filter("v >= 5 AND id IS NOT NULL AND id NOT IN ('skip')")
      .where('v % 2 = 1')
      .selectExpr('upper(id) AS id', 'v * 2 AS v2', "CASE WHEN v > 7 THEN 'big' ELSE 'small' END size", 'v DIV 3', 'v BETWEEN 6 AND 8 AS mid')
      .writeStream.format('memory')
      .queryName('sql_rows_out')
      .start();
    stream.addData(Array.from({ length: 12 }, (_, v) => ({ id: v === 9 ? 'skip' : v === 11 ? null : `k${v}`, v })));
    await q.processAllAvailable();
    const rows = (await session().memoryTable('sql_rows_out')).sort((a, b) => (a.v2 as number) - (b.v2 as number));
    expect(rows).toEqual([
      { id: 'K5', v2: 10, size: 'small', '(v div 3)': 1, mid: false },
      { id: 'K7', v2: 14, size: 'small', '(v div 3)': 2, mid: true },
    ]);
  });

  it('a text that does not parse fails where the DataFrame is built, with its code and position', () => {
    const df = session().readStream.format('rate').load();
    expect(() => df.filter('value >')).toThrow(expect.objectContaining({ code: 'PARSE_SYNTAX_ERROR', message: expect.stringContaining('(line 1, pos 7)') }));
    expect(() => df.selectExpr('frobnicate(value)')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_ROUTINE' }));
    expect(() => df.selectExpr('count(*)')).toThrow(expect.objectContaining({ code: 'INVALID_EXPRESSION' }));
    expect(() => df.filter('nope > 1')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN', column: 'nope' }));
  });
});

const sorted = (rows: Array<Record<string, unknown>>, key: string) => [...rows].sort((a, b) => String(a[key]).localeCompare(String(b[key])));

describe('session.sql over temporary views', () => {
  it("the seed query as SQL: SELECT window, id, count(*) ... GROUP BY window(ts, '5 minutes'), id gives the Column query's rows", async () => {
    const stream = session().memoryStream('sql_view_seed', 'id STRING, ts TIMESTAMP');
    const df = session().readStream.format('memory').load('sql_view_seed').withWatermark('ts', '10 minutes');
    df.createOrReplaceTempView('events');
    const start = (name: string, frame: typeof df) =>
      frame.writeStream.format('memory').queryName(name).outputMode('append').option('checkpointLocation', tempDir()).start();
    const viaSql = await start('sql_view_seed_sql', session().sql("SELECT window, id, count(*) AS count FROM events GROUP BY window(ts, '5 minutes'), id"));
    const viaColumns = await start('sql_view_seed_columns', df.groupBy(window('ts', '5 minutes'), 'id').count());
    for (const b of [
      [
        ['a', 1],
        ['a', 2],
        ['b', 4],
        ['a', 7],
      ],
      [
        ['a', 12],
        ['b', 13],
        ['b', 3],
      ],
      [['b', 21]],
      [['z', 100]],
    ] as const) {
      stream.addData(b.map(([id, minute]) => ({ id, ts: at(minute) })));
      await viaSql.processAllAvailable();
      await viaColumns.processAllAvailable();
    }
    const rows = await session().memoryTable('sql_view_seed_sql');
    expect(rows.length).toBe(6);
    expect(byJson(rows)).toEqual(byJson(await session().memoryTable('sql_view_seed_columns')));
    expect(Object.keys(rows[0] as object)).toEqual(['window', 'id', 'count']);
  });

  it('WHERE, computed items and aliases, qualified names: each row as Spark gives it', async () => {
    const stream = session().memoryStream('sql_view_rows', 'id STRING, v LONG');
    session().readStream.format('memory').load('sql_view_rows').createOrReplaceTempView('Readings');
    const q = await session()
      .sql(
        "SELECT upper(r.id) AS id, v * 2 v2, v DIV 3, CASE WHEN v > 7 THEN 'big' ELSE 'small' END AS size FROM readings r WHERE r.v >= 5 AND id NOT IN ('skip')",
      )
      .writeStream.format('memory')
      .queryName('sql_view_rows_out')
      .start();
    stream.addData(Array.from({ length: 10 }, (_, v) => ({ id: v === 6 ? 'skip' : `k${v}`, v })));
    await q.processAllAvailable();
    expect(sorted(await session().memoryTable('sql_view_rows_out'), 'id')).toEqual([
      { id: 'K5', v2: 10, '(v div 3)': 1, size: 'small' },
      { id: 'K7', v2: 14, '(v div 3)': 2, size: 'small' },
      { id: 'K8', v2: 16, '(v div 3)': 2, size: 'big' },
      { id: 'K9', v2: 18, '(v div 3)': 3, size: 'big' },
    ]);
  });

  it('GROUP BY with aggregates inside expressions and HAVING on an aggregate, complete mode', async () => {
    const stream = session().memoryStream('sql_view_groups', 'id STRING, v LONG');
    session().readStream.format('memory').load('sql_view_groups').createOrReplaceTempView('groups_in');
    const q = await session()
      .sql('SELECT count(*) AS n, id, sum(v) + 1 AS s1, max(v) FROM groups_in GROUP BY id HAVING count(*) > 1 AND max(v) < 100')
      .writeStream.format('memory')
      .queryName('sql_view_groups_out')
      .outputMode('complete')
      .option('checkpointLocation', tempDir())
      .start();
    stream.addData([
      { id: 'a', v: 1 },
      { id: 'a', v: 2 },
      { id: 'b', v: 5 },
      { id: 'c', v: 7 },
      { id: 'c', v: 100 },
    ]);
    await q.processAllAvailable();
    expect(await session().memoryTable('sql_view_groups_out')).toEqual([{ n: 2, id: 'a', s1: 4, 'max(v)': 2 }]);
    stream.addData([{ id: 'b', v: 6 }]);
    await q.processAllAvailable();
    expect(sorted(await session().memoryTable('sql_view_groups_out'), 'id')).toEqual([
      { n: 2, id: 'a', s1: 4, 'max(v)': 2 },
      { n: 2, id: 'b', s1: 12, 'max(v)': 6 },
    ]);
  });

  it('JOIN of a streaming view with a static one (USING and ON), and UNION ALL of two streams', async () => {
    const usersDir = tempDir();
    writeInput(
      usersDir,
      'users.json',
      jsonLines([
        { id: 'a', name: 'Ann' },
        { id: 'b', name: 'Bob' },
      ]),
    );
    session().read.format('json').schema('id STRING, name STRING').load(usersDir).createOrReplaceTempView('users');
    session().read.format('json').schema('id STRING, name STRING').load(usersDir).selectExpr('id AS pid', 'name').createOrReplaceTempView('people');
    const s1 = session().memoryStream('sql_view_clicks', 'id STRING, page STRING');
    const s2 = session().memoryStream('sql_view_clicks2', 'id STRING, page STRING');
    session().readStream.format('memory').load('sql_view_clicks').createOrReplaceTempView('clicks');
    session().readStream.format('memory').load('sql_view_clicks2').createOrReplaceTempView('clicks2');
    const joined = await session()
      .sql('SELECT id, name, page FROM clicks JOIN users USING (id)')
      .writeStream.format('memory')
      .queryName('sql_view_join')
      .start();
    const left = await session()
      .sql('SELECT c.page, p.name FROM clicks2 c LEFT JOIN people p ON c.id = p.pid')
      .writeStream.format('memory')
      .queryName('sql_view_left')
      .start();
    // ON c.id = u.id: the right side's shared column is u.id after the join.
    const onShared = session().sql("SELECT c.id, u.name, c.page FROM clicks c JOIN users u ON c.id = u.id AND u.name <> 'nobody'");
    expect(onShared.columns).toEqual(['id', 'name', 'page']);
    expect(session().sql('SELECT * FROM clicks c JOIN users u ON c.id = u.id').columns).toEqual(['id', 'page', 'u.id', 'name']);
    const onSharedQ = await onShared.writeStream.format('memory').queryName('sql_view_on_shared').start();
    // alias.* is that relation's columns (a USING key once), in its order.
    expect(session().sql('SELECT u.*, c.page FROM clicks c JOIN users u USING (id)').columns).toEqual(['id', 'name', 'page']);
    expect(session().sql('SELECT c.* FROM clicks2 c LEFT JOIN people p ON c.id = p.pid').columns).toEqual(['id', 'page']);
    expect(session().sql('SELECT p.* FROM clicks2 c LEFT JOIN people p ON c.id = p.pid').columns).toEqual(['pid', 'name']);
    expect(() => session().sql('SELECT q.* FROM clicks c')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN' }));
    const unioned = await session()
      .sql("SELECT id, page FROM clicks WHERE page = 'home' UNION ALL SELECT id, upper(page) AS page FROM clicks2")
      .writeStream.format('memory')
      .queryName('sql_view_union')
      .start();
    s1.addData([
      { id: 'a', page: 'home' },
      { id: 'x', page: 'home' },
      { id: 'b', page: 'cart' },
    ]);
    s2.addData([
      { id: 'b', page: 'faq' },
      { id: 'y', page: 'faq' },
    ]);
    for (const q of [joined, left, unioned, onSharedQ]) await q.processAllAvailable();
    expect(sorted(await session().memoryTable('sql_view_on_shared'), 'id')).toEqual([
      { id: 'a', name: 'Ann', page: 'home' },
      { id: 'b', name: 'Bob', page: 'cart' },
    ]);
    expect(sorted(await session().memoryTable('sql_view_join'), 'id')).toEqual([
      { id: 'a', name: 'Ann', page: 'home' },
      { id: 'b', name: 'Bob', page: 'cart' },
    ]);
    expect(sorted(await session().memoryTable('sql_view_left'), 'name')).toEqual([
      { page: 'faq', name: 'Bob' },
      { page: 'faq', name: null },
    ]);
    expect(sorted(await session().memoryTable('sql_view_union'), 'id')).toEqual([
      { id: 'a', page: 'home' },
      { id: 'b', page: 'FAQ' },
      { id: 'x', page: 'home' },
      { id: 'y', page: 'FAQ' },
    ]);
  });

  it('SELECT DISTINCT is a deduplication of the selected columns across batches', async () => {
    const stream = session().memoryStream('sql_distinct', 'id STRING, v LONG');
    session().readStream.format('memory').load('sql_distinct').createOrReplaceTempView('distinct_in');
    const q = await session()
      .sql('SELECT DISTINCT id, v % 2 AS odd FROM distinct_in')
      .writeStream.format('memory')
      .queryName('sql_distinct_out')
      .option('checkpointLocation', tempDir())
      .start();
    stream.addData([
      { id: 'a', v: 1 },
      { id: 'a', v: 3 },
      { id: 'b', v: 2 },
    ]);
    await q.processAllAvailable();
    stream.addData([
      { id: 'a', v: 5 },
      { id: 'a', v: 2 },
      { id: 'b', v: 4 },
      { id: 'c', v: 1 },
    ]);
    await q.processAllAvailable();
    expect(byJson(await session().memoryTable('sql_distinct_out'))).toEqual(
      byJson([
        { id: 'a', odd: 1 },
        { id: 'b', odd: 0 },
        { id: 'a', odd: 0 },
        { id: 'c', odd: 1 },
      ]),
    );
  });

  it('names what is wrong: an unknown view, a view registered twice, ORDER BY, a bad LIMIT, an aggregate in WHERE', () => {
    session().readStream.format('rate').load().createOrReplaceTempView('ticks');
    expect(() => session().sql('SELECT * FROM nowhere')).toThrow(
      expect.objectContaining({ code: 'TABLE_OR_VIEW_NOT_FOUND', message: expect.stringContaining('`nowhere`') }),
    );
    expect(() => session().readStream.format('rate').load().createTempView('TICKS')).toThrow(
      expect.objectContaining({ code: 'TEMP_TABLE_OR_VIEW_ALREADY_EXISTS' }),
    );
    expect(session().sql('SELECT * FROM Ticks').columns).toEqual(['timestamp', 'value']);
    // Unaliased items are named as Spark names them, an aggregate by its own name even where it is also aliased.
    expect(session().sql('SELECT count(*) AS n, count(*) + 1, value % 2 AS k, max(value) FROM ticks GROUP BY value % 2').columns).toEqual([
      'n',
      '(count(1) + 1)',
      'k',
      'max(value)',
    ]);
    expect(() => session().sql('SELECT value FROM ticks ORDER BY value')).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('ORDER') }),
    );
    // LIMIT is the stream's limit (test/streaming-limit.test.ts); its count must be a non-negative integer.
    expect(() => session().sql('SELECT value FROM ticks LIMIT 1.5')).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option: 'n', message: expect.stringContaining('non-negative integer') }),
    );
    expect(() => session().sql('SELECT value FROM ticks WHERE count(*) > 1')).toThrow(expect.objectContaining({ code: 'INVALID_EXPRESSION' }));
    expect(() => session().sql('SELECT value FROM ticks UNION SELECT value FROM ticks')).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION' }));
    expect(() => session().sql('SELECT value FROM ticks WHERE')).toThrow(expect.objectContaining({ code: 'PARSE_SYNTAX_ERROR' }));
    expect(() => session().sql('SELECT nope FROM ticks')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN' }));
    expect(session().dropTempView('ticks')).toBe(true);
    expect(() => session().sql('SELECT * FROM ticks')).toThrow(expect.objectContaining({ code: 'TABLE_OR_VIEW_NOT_FOUND' }));
  });
});
