/**
 * What a user sees when the input, the options, the configuration or the checkpoint is bad: every
 * such error carries a stable `code` and names the culprit (`file`, `option`, `column`, `line`);
 * validation errors surface before any batch runs; an error while running ends that query alone,
 * through awaitTermination, `query.exception` and onQueryTerminated, never as an unhandled
 * rejection; and a corrupt checkpoint is refused without touching committed output.
 */
import { cpSync, existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { col, Session, type DataFrame, type QueryTerminatedEvent } from '@sluice/driver';
import { jsonLines, readSinkJson, tempDir, thrown, useSession, writeInput } from './helpers.js';

const SCHEMA = 'id STRING, v LONG';

const session = useSession();

/** A JSON source over a directory holding one valid file, so a query that started would run a batch. */
function jsonSource(): { input: string; df: DataFrame } {
  const input = tempDir();
  writeInput(input, 'a.json', jsonLines([{ id: 'a', v: 1 }]), 1_000);
  return { input, df: session().readStream.format('json').schema(SCHEMA).load(input) };
}

let controls = 0;

/**
 * Runs `df` into the memory sink until it has nothing left to read, and asserts its batches as
 * [batchId, rows]. It is the event a check that nothing ran waits for: a query that a refused
 * start() had wrongly let run, started before this one over the same input, would have planned
 * and run its batch by the time this one has run all of its own.
 */
async function expectControlBatches(df: DataFrame, batches: Array<[number, number]>): Promise<void> {
  const q = await df.writeStream.format('memory').queryName(`control_${controls++}`).start();
  try {
    await q.processAllAvailable();
    expect(
      q.recentProgress.map((p) => [p.batchId, p.numInputRows]),
      'batches of the control query',
    ).toEqual(batches);
  } finally {
    await q.stop();
  }
}

/** start() over `df` (one row, see jsonSource) rejected before any batch: no active query, no offsets, no commits, no sink output. */
async function expectNoBatchRan(df: DataFrame, ckpt: string, out?: string): Promise<void> {
  expect(session().streams.active).toHaveLength(0);
  await expectControlBatches(df, [[0, 1]]);
  expect(existsSync(join(ckpt, 'offsets', '0'))).toBe(false);
  expect(existsSync(join(ckpt, 'commits', '0'))).toBe(false);
  if (out !== undefined) expect(existsSync(join(out, '_sluice_metadata'))).toBe(false);
  expect(session().streams.active).toHaveLength(0);
}

/**
 * Collects the unhandled rejections of `fn`, which ends on the event showing that the engine is
 * done with what it tests (the query's termination as its listener heard it, a control query's
 * batches). Node reports a rejection left unhandled at the end of the tick it happened in, so the
 * next turn of the event loop has seen every one.
 */
async function withRejectionWatch(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const onRejection = (reason: unknown): void => void seen.push(reason);
  process.on('unhandledRejection', onRejection);
  try {
    await fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onRejection);
  }
  return seen;
}

// ------------------------------------------------------------------------------------------------

describe('parse modes', () => {
  const JSON_INPUT = [
    '{"id":"a","v":1}',
    '{"id":"b","v":', // not JSON
    '{"id":"c","v":"three"}', // a value of the wrong type
    '{"id":"d","v":4}',
  ];
  const CSV_INPUT = [
    'a,1',
    '"b,2', // unbalanced quote
    'c,three', // a value of the wrong type
    'd,4',
  ];

  async function runToMemory(df: DataFrame, name: string): Promise<Array<Record<string, unknown>>> {
    const q = await df.writeStream.format('memory').queryName(name).start();
    await q.processAllAvailable();
    await q.stop();
    expect(q.exception).toBeNull();
    return session().memoryTable(name);
  }

  it('PERMISSIVE on JSON: a malformed line gives nulls and its raw text in the declared _corrupt_record', async () => {
    const input = tempDir();
    writeInput(input, 'in.json', JSON_INPUT, 1_000);
    const rows = await runToMemory(
      session().readStream.format('json').schema(`${SCHEMA}, _corrupt_record STRING`).option('mode', 'PERMISSIVE').load(input),
      'permissive_json',
    );
    const byId = (id: string | null) => rows.filter((r) => r.id === id);
    expect(rows).toHaveLength(4);
    expect(byId('a')).toEqual([{ id: 'a', v: 1, _corrupt_record: null }]);
    expect(byId('d')).toEqual([{ id: 'd', v: 4, _corrupt_record: null }]);
    // Unparseable: every data column null, the raw line kept.
    expect(byId(null)).toEqual([{ id: null, v: null, _corrupt_record: '{"id":"b","v":' }]);
    // Wrong type: the column that parsed keeps its value (Spark 3), the raw line is kept.
    expect(byId('c')).toEqual([{ id: 'c', v: null, _corrupt_record: '{"id":"c","v":"three"}' }]);
  });

  it('PERMISSIVE is the default mode, and columnNameOfCorruptRecord renames the corrupt column', async () => {
    const input = tempDir();
    writeInput(input, 'in.json', JSON_INPUT, 1_000);
    const rows = await runToMemory(
      session().readStream.format('json').schema(SCHEMA).option('columnNameOfCorruptRecord', 'raw').load(input),
      'permissive_rename',
    );
    expect(rows).toHaveLength(4);
    expect(rows.find((r) => r.id === 'a')).toMatchObject({ id: 'a', v: 1, raw: null });
    expect(rows.find((r) => r.id === null)).toMatchObject({ id: null, v: null, raw: '{"id":"b","v":' });
    expect(rows.find((r) => r.id === 'c')).toMatchObject({ id: 'c', v: null, raw: '{"id":"c","v":"three"}' });
  });

  it('PERMISSIVE without a declared corrupt-record column: a malformed line gives nulls, no extra column (as Spark)', async () => {
    const input = tempDir();
    writeInput(input, 'in.json', JSON_INPUT, 1_000);
    const df = session().readStream.format('json').schema(SCHEMA).load(input);
    expect(df.columns).toEqual(['id', 'v']);
    const rows = await runToMemory(df, 'permissive_undeclared');
    expect(rows).toEqual([
      { id: 'a', v: 1 },
      { id: null, v: null },
      { id: 'c', v: null },
      { id: 'd', v: 4 },
    ]);
  });

  it('a corrupt-record column that is not STRING fails at load() with INVALID_SCHEMA', () => {
    const e = thrown(() => session().readStream.format('json').schema(`${SCHEMA}, _corrupt_record LONG`).load(tempDir()));
    expect(e).toMatchObject({ code: 'INVALID_SCHEMA', column: '_corrupt_record' });
  });

  it('PERMISSIVE on CSV: nulls plus the raw line in _corrupt_record', async () => {
    const input = tempDir();
    writeInput(input, 'in.csv', CSV_INPUT, 1_000);
    const rows = await runToMemory(session().readStream.format('csv').schema(`${SCHEMA}, _corrupt_record STRING`).load(input), 'permissive_csv');
    expect(rows).toHaveLength(4);
    expect(rows.find((r) => r.id === 'a')).toEqual({ id: 'a', v: 1, _corrupt_record: null });
    expect(rows.find((r) => r.id === 'd')).toEqual({ id: 'd', v: 4, _corrupt_record: null });
    expect(rows.find((r) => r._corrupt_record === '"b,2')).toEqual({ id: null, v: null, _corrupt_record: '"b,2' });
    expect(rows.find((r) => r.id === 'c')).toEqual({ id: 'c', v: null, _corrupt_record: 'c,three' });
  });

  it('DROPMALFORMED skips malformed lines and keeps the others (JSON and CSV)', async () => {
    const jsonIn = tempDir();
    writeInput(jsonIn, 'in.json', JSON_INPUT, 1_000);
    const json = await runToMemory(session().readStream.format('json').schema(SCHEMA).option('mode', 'DROPMALFORMED').load(jsonIn), 'drop_json');
    expect(json).toEqual([
      { id: 'a', v: 1 },
      { id: 'd', v: 4 },
    ]);

    const csvIn = tempDir();
    writeInput(csvIn, 'in.csv', CSV_INPUT, 1_000);
    const csv = await runToMemory(session().readStream.format('csv').schema(SCHEMA).option('mode', 'dropmalformed').load(csvIn), 'drop_csv');
    expect(csv).toEqual([
      { id: 'a', v: 1 },
      { id: 'd', v: 4 },
    ]);
  });

  it('FAILFAST ends the query with MALFORMED_RECORD naming file and line; earlier batches stay, no unhandled rejection', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    writeInput(
      input,
      'good.json',
      jsonLines([
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
      ]),
      1_000,
    );
    const bad = writeInput(input, 'bad.json', ['{"id":"c","v":3}', '{"id":"d","v":4}', '{"id":"e","v":', '{"id":"f","v":6}'], 2_000);
    const terminated: QueryTerminatedEvent[] = [];
    const listener = { onQueryTerminated: (e: QueryTerminatedEvent) => void terminated.push(e) };
    session().streams.addListener(listener);
    try {
      const unhandled = await withRejectionWatch(async () => {
        const q = await session()
          .readStream.format('json')
          .schema(SCHEMA)
          .option('mode', 'FAILFAST')
          .option('maxFilesPerTrigger', 1)
          .load(input)
          .writeStream.format('json')
          .option('checkpointLocation', ckpt)
          .start(out);
        const err = await q.awaitTermination().then(
          () => null,
          (e: unknown) => e as Record<string, unknown>,
        );
        expect(err).toMatchObject({ code: 'MALFORMED_RECORD', file: bad, line: 3 });
        expect(q.exception).toBe(err);
        expect(q.isActive).toBe(false);
        expect(session().streams.active).not.toContain(q);
        // Waiting again gives the same error; processAllAvailable on the failed query rejects with it.
        await expect(q.awaitTermination()).rejects.toBe(err);
        await expect(q.processAllAvailable()).rejects.toBe(err);
        await session().listenerBus.idle();
        const mine = terminated.filter((e) => e.id === q.id);
        expect(mine).toHaveLength(1);
        expect(mine[0]?.errorClassOnException).toBe('MALFORMED_RECORD');
        expect(mine[0]?.exception).toEqual(expect.any(String));
      });
      expect(unhandled).toEqual([]);
    } finally {
      session().streams.removeListener(listener);
    }
    // Batch 0 (good.json) committed; batch 1 (bad.json) left nothing in the sink.
    expect(readSinkJson(out)).toEqual([
      { id: 'a', v: 1 },
      { id: 'b', v: 2 },
    ]);
    expect(existsSync(join(ckpt, 'commits', '0'))).toBe(true);
    expect(existsSync(join(ckpt, 'commits', '1'))).toBe(false);

    // The failed batch is planned but not committed: a restart in DROPMALFORMED mode re-runs it
    // over the same file, and the sink gets its good rows exactly once.
    const again = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .option('mode', 'DROPMALFORMED')
      .option('maxFilesPerTrigger', 1)
      .load(input)
      .writeStream.format('json')
      .option('checkpointLocation', ckpt)
      .start(out);
    await again.processAllAvailable();
    await again.stop();
    expect(again.exception).toBeNull();
    expect(again.recentProgress.map((p) => [p.batchId, p.numInputRows])).toEqual([[1, 3]]);
    expect(readSinkJson(out).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'f']);
  });

  it('an error thrown by foreachBatch ends that query with FOREACH_BATCH_FAILED holding the cause', async () => {
    const stream = session().memoryStream('fb_err_in', SCHEMA);
    const terminated: QueryTerminatedEvent[] = [];
    const listener = { onQueryTerminated: (e: QueryTerminatedEvent) => void terminated.push(e) };
    session().streams.addListener(listener);
    try {
      const unhandled = await withRejectionWatch(async () => {
        const seen: number[] = [];
        const q = await session()
          .readStream.format('memory')
          .load('fb_err_in')
          .writeStream.foreachBatch(async (rows, batchId) => {
            if (rows.some((r) => r.v === 13)) throw new Error('unlucky row');
            seen.push(batchId);
          })
          .start();
        stream.addData([{ id: 'a', v: 1 }]);
        await q.processAllAvailable();
        stream.addData([{ id: 'b', v: 13 }]);
        const err = await q.awaitTermination().then(
          () => null,
          (e: unknown) => e as { code?: string; cause?: unknown },
        );
        expect(err?.code).toBe('FOREACH_BATCH_FAILED');
        expect((err as { message?: string }).message).toBe('the foreachBatch function threw on batch 1: unlucky row');
        expect((err?.cause as Error | undefined)?.message).toBe('unlucky row');
        expect(q.exception).toBe(err);
        expect(seen).toEqual([0]);
        await session().listenerBus.idle();
        expect(terminated.filter((e) => e.id === q.id).map((e) => e.errorClassOnException)).toEqual(['FOREACH_BATCH_FAILED']);
      });
      expect(unhandled).toEqual([]);
    } finally {
      session().streams.removeListener(listener);
    }
  });

  it('FAILFAST on CSV names the file, the line and the column', async () => {
    const input = tempDir();
    const bad = writeInput(input, 'in.csv', ['a,1', 'b,2', 'c,three'], 1_000);
    const q = await session()
      .readStream.format('csv')
      .schema(SCHEMA)
      .option('mode', 'FAILFAST')
      .load(input)
      .writeStream.format('memory')
      .queryName('failfast_csv')
      .start();
    await expect(q.awaitTermination()).rejects.toMatchObject({ code: 'MALFORMED_RECORD', file: bad, line: 3, column: 'v' });
    expect(q.exception?.code).toBe('MALFORMED_RECORD');
    expect(await session().memoryTable('failfast_csv')).toEqual([]);
  });

  it('a failing query does not disturb another query of the session', async () => {
    const goodIn = tempDir();
    const badIn = tempDir();
    writeInput(badIn, 'bad.json', ['nope'], 1_000);
    const good = await session().readStream.format('json').schema(SCHEMA).load(goodIn).writeStream.format('memory').queryName('survivor').start();
    const failing = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .option('mode', 'FAILFAST')
      .load(badIn)
      .writeStream.format('memory')
      .queryName('failing')
      .start();
    await expect(failing.awaitTermination()).rejects.toMatchObject({ code: 'MALFORMED_RECORD', line: 1 });
    writeInput(goodIn, 'a.json', jsonLines([{ id: 'x', v: 9 }]), 1_000);
    await good.processAllAvailable();
    expect(good.isActive).toBe(true);
    expect(await session().memoryTable('survivor')).toEqual([{ id: 'x', v: 9 }]);
  });
});

// ------------------------------------------------------------------------------------------------

describe('bad formats and options', () => {
  it('an unknown source format fails at load() with UNKNOWN_FORMAT', () => {
    const e = thrown(() => session().readStream.format('orc').schema(SCHEMA).load(tempDir()));
    expect(e).toMatchObject({ code: 'UNKNOWN_FORMAT', option: 'format' });
    expect(String(e.message)).toContain('orc');
  });

  it('an unknown sink format: start() rejects with UNKNOWN_FORMAT and no batch runs', async () => {
    const { df } = jsonSource();
    const ckpt = tempDir();
    await expect(df.writeStream.format('kafka').option('checkpointLocation', ckpt).start(tempDir())).rejects.toMatchObject({
      code: 'UNKNOWN_FORMAT',
      option: 'format',
    });
    await expectNoBatchRan(df, ckpt);
  });

  it('an unknown reader option (a typo) fails at load() with UNKNOWN_OPTION naming it', () => {
    const input = tempDir();
    expect(thrown(() => session().readStream.format('json').schema(SCHEMA).option('maxFilePerTrigger', 2).load(input))).toMatchObject({
      code: 'UNKNOWN_OPTION',
      option: 'maxFilePerTrigger',
    });
    // An option of another format is unknown too.
    expect(thrown(() => session().readStream.format('json').schema(SCHEMA).option('header', true).load(input))).toMatchObject({
      code: 'UNKNOWN_OPTION',
      option: 'header',
    });
    expect(thrown(() => session().readStream.format('rate').option('rowsPerSec', 5).load())).toMatchObject({
      code: 'UNKNOWN_OPTION',
      option: 'rowsPerSec',
    });
  });

  it('an unknown writer option: start() rejects with UNKNOWN_OPTION naming it, before any batch', async () => {
    const { df } = jsonSource();
    const ckpt = tempDir();
    const out = tempDir();
    await expect(df.writeStream.format('json').option('checkpointLocation', ckpt).option('compresion', 'gzip').start(out)).rejects.toMatchObject({
      code: 'UNKNOWN_OPTION',
      option: 'compresion',
    });
    await expectNoBatchRan(df, ckpt, out);
  });

  it.each([
    ['maxFilesPerTrigger', 0],
    ['maxFilesPerTrigger', 'two'],
    ['maxBytesPerTrigger', 'lots'],
    ['maxFileAge', 'soon'],
    ['mode', 'STRICT'],
    ['latestFirst', 'maybe'],
    ['cleanSource', 'shred'],
    ['maxFilesPerTrigger', 1.5],
    ['maxBytesPerTrigger', 0],
    ['maxFileAge', -1],
  ] as const)('a bad value of %s (%j) fails at load() with INVALID_OPTION naming it', (option, value) => {
    const e = thrown(() => session().readStream.format('json').schema(SCHEMA).option(option, value).load(tempDir()));
    expect(e).toMatchObject({ code: 'INVALID_OPTION', option });
  });

  it("cleanSource 'archive' without sourceArchiveDir fails with INVALID_OPTION naming sourceArchiveDir", () => {
    const e = thrown(() => session().readStream.format('json').schema(SCHEMA).option('cleanSource', 'archive').load(tempDir()));
    expect(e).toMatchObject({ code: 'INVALID_OPTION', option: 'sourceArchiveDir' });
  });

  it('a missing required option is INVALID_OPTION naming it', async () => {
    expect(thrown(() => session().readStream.format('rate-micro-batch').load())).toMatchObject({ code: 'INVALID_OPTION', option: 'rowsPerBatch' });
    expect(thrown(() => session().readStream.format('rate-micro-batch').option('rowsPerBatch', -5).load())).toMatchObject({
      code: 'INVALID_OPTION',
      option: 'rowsPerBatch',
    });
    const { df } = jsonSource();
    await expect(df.writeStream.format('memory').start()).rejects.toMatchObject({ code: 'INVALID_OPTION', option: 'queryName' });
    expect(session().streams.active).toHaveLength(0);
  });

  it('a bad writer option value: start() rejects with INVALID_OPTION, before any batch', async () => {
    const { df } = jsonSource();
    const ckpt = tempDir();
    await expect(df.writeStream.format('csv').option('checkpointLocation', ckpt).option('header', 'yes please').start(tempDir())).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'header',
    });
    // @ts-expect-error: 'upsert' is no output mode, which the run refuses too
    await expect(df.writeStream.format('json').option('checkpointLocation', ckpt).outputMode('upsert').start(tempDir())).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'outputMode',
    });
    await expectNoBatchRan(df, ckpt);
  });

  it('a streaming json or csv source without a schema fails at load() with SCHEMA_REQUIRED', () => {
    for (const format of ['json', 'csv']) {
      expect(thrown(() => session().readStream.format(format).load(tempDir()))).toMatchObject({ code: 'SCHEMA_REQUIRED', option: 'schema' });
    }
  });

  it('a bad DDL schema fails at schema() with INVALID_SCHEMA naming the column', () => {
    expect(thrown(() => session().readStream.format('json').schema('id STRNG, v LONG'))).toMatchObject({
      code: 'INVALID_SCHEMA',
      option: 'schema',
      column: 'id',
    });
    expect(thrown(() => session().readStream.format('json').schema('id STRING,'))).toMatchObject({ code: 'INVALID_SCHEMA' });
    expect(thrown(() => session().readStream.format('json').schema({ id: 'varchar2' }))).toMatchObject({
      code: 'INVALID_SCHEMA',
      column: 'id',
    });
  });

  it('a file sink without checkpointLocation: start() rejects with CHECKPOINT_LOCATION_REQUIRED', async () => {
    const { df } = jsonSource();
    const out = tempDir();
    for (const format of ['json', 'csv']) {
      await expect(df.writeStream.format(format).start(out)).rejects.toMatchObject({
        code: 'CHECKPOINT_LOCATION_REQUIRED',
        option: 'checkpointLocation',
      });
    }
    expect(session().streams.active).toHaveLength(0);
    await expectControlBatches(df, [[0, 1]]);
    expect(readdirSync(out)).toEqual([]);
  });

  it("outputMode('complete') on a stateless query: start() rejects with UNSUPPORTED_OUTPUT_MODE before any batch", async () => {
    const { df } = jsonSource();
    const ckpt = tempDir();
    const out = tempDir();
    await expect(df.select(col('id')).writeStream.format('json').outputMode('complete').option('checkpointLocation', ckpt).start(out)).rejects.toMatchObject({
      code: 'UNSUPPORTED_OUTPUT_MODE',
      option: 'outputMode',
    });
    await expect(df.writeStream.format('memory').queryName('complete_stateless').outputMode('complete').start()).rejects.toMatchObject({
      code: 'UNSUPPORTED_OUTPUT_MODE',
    });
    await expectNoBatchRan(df, ckpt, out);
  });
});

// ------------------------------------------------------------------------------------------------

describe('bad configuration', () => {
  it('session.conf.set refuses an unknown key and a bad value with INVALID_CONF naming the key', () => {
    expect(thrown(() => session().conf.set('sluice.sql.shufle.partitions', 4))).toMatchObject({
      code: 'INVALID_CONF',
      option: 'sluice.sql.shufle.partitions',
    });
    expect(thrown(() => session().conf.set('spark.sql.notAThing', 'x'))).toMatchObject({ code: 'INVALID_CONF', option: 'spark.sql.notAThing' });
    expect(thrown(() => session().conf.set('sluice.sql.shuffle.partitions', 0))).toMatchObject({
      code: 'INVALID_CONF',
      option: 'sluice.sql.shuffle.partitions',
    });
    expect(thrown(() => session().conf.set('spark.sql.shuffle.partitions', 'many'))).toMatchObject({
      code: 'INVALID_CONF',
      option: 'spark.sql.shuffle.partitions',
    });
    expect(thrown(() => session().conf.set('sluice.scheduler.mode', 'ROUND_ROBIN'))).toMatchObject({
      code: 'INVALID_CONF',
      option: 'sluice.scheduler.mode',
    });
    // A refused value leaves the previous one in force.
    expect(session().conf.get('sluice.sql.shuffle.partitions')).toBe(200);
  });

  it('the spark.* alias sets the sluice.* key', () => {
    session().conf.set('spark.sql.shuffle.partitions', '8');
    try {
      expect(session().conf.get('sluice.sql.shuffle.partitions')).toBe(8);
      expect(session().conf.get('spark.sql.shuffle.partitions')).toBe(8);
    } finally {
      session().conf.unset('sluice.sql.shuffle.partitions');
    }
  });

  it('Session.create rejects an unknown key or a bad value with INVALID_CONF, and accepts spark.* aliases', async () => {
    await expect(Session.create({ conf: { 'sluice.executor.corez': 2 } })).rejects.toMatchObject({
      code: 'INVALID_CONF',
      option: 'sluice.executor.corez',
    });
    await expect(Session.create({ conf: { 'sluice.executor.cores': 0 } })).rejects.toMatchObject({
      code: 'INVALID_CONF',
      option: 'sluice.executor.cores',
    });
    await expect(Session.create({ conf: { 'spark.task.maxFailures': 'often' } })).rejects.toMatchObject({
      code: 'INVALID_CONF',
      option: 'spark.task.maxFailures',
    });
    const s = await Session.create({ conf: { 'spark.sql.shuffle.partitions': 3, 'sluice.executor.cores': 1 } });
    try {
      expect(s.conf.get('sluice.sql.shuffle.partitions')).toBe(3);
    } finally {
      await s.close();
    }
  });
});

// ------------------------------------------------------------------------------------------------

describe('bad plans', () => {
  it('an unknown column in select, filter or withColumn fails at the call with UNRESOLVED_COLUMN naming it', () => {
    const df = session().readStream.format('json').schema(SCHEMA).load(tempDir());
    expect(thrown(() => df.select(col('nope')))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'nope' });
    expect(thrown(() => df.select('id', 'vv'))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'vv' });
    expect(thrown(() => df.filter(col('value').gt(1)))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'value' });
    expect(thrown(() => df.where(col('v').gt(1).and(col('ID2').isNull())))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'ID2' });
    expect(thrown(() => df.withColumn('w', col('missing').plus(1)))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'missing' });
    // A column dropped by an earlier select is gone.
    expect(thrown(() => df.select(col('id')).filter(col('v').gt(0)))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'v' });
  });

  it('withWatermark on a non-timestamp column fails at the call naming the column', () => {
    const df = session().readStream.format('json').schema('id STRING, v LONG, ts TIMESTAMP').load(tempDir());
    expect(thrown(() => df.withWatermark('v', '10 seconds'))).toMatchObject({ code: 'INVALID_EVENT_TIME_COLUMN', column: 'v' });
    expect(thrown(() => df.withWatermark('id', '10 seconds'))).toMatchObject({ column: 'id' });
    expect(thrown(() => df.withWatermark('event_time', '10 seconds'))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'event_time' });
    expect(thrown(() => df.withWatermark('ts', 'a while'))).toMatchObject({ code: 'INVALID_OPTION' });
    expect(df.withWatermark('ts', '10 seconds').columns).toEqual(['id', 'v', 'ts']);
  });
});

// ------------------------------------------------------------------------------------------------

describe('corrupt checkpoint files', () => {
  let input: string;
  let out: string;
  let ckpt: string;
  let committed: Array<Record<string, unknown>>;

  const source = () => session().readStream.format('json').schema(SCHEMA).option('maxFilesPerTrigger', 1).load(input);
  const start = (checkpoint: string) => source().writeStream.format('json').option('checkpointLocation', checkpoint).start(out);

  beforeAll(async () => {
    input = tempDir();
    out = tempDir();
    ckpt = tempDir();
    writeInput(
      input,
      'a.json',
      jsonLines([
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
      ]),
      1_000,
    );
    writeInput(input, 'b.json', jsonLines([{ id: 'c', v: 3 }]), 2_000);
    const q = await start(ckpt);
    await q.processAllAvailable();
    await q.stop();
    expect(q.lastProgress?.batchId).toBe(1);
    committed = readSinkJson(out);
    expect(committed).toHaveLength(3);
    // New input: a restart that wrongly went ahead would change the sink.
    writeInput(input, 'c.json', jsonLines([{ id: 'd', v: 4 }]), 3_000);
  });

  /** A copy of the good checkpoint, damaged by `damage(copyDir)`; returns the copy. */
  function damagedCopy(damage: (dir: string) => void): string {
    const copy = tempDir();
    cpSync(ckpt, copy, { recursive: true });
    damage(copy);
    return copy;
  }

  async function expectRefused(copy: string, code: string, file: string): Promise<void> {
    const unhandled = await withRejectionWatch(async () => {
      await expect(start(copy)).rejects.toMatchObject({ code, file });
      expect(session().streams.active).toHaveLength(0);
      // A restart that wrongly went ahead would have written c.json's row by the time a query
      // over the same input has read all three files.
      await expectControlBatches(source(), [
        [0, 2],
        [1, 1],
        [2, 1],
      ]);
    });
    expect(unhandled).toEqual([]);
    expect(existsSync(join(copy, '.lock'))).toBe(false); // the refused start released its lock
    expect(readSinkJson(out)).toEqual(committed); // committed output never lost or changed
  }

  it('a torn offsets/<last> is CHECKPOINT_CORRUPT naming the file', async () => {
    const copy = damagedCopy((d) => {
      const f = join(d, 'offsets', '1');
      truncateSync(f, Math.floor(readFileSync(f).length / 2));
    });
    await expectRefused(copy, 'CHECKPOINT_CORRUPT', join(copy, 'offsets', '1'));
  });

  it('garbage in commits/<last> is CHECKPOINT_CORRUPT naming the file', async () => {
    const copy = damagedCopy((d) => writeFileSync(join(d, 'commits', '1'), Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a, 0x7b])));
    await expectRefused(copy, 'CHECKPOINT_CORRUPT', join(copy, 'commits', '1'));
  });

  it('valid JSON without the expected fields in commits/<last> is CHECKPOINT_CORRUPT', async () => {
    const copy = damagedCopy((d) => writeFileSync(join(d, 'commits', '1'), 'v1\n{"hello":"world"}\n'));
    await expectRefused(copy, 'CHECKPOINT_CORRUPT', join(copy, 'commits', '1'));
  });

  it('an empty (torn) metadata file is CHECKPOINT_CORRUPT naming the file', async () => {
    const copy = damagedCopy((d) => truncateSync(join(d, 'metadata'), 0));
    await expectRefused(copy, 'CHECKPOINT_CORRUPT', join(copy, 'metadata'));
  });

  it('metadata from a newer format version is CHECKPOINT_VERSION_UNSUPPORTED naming the file', async () => {
    const copy = damagedCopy((d) => {
      const f = join(d, 'metadata');
      const text = readFileSync(f, 'utf8');
      expect(text.startsWith('v1\n')).toBe(true);
      writeFileSync(f, `v99\n${text.slice(3)}`);
    });
    await expectRefused(copy, 'CHECKPOINT_VERSION_UNSUPPORTED', join(copy, 'metadata'));
  });

  it('an offsets file from a newer format version is CHECKPOINT_VERSION_UNSUPPORTED naming the file', async () => {
    const copy = damagedCopy((d) => {
      const f = join(d, 'offsets', '1');
      writeFileSync(f, readFileSync(f, 'utf8').replace(/^v1\n/, 'v2\n'));
    });
    await expectRefused(copy, 'CHECKPOINT_VERSION_UNSUPPORTED', join(copy, 'offsets', '1'));
  });

  it('a corrupt source log file sources/0/<n> is CHECKPOINT_CORRUPT naming the file', async () => {
    const copy = damagedCopy((d) => {
      const f = join(d, 'sources', '0', '1');
      expect(existsSync(f)).toBe(true);
      writeFileSync(f, 'v1\n{"files":[{"path":');
    });
    await expectRefused(copy, 'CHECKPOINT_CORRUPT', join(copy, 'sources', '0', '1'));
  });

  it('the intact checkpoint still restarts and takes only the new file, exactly once', async () => {
    const q = await start(ckpt);
    await q.processAllAvailable();
    await q.stop();
    expect(q.exception).toBeNull();
    expect(q.lastProgress?.batchId).toBe(2);
    expect(readSinkJson(out)).toEqual([...committed, { id: 'd', v: 4 }]);
  });
});
