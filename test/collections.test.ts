/**
 * Arrays, maps and generators in streaming queries: Structured Streaming's first example, the word
 * count with split and explode, written with Column calls, with selectExpr and with session.sql
 * (LATERAL VIEW too), checked word by word; posexplode and explode_outer rows; ARRAY, MAP and DATE
 * columns from JSON files to a JSON file sink and back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aggregate, col, explode, posexplode, explode_outer, filter, split, type Session, size, array_contains, element_at, transform } from '@sluice/driver';
import { tempDir, useSession, writeInput } from './helpers.js';

const session = useSession({ 'sluice.sql.shuffle.partitions': 3 });

const LINES = [['apache spark', 'spark streaming'], ['sluice streams', 'apache   sluice'], ['']];
/** Spark's word count of LINES after each batch: split on spaces keeps empty words, as Java's split does. */
const EXPECTED = [
  { apache: 1, spark: 2, streaming: 1 },
  { apache: 2, spark: 2, streaming: 1, sluice: 2, streams: 1, '': 2 },
  { apache: 2, spark: 2, streaming: 1, sluice: 2, streams: 1, '': 3 },
];

const counts = (rows: Array<Record<string, unknown>>): Record<string, unknown> => Object.fromEntries(rows.map((r) => [r.word, r.count]));

describe('word count with split and explode', () => {
  const variants: Array<[string, (name: string) => ReturnType<Session['sql']>]> = [
    [
      'Column calls',
      (name) =>
        session()
          .readStream.format('memory')
          .load(name)
          .select(explode(split(col('value'), ' ')).alias('word'))
          .groupBy('word')
          .count(),
    ],
    ['selectExpr', (name) => session().readStream.format('memory').load(name).selectExpr("explode(split(value, ' ')) AS word").groupBy('word').count()],
    [
      'session.sql',
      (name) => {
        session().readStream.format('memory').load(name).createOrReplaceTempView(`${name}_lines`);
        return session().sql(`SELECT word, count(*) AS count FROM (SELECT explode(split(value, ' ')) AS word FROM ${name}_lines) GROUP BY word`);
      },
    ],
    [
      'session.sql with LATERAL VIEW',
      (name) => {
        session().readStream.format('memory').load(name).createOrReplaceTempView(`${name}_lines`);
        return session().sql(`SELECT word, count(*) AS count FROM ${name}_lines LATERAL VIEW explode(split(value, ' ')) t AS word GROUP BY word`);
      },
    ],
  ];

  it.each(variants)('%s: every word counted after every batch (complete mode)', async (label, build) => {
    const name = `wc_${label.replace(/\W+/g, '_')}`;
    const stream = session().memoryStream(name, 'value STRING');
    const q = await build(name).writeStream.format('memory').queryName(`${name}_out`).outputMode('complete').option('checkpointLocation', tempDir()).start();
    for (const [i, lines] of LINES.entries()) {
      stream.addData(lines.map((value) => ({ value })));
      await q.processAllAvailable();
      expect(counts(await session().memoryTable(`${name}_out`))).toEqual(EXPECTED[i]);
    }
  });
});

describe('generators', () => {
  it('posexplode gives pos and col; explode_outer keeps a row of nulls for an empty or null array; a map explodes to key and value', async () => {
    const stream = session().memoryStream('gen_in', 'id STRING, xs ARRAY<STRING>, m MAP<STRING, INT>');
    const start = (name: string, df: ReturnType<Session['sql']>) => df.writeStream.format('memory').queryName(name).start();
    const base = session().readStream.format('memory').load('gen_in');
    const qs = [
      await start('gen_pos', base.select(col('id'), posexplode('xs'))),
      await start('gen_outer', base.select('id', explode_outer('xs').alias('x'))),
      await start('gen_map', base.selectExpr('id', 'explode(m) AS (k, v)')),
      await start('gen_fns', base.select('id', size('xs').alias('n'), array_contains('xs', 'b').alias('has_b'), element_at('m', 'one').alias('one'))),
    ];
    stream.addData([
      {
        id: 'a',
        xs: ['a', 'b'],
        m: new Map([
          ['one', 1],
          ['two', 2],
        ]),
      },
      { id: 'e', xs: [], m: {} },
      { id: 'n', xs: null, m: null },
    ]);
    for (const q of qs) await q.processAllAvailable();
    expect(await session().memoryTable('gen_pos')).toEqual([
      { id: 'a', pos: 0, col: 'a' },
      { id: 'a', pos: 1, col: 'b' },
    ]);
    expect(await session().memoryTable('gen_outer')).toEqual([
      { id: 'a', x: 'a' },
      { id: 'a', x: 'b' },
      { id: 'e', x: null },
      { id: 'n', x: null },
    ]);
    expect(await session().memoryTable('gen_map')).toEqual([
      { id: 'a', k: 'one', v: 1 },
      { id: 'a', k: 'two', v: 2 },
    ]);
    expect(await session().memoryTable('gen_fns')).toEqual([
      { id: 'a', n: 2, has_b: true, one: 1 },
      { id: 'e', n: 0, has_b: false, one: null },
      { id: 'n', n: -1, has_b: null, one: null },
    ]);
  });

  it('a generator inside an expression, or two in one select, is refused where the DataFrame is built', () => {
    const df = session().readStream.format('rate').load();
    expect(() => df.selectExpr('explode(array(value)) + 1')).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('UNSUPPORTED_GENERATOR.OUTSIDE_SELECT') }),
    );
    expect(() => df.selectExpr('explode(array(value))', 'explode(array(value)) AS b')).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('MULTI_GENERATOR') }),
    );
    expect(() => df.select(posexplode(split(col('value').cast('string'), ',')).alias('only_one'))).toThrow(
      expect.objectContaining({ code: 'INVALID_EXPRESSION' }),
    );
    expect(() => df.select(explode('value'))).toThrow(expect.objectContaining({ code: 'DATATYPE_MISMATCH' }));
  });
});

describe('higher-order functions', () => {
  it("lambdas read their parameters and the row's columns, from Column calls and SQL text, on the column path of a JSON source", async () => {
    const input = tempDir();
    writeInput(input, 'a.json', ['{"k":10,"xs":[1,2,3]}', '{"k":2,"xs":[5,1]}', '{"k":0,"xs":null}']);
    const q = await session()
      .readStream.schema('k INT, xs ARRAY<INT>')
      .format('json')
      .load(input)
      .select(
        col('k'),
        transform('xs', (x) => x.plus(col('k'))).alias('shifted'),
        filter('xs', (x, i) => x.gt(i.plus(1))).alias('above'),
        aggregate('xs', 0, (acc, x) => acc.plus(x)).alias('total'),
      )
      .selectExpr('*', 'exists(shifted, s -> s > k * 2) AS big', "transform(above, (a, i) -> concat(CAST(i AS STRING), ':', CAST(a AS STRING))) AS labels")
      .writeStream.format('memory')
      .queryName('hof_out')
      .start();
    await q.processAllAvailable();
    expect(await session().memoryTable('hof_out')).toEqual([
      { k: 10, shifted: [11, 12, 13], above: [], total: 6, big: false, labels: [] },
      { k: 2, shifted: [7, 3], above: [5], total: 6, big: true, labels: ['0:5'] },
      { k: 0, shifted: null, above: null, total: null, big: null, labels: null },
    ]);
  });

  it('a lambda of the wrong arity or type, or outside a higher-order function, is refused where the DataFrame is built', () => {
    const df = session().readStream.format('rate').load().selectExpr('array(value) AS xs');
    expect(() => df.selectExpr('transform(xs, (a, b, c) -> a)')).toThrow(
      expect.objectContaining({ code: 'DATATYPE_MISMATCH', message: expect.stringContaining('takes 1 or 2 parameters') }),
    );
    expect(() => df.selectExpr('filter(xs, x -> x + 1)')).toThrow(
      expect.objectContaining({ code: 'DATATYPE_MISMATCH', message: expect.stringContaining('must give a boolean') }),
    );
    expect(() => df.selectExpr('transform(xs, 1)')).toThrow(
      expect.objectContaining({ code: 'DATATYPE_MISMATCH', message: expect.stringContaining('must be a lambda') }),
    );
  });
});

describe('ARRAY, MAP and DATE columns in files', () => {
  it('timestampFormat and dateFormat read datetime text by Spark patterns, on the column path of a JSON source and in CSV; a bad pattern is INVALID_OPTION', async () => {
    const json = tempDir();
    const csv = tempDir();
    writeInput(json, 'a.json', ['{"id":"a","at":"26/08/2015 13:05:09","day":"12/31/2015"}', '{"id":"b","at":"2015-08-26","day":"12/31/2015"}']);
    writeInput(csv, 'a.csv', ['a,26/08/2015 13:05:09,12/31/2015']);
    const read = (format: string, dir: string) =>
      session()
        .readStream.format(format)
        .schema('id STRING, at TIMESTAMP, day DATE')
        .option('timestampFormat', 'dd/MM/yyyy HH:mm:ss')
        .option('dateFormat', 'MM/dd/yyyy')
        .load(dir);
    const qs = [
      await read('json', json).writeStream.format('memory').queryName('fmt_json').start(),
      await read('csv', csv).writeStream.format('memory').queryName('fmt_csv').start(),
    ];
    for (const q of qs) await q.processAllAvailable();
    const at = new Date(Date.UTC(2015, 7, 26, 13, 5, 9));
    const day = new Date(Date.UTC(2015, 11, 31));
    expect(await session().memoryTable('fmt_json')).toEqual([
      { id: 'a', at, day },
      { id: 'b', at: null, day },
    ]);
    expect(await session().memoryTable('fmt_csv')).toEqual([{ id: 'a', at, day }]);
    expect(() => session().readStream.format('json').schema('at TIMESTAMP').option('timestampFormat', 'YYYY-ww').load(json)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option: 'timestampFormat' }),
    );
  });

  it('read from JSON, transformed, and written to a JSON file sink as Spark writes them', async () => {
    const input = tempDir();
    const output = tempDir();
    writeInput(input, 'a.json', ['{"id":"a","day":"2024-02-28","tags":["x","y"],"attrs":{"k":1}}', '{"id":"b","day":"2024-03-01","tags":[],"attrs":{}}']);
    const q = await session()
      .readStream.schema('id STRING, day DATE, tags ARRAY<STRING>, attrs MAP<STRING, INT>')
      .format('json')
      .load(input)
      .selectExpr('id', 'day', 'array_union(tags, array(id)) AS tags', 'map_keys(attrs) AS ks', 'CAST(day AS STRING) AS day_text')
      .writeStream.format('json')
      .option('path', output)
      .option('checkpointLocation', tempDir())
      .start();
    await q.processAllAvailable();
    await q.stop();
    const files = readdirSync(output).filter((f) => f.endsWith('.json'));
    const lines = files.flatMap((f) => readFileSync(join(output, f), 'utf8').split('\n').filter(Boolean)).sort();
    expect(lines).toEqual([
      '{"id":"a","day":"2024-02-28","tags":["x","y","a"],"ks":["k"],"day_text":"2024-02-28"}',
      '{"id":"b","day":"2024-03-01","tags":["b"],"ks":[],"day_text":"2024-03-01"}',
    ]);
  });
});
