/**
 * Queries written with SQL text (`expr`, `selectExpr`, `filter("...")`) run as the same queries
 * written with Column calls: the seed query's windowed count with both, side by side on the same
 * input, and a stateless projection whose rows are checked one by one.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { col, expr, Session, window, count } from '@sluice/driver';
import { removeTempDirs, tempDir } from './helpers.js';

let session: Session;
beforeAll(async () => {
  session = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 } });
});
afterAll(async () => {
  await session.close();
  removeTempDirs();
});
afterEach(async () => {
  for (const q of session.streams.active) await q.stop();
});

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute));
const byJson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();

describe('SQL text in DataFrame operators', () => {
  it("the seed query with expr(\"window(ts, '5 minutes')\") and expr('count(*) AS count') gives the Column query's rows", async () => {
    const stream = session.memoryStream('sql_seed', 'id STRING, ts TIMESTAMP');
    const df = session.readStream.format('memory').load('sql_seed').withWatermark('ts', '10 minutes');
    const start = (name: string, grouped: ReturnType<typeof df.groupBy>, agg: Parameters<typeof grouped.agg>[0]) =>
      grouped.agg(agg).writeStream.format('memory').queryName(name).outputMode('append').option('checkpointLocation', tempDir()).start();
    const withSql = await start('sql_seed_text', df.groupBy(expr("window(ts, '5 minutes')"), col('id')), expr('count(*) AS count'));
    const withColumns = await start('sql_seed_columns', df.groupBy(window('ts', '5 minutes'), 'id'), count('*').alias('count'));
    const batches = [
      [['a', 1], ['a', 2], ['b', 4], ['a', 7]],
      [['a', 12], ['b', 13], ['b', 3]],
      [['b', 21]],
      [['a', 3], ['a', 14], ['c', 9]],
      [['z', 100]],
    ] as const;
    for (const b of batches) {
      stream.addData(b.map(([id, minute]) => ({ id, ts: at(minute) })));
      await withSql.processAllAvailable();
      await withColumns.processAllAvailable();
    }
    const text = await session.memoryTable('sql_seed_text');
    expect(text.length).toBeGreaterThan(0);
    expect(byJson(text)).toEqual(byJson(await session.memoryTable('sql_seed_columns')));
    // Window [0, 5) of a: minutes 1 and 2 (the late minute 3 came after the watermark passed 5).
    expect(text).toContainEqual({ window: { start: at(0), end: at(5) }, id: 'a', count: 2 });
    expect(Object.keys(text[0] as object)).toEqual(['window', 'id', 'count']);
  });

  it('filter and selectExpr take SQL text: every row, each value as Spark computes it', async () => {
    const stream = session.memoryStream('sql_rows', 'id STRING, v LONG');
    const q = await session.readStream
      .format('memory')
      .load('sql_rows')
      .filter("v >= 5 AND id IS NOT NULL AND id NOT IN ('skip')")
      .where('v % 2 = 1')
      .selectExpr('upper(id) AS id', 'v * 2 AS v2', "CASE WHEN v > 7 THEN 'big' ELSE 'small' END size", 'v DIV 3', 'v BETWEEN 6 AND 8 AS mid')
      .writeStream.format('memory')
      .queryName('sql_rows_out')
      .start();
    stream.addData(Array.from({ length: 12 }, (_, v) => ({ id: v === 9 ? 'skip' : v === 11 ? null : `k${v}`, v })));
    await q.processAllAvailable();
    const rows = (await session.memoryTable('sql_rows_out')).sort((a, b) => (a['v2'] as number) - (b['v2'] as number));
    expect(rows).toEqual([
      { id: 'K5', v2: 10, size: 'small', '(v div 3)': 1, mid: false },
      { id: 'K7', v2: 14, size: 'small', '(v div 3)': 2, mid: true },
    ]);
  });

  it('a text that does not parse fails where the DataFrame is built, with its code and position', () => {
    const df = session.readStream.format('rate').load();
    expect(() => df.filter('value >')).toThrow(expect.objectContaining({ code: 'PARSE_SYNTAX_ERROR', message: expect.stringContaining('(line 1, pos 7)') }));
    expect(() => df.selectExpr('frobnicate(value)')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_ROUTINE' }));
    expect(() => df.selectExpr('count(*)')).toThrow(expect.objectContaining({ code: 'INVALID_EXPRESSION' }));
    expect(() => df.filter('nope > 1')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN', column: 'nope' }));
  });
});
