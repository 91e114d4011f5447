/**
 * Names as Spark resolves them: `struct.*` expands a struct column into its fields (DataFrame and
 * SQL), a non-grouped column in an aggregating SELECT is MISSING_AGGREGATION with Spark's text and
 * no internal names, and a misspelled column, option or conf key comes with Spark's "did you mean".
 */
import { describe, expect, it } from 'vitest';
import { col, expr } from '@sluice/driver';
import { tempDir, useSession } from './helpers.js';

const session = useSession({ 'sluice.executor.cores': 1, 'sluice.sql.shuffle.partitions': 2 });

function thrown(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    return e as Record<string, unknown>;
  }
  throw new Error('expected an error');
}

const EVENT_SCHEMA = 'id STRING, data STRUCT<a: LONG, b: STRING, inner: STRUCT<x: DOUBLE>>';
const EVENTS = [
  { id: 'e1', data: { a: 1, b: 'one', inner: { x: 1.5 } } },
  { id: 'e2', data: null },
];

describe('struct.* expands a struct column into its fields, as in Spark', () => {
  it("select('data.*'), col('data.*'), expr('data.*') and selectExpr('data.inner.*') give one column per field, named by it", async () => {
    const stream = session().memoryStream('star_events', EVENT_SCHEMA);
    const df = session().readStream.format('memory').load('star_events');
    expect(df.select('data.*').columns).toEqual(['a', 'b', 'inner']);
    expect(df.select('id', col('data.*')).columns).toEqual(['id', 'a', 'b', 'inner']);
    expect(df.selectExpr('data.inner.*', 'id').columns).toEqual(['x', 'id']);
    expect(df.select('*').columns).toEqual(['id', 'data']);
    expect(df.select(expr('data.*'), expr('`id`')).columns).toEqual(['a', 'b', 'inner', 'id']);
    expect(df.select(expr(' * ')).columns).toEqual(['id', 'data']);
    expect(df.select('data.*').schema.map((f) => f.type)).toEqual(['long', 'string', { struct: [{ name: 'x', type: 'double', nullable: true }] }]);
    const q = await df.select('id', 'data.*').writeStream.format('memory').queryName('star_out').start();
    stream.addData(EVENTS);
    await q.processAllAvailable();
    expect(await session().memoryTable('star_out')).toEqual([
      { id: 'e1', a: 1, b: 'one', inner: { x: 1.5 } },
      { id: 'e2', a: null, b: null, inner: null },
    ]);
  });

  it("SELECT e.* and SELECT t.e.* expand the struct; t.* stays the relation's columns", async () => {
    const stream = session().memoryStream('star_sql', 'id STRING, e STRUCT<url: STRING, ms LONG>');
    session().readStream.format('memory').load('star_sql').createOrReplaceTempView('visits');
    expect(session().sql('SELECT e.* FROM visits').columns).toEqual(['url', 'ms']);
    expect(session().sql('SELECT id, t.e.* FROM visits t').columns).toEqual(['id', 'url', 'ms']);
    expect(session().sql('SELECT visits.e.* FROM visits').columns).toEqual(['url', 'ms']);
    expect(session().sql('SELECT t.* FROM visits t').columns).toEqual(['id', 'e']);
    expect(session().sql('SELECT * FROM visits').columns).toEqual(['id', 'e']);
    const q = await session().sql('SELECT id, e.* FROM visits WHERE e.ms > 10').writeStream.format('memory').queryName('star_sql_out').start();
    stream.addData([
      { id: 'v1', e: { url: '/a', ms: 20 } },
      { id: 'v2', e: { url: '/b', ms: 5 } },
    ]);
    await q.processAllAvailable();
    expect(await session().memoryTable('star_sql_out')).toEqual([{ id: 'v1', url: '/a', ms: 20 }]);
  });

  it('names what is wrong: a column that is not a struct, a name that is neither a relation nor a column', () => {
    session().memoryStream('star_bad', EVENT_SCHEMA);
    const df = session().readStream.format('memory').load('star_bad');
    expect(thrown(() => df.select('id.*'))).toMatchObject({ code: 'DATATYPE_MISMATCH', column: 'id.*' });
    const e = thrown(() => df.select('dta.*'));
    expect(e).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'dta.*', suggestions: ['data'] });
    expect(String(e.message)).toContain('Did you mean one of the following? [`data`]');
    df.createOrReplaceTempView('star_bad_view');
    expect(thrown(() => session().sql('SELECT q.* FROM star_bad_view'))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'q.*' });
  });
});

describe('a column outside GROUP BY and its aggregates', () => {
  const CLICKS = 'ts TIMESTAMP, url STRING, user STRING';

  it("is MISSING_AGGREGATION with Spark's message, never an internal column name", () => {
    session().memoryStream('agg_clicks', CLICKS);
    session().readStream.format('memory').load('agg_clicks').createOrReplaceTempView('clicks');
    const e = thrown(() => session().sql("SELECT window(ts, '30 minutes') AS window, url, count(*), max(user) FROM clicks GROUP BY window(ts, '30 minutes')"));
    expect(e).toMatchObject({ code: 'MISSING_AGGREGATION', column: 'url' });
    expect(String(e.message)).toContain(
      'The non-aggregating expression "url" is based on columns which are not participating in the GROUP BY clause. ' +
        'Add the columns or the expression to the GROUP BY, aggregate the expression, or use "any_value(url)" if you do not care which of the values within a group is returned.',
    );
    expect(String(e.message)).not.toMatch(/__agg|__group_rows/);
    // Inside an expression, and in HAVING, too.
    expect(thrown(() => session().sql('SELECT upper(user), count(*) FROM clicks GROUP BY url'))).toMatchObject({ code: 'MISSING_AGGREGATION', column: 'user' });
    expect(thrown(() => session().sql("SELECT url, count(*) FROM clicks GROUP BY url HAVING user = 'x'"))).toMatchObject({
      code: 'MISSING_AGGREGATION',
      column: 'user',
    });
    // An aggregate without GROUP BY: Spark's MISSING_GROUP_BY.
    const noGroup = thrown(() => session().sql('SELECT url, count(*) FROM clicks'));
    expect(noGroup).toMatchObject({ code: 'MISSING_GROUP_BY' });
    expect(String(noGroup.message)).toContain('The query does not include a GROUP BY clause.');
  });

  it('still plans grouped columns, fields of a grouped struct and aggregates; other errors name aggregates as written', () => {
    session().memoryStream('agg_ok', CLICKS);
    session().readStream.format('memory').load('agg_ok').createOrReplaceTempView('clicks_ok');
    expect(session().sql("SELECT window.start, url, count(*) AS n FROM clicks_ok GROUP BY window(ts, '30 minutes'), url").columns).toEqual([
      'start',
      'url',
      'n',
    ]);
    expect(session().sql('SELECT upper(url), any_value(user) FROM clicks_ok GROUP BY upper(url)').columns).toEqual(['upper(url)', 'any_value(user)']);
    const typo = thrown(() => session().sql('SELECT ulr, count(*) FROM clicks_ok GROUP BY url'));
    expect(typo).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'ulr' });
    expect((typo.suggestions as string[])[0]).toBe('url');
    expect(String(typo.message)).not.toMatch(/__agg|__group_rows/);
    const typed = thrown(() => session().sql("SELECT url, date_add(count(*), 'x') FROM clicks_ok GROUP BY url"));
    expect(typed.code).toBeDefined();
    expect(String(typed.message)).not.toMatch(/__agg|__group_rows/);
  });
});

describe('a misspelled name gets a "did you mean"', () => {
  it("a column: the closest names by edit distance, at most five, in Spark's words; the code stays UNRESOLVED_COLUMN", () => {
    session().memoryStream('typo_clicks', 'ts TIMESTAMP, url STRING, user_id STRING, uri STRING, v1 LONG, v2 LONG, v3 LONG');
    const df = session().readStream.format('memory').load('typo_clicks');
    const e = thrown(() => df.select('ulr'));
    expect(e).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'ulr', suggestions: ['url', 'uri', 'ts', 'v1', 'v2'] });
    expect(String(e.message)).toContain(
      'A column, variable, or function parameter with name `ulr` cannot be resolved. Did you mean one of the following? [`url`, `uri`, `ts`, `v1`, `v2`].',
    );
    expect(thrown(() => df.filter(col('user_di').isNotNull()))).toMatchObject({ code: 'UNRESOLVED_COLUMN', suggestions: expect.arrayContaining(['user_id']) });
    expect((thrown(() => df.filter(col('user_di').isNotNull())).suggestions as string[])[0]).toBe('user_id');
    expect((thrown(() => df.dropDuplicates(['usr_id'])).suggestions as string[])[0]).toBe('user_id');
    expect((thrown(() => df.withWatermark('tss', '1 minute')).suggestions as string[])[0]).toBe('ts');
    df.createOrReplaceTempView('typo_view');
    const sql = thrown(() => session().sql('SELECT ulr FROM typo_view'));
    expect(sql).toMatchObject({ code: 'UNRESOLVED_COLUMN' });
    expect(String(sql.message)).toContain('Did you mean one of the following? [`url`');
  });

  it('an option or a conf key: the closest known ones, with the codes UNKNOWN_OPTION and INVALID_CONF', async () => {
    const reader = thrown(() => session().readStream.format('json').schema('v LONG').option('maxFilePerTrigger', 2).load(tempDir()));
    expect(reader).toMatchObject({ code: 'UNKNOWN_OPTION', option: 'maxFilePerTrigger' });
    expect((reader.suggestions as string[])[0]).toBe('maxFilesPerTrigger');
    expect(String(reader.message)).toContain('Did you mean one of the following? [`maxFilesPerTrigger`');
    session().memoryStream('typo_opts', 'v LONG');
    const start = session().readStream.format('memory').load('typo_opts').writeStream.format('console').option('numRow', 5).start();
    await expect(start).rejects.toMatchObject({ code: 'UNKNOWN_OPTION', option: 'numRow', suggestions: expect.arrayContaining(['numRows']) });
    await start.catch((e: { suggestions: string[] }) => expect(e.suggestions[0]).toBe('numRows'));
    const conf = thrown(() => session().conf.set('spark.sql.shuffle.partition', 3));
    expect(conf).toMatchObject({ code: 'INVALID_CONF', option: 'spark.sql.shuffle.partition' });
    expect((conf.suggestions as string[])[0]).toBe('spark.sql.shuffle.partitions');
    expect(String(conf.message)).toContain('Did you mean one of the following? [`spark.sql.shuffle.partitions`');
  });
});
