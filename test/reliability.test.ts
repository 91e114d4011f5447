/**
 * Never hang, never lose data silently: the cases a user met as bad input or faults, each with
 * what they now observe. Every session here is the test's own and is closed in a `finally`.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { col, lit, Session, Trigger, udf, type StreamingQuery } from '@sluice/driver';
import {
  hasRoot,
  jsonLines,
  mountTmpfs,
  readSinkJson,
  remountTmpfs,
  removeTempDirs,
  sleep,
  tempDir,
  unmount,
  waitUntil,
  withSession,
  writeInput,
} from './helpers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const UDFS = new URL('./fixtures/udfs.mjs', import.meta.url);

afterAll(removeTempDirs);

describe('the listener bus under pressure', () => {
  it('delivers every start, termination and query progress while idle events flood a small queue', async () => {
    await withSession({ 'sluice.scheduler.listenerbus.eventqueue.capacity': 20, 'sluice.sql.streaming.noDataProgressEventInterval': 0 }, async (session) => {
      const seen = { started: new Set<string>(), progress: new Set<string>(), terminated: new Set<string>() };
      session.streams.addListener({
        onQueryStarted: async (e) => {
          seen.started.add(e.id);
          await sleep(20); // a slow listener
        },
        onQueryProgress: async (e) => {
          seen.progress.add(e.progress.id);
          await sleep(20);
        },
        onQueryIdle: () => sleep(20),
        onQueryTerminated: async (e) => {
          seen.terminated.add(e.id);
          await sleep(20);
        },
      });
      const queries: StreamingQuery[] = [];
      for (let i = 0; i < 10; i++) {
        session.memoryStream(`flood${i}`, 'v LONG').addData([{ v: i }]);
        queries.push(await session.readStream.format('memory').load(`flood${i}`).writeStream.format('memory').queryName(`flood${i}`).start());
      }
      for (const q of queries) await q.processAllAvailable();
      await sleep(300); // ten idle queries, an idle event every trigger
      for (const q of queries) await q.stop();
      await session.close();
      const ids = queries.map((q) => q.id).sort();
      expect([...seen.started].sort()).toEqual(ids);
      expect([...seen.progress].sort()).toEqual(ids);
      expect([...seen.terminated].sort()).toEqual(ids);
      const m = session.metrics().listenerBus;
      expect(m.numDroppedEventsByKind.onQueryIdle).toBeGreaterThan(0);
      expect(m.numDroppedEventsByKind.onQueryStarted).toBe(0);
      expect(m.numDroppedEventsByKind.onQueryTerminated).toBe(0);
      expect(m.numDroppedEventsByKind.onQueryProgress).toBe(0);
    });
  });

  it('session.close() returns after the documented wait when a listener never settles, and counts what was left', async () => {
    const session = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.scheduler.listenerbus.closeTimeout': '300ms' } });
    session.streams.addListener({ onQueryStarted: () => new Promise(() => {}) });
    session.memoryStream('stuck', 'v LONG').addData([{ v: 1 }]);
    const q = await session.readStream.format('memory').load('stuck').writeStream.format('memory').queryName('stuck').start();
    await q.processAllAvailable();
    // It returns (a close that waited for the listener would hang the test), leaving the events undelivered.
    await session.close();
    // The started event is stuck in the listener; progress, idle and terminated wait behind it.
    expect(session.metrics().listenerBus.numUndeliveredEvents).toBe(4);
  });
});

describe('a udf that never returns', () => {
  it('stop() returns after stopTimeout, the batch stays uncommitted and replays, other queries keep running', async () => {
    await withSession({ 'sluice.sql.streaming.stopTimeout': '500ms' }, async (session) => {
      const marker = join(tempDir(), 'spun');
      const ckpt = tempDir();
      const spinOnce = udf(UDFS, 'spinOnce', 'string');
      const stuckQuery = () =>
        session.readStream
          .format('memory')
          .load('spin')
          .select(spinOnce(col('id'), lit(marker)).alias('id'))
          .writeStream.format('memory')
          .queryName('spin_out')
          .option('checkpointLocation', ckpt)
          .start();
      session.memoryStream('spin', 'id STRING').addData([{ id: 'hang' }]);
      const stuck = await stuckQuery();
      await waitUntil(() => existsSync(marker), 'the udf to start its endless loop'); // its task is in the endless loop now

      // Another query runs beside it, on the other slot.
      const steady = session.memoryStream('steady', 'v LONG');
      steady.addData([{ v: 1 }]);
      const other = await session.readStream.format('memory').load('steady').writeStream.format('memory').queryName('steady_out').start();
      await other.processAllAvailable();

      // It returns although the udf never does (a stop that waited for the batch would hang the test).
      await stuck.stop();
      expect(stuck.isActive).toBe(false);
      expect(stuck.exception).toBeNull();
      expect(existsSync(join(ckpt, 'offsets', '0'))).toBe(true);
      expect(existsSync(join(ckpt, 'commits', '0'))).toBe(false);

      steady.addData([{ v: 2 }]);
      await other.processAllAvailable();
      expect((await session.memoryTable('steady_out')).map((r) => r.v)).toEqual([1, 2]);

      // A restart replays the uncommitted batch; the udf now returns.
      const again = await stuckQuery();
      await again.processAllAvailable();
      expect(again.recentProgress[0]?.batchId).toBe(0);
      expect(await session.memoryTable('spin_out')).toEqual([{ id: 'hang' }]);
      await again.stop();
      await other.stop();
    });
  });

  it('session.close() without a stop ends it, and the process exits by itself', () => {
    const r = spawnSync(process.execPath, [fileURLToPath(new URL('./fixtures/hang-child.mjs', import.meta.url)), tempDir()], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toBe('CLOSED stopped');
    expect(r.status).toBe(0);
  });
});

describe('a stop that times out', () => {
  it('ends a stateful batch whose worker holds state shards; a restart reopens them and counts exactly', async () => {
    await withSession({ 'sluice.executor.cores': 1, 'sluice.sql.shuffle.partitions': 2, 'sluice.sql.streaming.stopTimeout': '500ms' }, async (session) => {
      const marker = join(tempDir(), 'spun');
      const ckpt = tempDir();
      const spinOnce = udf(UDFS, 'spinOnce', 'string');
      const stream = session.memoryStream('stateful_spin', 'id STRING');
      const start = () =>
        session.readStream
          .format('memory')
          .load('stateful_spin')
          .select(spinOnce(col('id'), lit(marker)).alias('id'))
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName('stateful_spin_out')
          .outputMode('complete')
          .option('checkpointLocation', ckpt)
          .start();
      stream.addData([{ id: 'a' }, { id: 'a' }]);
      const first = await start();
      await first.processAllAvailable(); // batch 0 opened the shards in the only worker
      stream.addData([{ id: 'hang' }, { id: 'a' }]);
      await waitUntil(() => existsSync(marker), 'the udf to start its endless loop');
      await first.stop();
      expect(existsSync(join(ckpt, 'commits', '1'))).toBe(false);

      const again = await start();
      await again.processAllAvailable();
      await again.stop();
      expect(again.exception).toBeNull();
      const counts = Object.fromEntries((await session.memoryTable('stateful_spin_out')).map((r) => [r.id, r.count]));
      expect(counts).toEqual({ a: 3, hang: 1 });
    });
  });

  it('ends a foreachBatch that never settles, leaving the batch uncommitted', async () => {
    await withSession({ 'sluice.sql.streaming.stopTimeout': '300ms' }, async (session) => {
      const ckpt = tempDir();
      session.memoryStream('stuck_sink', 'v LONG').addData([{ v: 1 }]);
      let called = false;
      const q = await session.readStream
        .format('memory')
        .load('stuck_sink')
        .writeStream.foreachBatch(() => {
          called = true;
          return new Promise(() => {});
        })
        .option('checkpointLocation', ckpt)
        .start();
      await waitUntil(() => called, 'foreachBatch to be called');
      // It returns although foreachBatch never settles (else the test would hang).
      await q.stop();
      expect(existsSync(join(ckpt, 'offsets', '0'))).toBe(true);
      expect(existsSync(join(ckpt, 'commits', '0'))).toBe(false);
    });
  });
});

describe('user code that fails', () => {
  it('a udf that throws fails the query at once with UDF_FAILED naming it, the error as cause, no retry', async () => {
    await withSession({ 'sluice.executor.cores': 1 }, async (session) => {
      const calls = join(tempDir(), 'calls');
      const failCounting = udf(UDFS, 'failCounting', 'string');
      session.memoryStream('udf_throws', 'id STRING').addData([{ id: 'x' }]);
      const q = await session.readStream
        .format('memory')
        .load('udf_throws')
        .select(failCounting(col('id'), lit(calls)).alias('id'))
        .writeStream.format('memory')
        .queryName('udf_throws_out')
        .start();
      const err = (await q.awaitTermination().catch((e: unknown) => e)) as Error & { code: string; file: string };
      expect(err).toMatchObject({ code: 'UDF_FAILED', file: UDFS.href, message: `udf 'failCounting' of ${UDFS.href} threw: no good: x` });
      expect(err.cause).toMatchObject({ name: 'RangeError', message: 'no good: x' });
      expect(readFileSync(calls, 'utf8')).toBe('call\n'); // one attempt
    });
  });

  it('a udf whose result is not of its declared type is UDF_RESULT_TYPE_MISMATCH, naming both types', async () => {
    await withSession({}, async (session) => {
      const isoDay = udf(UDFS, 'isoDay', 'double');
      session.memoryStream('udf_type', 'ts TIMESTAMP').addData([{ ts: new Date(0) }]);
      const q = await session.readStream
        .format('memory')
        .load('udf_type')
        .select(isoDay(col('ts')).alias('d'))
        .writeStream.format('memory')
        .queryName('udf_type_out')
        .start();
      await expect(q.awaitTermination()).rejects.toMatchObject({
        code: 'UDF_RESULT_TYPE_MISMATCH',
        message: `udf 'isoDay' of ${UDFS.href} returned a string ('1970-01-01'), not DOUBLE (its declared type)`,
      });
    });
  });
});

describe('LONG precision', () => {
  it('a LONG beyond 2^53 is malformed, never rounded: null and _corrupt_record in PERMISSIVE, an error in FAILFAST', async () => {
    await withSession({}, async (session) => {
      const dir = tempDir();
      writeInput(dir, 'big.json', ['{"n":9007199254740993}', '{"n":9007199254740991}']);
      const csv = tempDir();
      writeInput(csv, 'big.csv', ['9007199254740993', '-9007199254740991']);
      const permissive = await session.read.format('json').schema('n LONG, _corrupt_record STRING').load(dir).collect();
      expect(permissive).toEqual([
        { n: null, _corrupt_record: '{"n":9007199254740993}' },
        { n: 9007199254740991, _corrupt_record: null },
      ]);
      expect(await session.read.format('csv').schema('n LONG').load(csv).collect()).toEqual([{ n: null }, { n: -9007199254740991 }]);
      await expect(session.read.format('json').schema('n LONG').option('mode', 'FAILFAST').load(dir).collect()).rejects.toMatchObject({
        code: 'MALFORMED_RECORD',
        column: 'n',
      });
    });
  });
});

describe('the environment, named truthfully at start()', () => {
  const jsonStream = (session: Session, dir: string, maxFiles = 1000) =>
    session.readStream.format('json').schema('id STRING, v LONG').option('maxFilesPerTrigger', maxFiles).load(dir);

  it('a missing input directory is PATH_NOT_FOUND, as Spark says "Path does not exist"', async () => {
    await withSession({}, async (session) => {
      const missing = join(tempDir(), 'nowhere');
      await expect(jsonStream(session, missing).writeStream.format('memory').queryName('missing_in').start()).rejects.toMatchObject({
        code: 'PATH_NOT_FOUND',
        file: missing,
      });
      expect(() => session.read.format('json').schema('id STRING').load(missing)).toThrow(expect.objectContaining({ code: 'PATH_NOT_FOUND', file: missing }));
    });
  });

  it('a checkpoint or sink path that is a regular file is PATH_NOT_DIRECTORY, before any batch', async () => {
    await withSession({}, async (session) => {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines([{ id: 'a', v: 1 }]));
      const file = join(tempDir(), 'a-file');
      writeFileSync(file, 'not a directory');
      await expect(jsonStream(session, input).writeStream.format('json').option('checkpointLocation', file).start(tempDir())).rejects.toMatchObject({
        code: 'PATH_NOT_DIRECTORY',
        file,
      });
      await expect(jsonStream(session, input).writeStream.format('json').option('checkpointLocation', tempDir()).start(file)).rejects.toMatchObject({
        code: 'PATH_NOT_DIRECTORY',
        file,
      });
    });
  });

  it.skipIf(!hasRoot())('a read-only checkpoint is PATH_NOT_WRITABLE naming it', async () => {
    const ro = mountTmpfs(64, true);
    try {
      await withSession({}, async (session) => {
        session.memoryStream('ro_in', 'v LONG');
        await expect(
          session.readStream.format('memory').load('ro_in').writeStream.format('memory').queryName('ro_out').option('checkpointLocation', ro).start(),
        ).rejects.toMatchObject({ code: 'PATH_NOT_WRITABLE', file: ro, message: expect.stringContaining('read-only') });
      });
    } finally {
      unmount(ro);
    }
  });

  /**
   * Starts a memory query on `ckpt` in a child that is root but without CAP_DAC_OVERRIDE, so that
   * permission bits apply to it as to anyone; returns what it printed: `STARTED` or `<code> <file>`.
   */
  function startWithoutOverride(ckpt: string): string {
    const script = [
      "import { Session } from '@sluice/driver';",
      "const s = await Session.create({ conf: { 'sluice.executor.cores': 1 } });",
      "s.memoryStream('m', 'v LONG');",
      'try {',
      `  await s.readStream.format('memory').load('m').writeStream.format('memory').queryName('o').option('checkpointLocation', ${JSON.stringify(ckpt)}).start();`,
      "  console.log('STARTED');",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of the child's program, whose template literal this is
      '} catch (e) { console.log(`${e.code} ${e.file}`); }',
      'await s.close();',
    ].join('\n');
    const r = spawnSync('setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, '--input-type=module', '-e', script], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe('');
    return r.stdout.trim();
  }

  it('a checkpoint the process may not write is PATH_NOT_WRITABLE (a child without the power to override permissions)', () => {
    const parent = tempDir();
    chmodSync(parent, 0o555);
    const ckpt = join(parent, 'ckpt');
    expect(startWithoutOverride(ckpt)).toBe(`PATH_NOT_WRITABLE ${ckpt}`);
  });

  it('a checkpoint file the process may not read is PATH_NOT_READABLE naming it (a child without the power to override permissions)', async () => {
    const ckpt = tempDir();
    await withSession({ 'sluice.executor.cores': 1 }, async (session) => {
      session.memoryStream('m', 'v LONG');
      const q = await session.readStream.format('memory').load('m').writeStream.format('memory').queryName('o').option('checkpointLocation', ckpt).start();
      await q.stop();
    });
    const metadata = join(ckpt, 'metadata');
    chmodSync(metadata, 0o000);
    expect(startWithoutOverride(ckpt)).toBe(`PATH_NOT_READABLE ${metadata}`);
  });

  it.skipIf(!hasRoot())('a full disk stops the query with DISK_FULL naming the path; once space is freed a restart continues exactly once', async () => {
    const disk = mountTmpfs(200);
    try {
      await withSession({ 'sluice.executor.cores': 1 }, async (session) => {
        const input = tempDir();
        const pad = 'x'.repeat(1000);
        for (let f = 0; f < 40; f++)
          writeInput(input, `f${String(f).padStart(2, '0')}.json`, jsonLines(Array.from({ length: 10 }, (_, i) => ({ id: pad, v: f * 10 + i }))), 1000 + f);
        const out = join(disk, 'out');
        const start = () =>
          jsonStream(session, input, 2).writeStream.format('json').option('checkpointLocation', join(disk, 'ckpt')).trigger(Trigger.AvailableNow()).start(out);
        const first = await start();
        const err = (await first.awaitTermination().catch((e: unknown) => e)) as { code?: string; file?: string };
        expect(err?.code).toBe('DISK_FULL');
        expect(err?.file?.startsWith(disk)).toBe(true);
        remountTmpfs(disk, 16 * 1024);
        const again = await start();
        await again.awaitTermination();
        expect(again.exception).toBeNull();
        const values = readSinkJson(out)
          .map((r) => r.v as number)
          .sort((a, b) => a - b);
        expect(values).toEqual(Array.from({ length: 400 }, (_, v) => v));
      });
    } finally {
      unmount(disk);
    }
  });

  it.skipIf(!hasRoot())('a full disk under LevelDB state is DISK_FULL too, never TASK_FAILED after retries; the restart counts exactly', async () => {
    const disk = mountTmpfs(400);
    try {
      await withSession({ 'sluice.executor.cores': 1, 'sluice.sql.shuffle.partitions': 2 }, async (session) => {
        const input = tempDir();
        const pad = 'k'.repeat(500);
        for (let f = 0; f < 20; f++) {
          writeInput(
            input,
            `f${String(f).padStart(2, '0')}.json`,
            jsonLines(Array.from({ length: 50 }, (_, i) => ({ id: `${pad}${f * 50 + i}`, v: 1 }))),
            1000 + f,
          );
        }
        const start = () =>
          jsonStream(session, input, 2)
            .groupBy('id')
            .count()
            .writeStream.format('memory')
            .queryName('full_state')
            .outputMode('update')
            .option('checkpointLocation', join(disk, 'ckpt'))
            .trigger(Trigger.AvailableNow())
            .start();
        const first = await start();
        const err = (await first.awaitTermination().catch((e: unknown) => e)) as { code?: string; file?: string };
        expect(err?.code).toBe('DISK_FULL');
        expect(err?.file?.startsWith(disk)).toBe(true);
        remountTmpfs(disk, 64 * 1024);
        const again = await start();
        await again.awaitTermination();
        expect(again.exception).toBeNull();
        const ids = (await session.memoryTable('full_state')).map((r) => [r.id, r.count]);
        expect(new Set(ids.map(([id]) => id)).size).toBe(1000);
        expect(ids.every(([, n]) => n === 1)).toBe(true);
      });
    } finally {
      unmount(disk);
    }
  });

  const fdLimitChild = (limit: number, queries: number, mode = '') => {
    const child = fileURLToPath(new URL('./fixtures/fd-limit-child.mjs', import.meta.url));
    const root = tempDir();
    const r = spawnSync('bash', ['-c', `ulimit -n ${limit} && exec "${process.execPath}" "${child}" "${root}" ${queries} ${mode}`], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.signal).toBeNull();
    expect(r.stdout + r.stderr).not.toContain('STATE_STORE_CORRUPT');
    return { line: r.stdout.trim().split('\n').at(-1) as string, root };
  };

  it('a ulimit -n too low to give each slot a state shard is STATE_FILE_BUDGET_TOO_SMALL at start, with the numbers', () => {
    // At 100 the module loader still has the handles it needs: each package is a few bundled files
    // (scripts/build.mjs); unbundled, Node's loader opened ~200 modules concurrently and failed
    // with EMFILE under about 105, before any Sluice code ran.
    const { line, root } = fdLimitChild(100, 20);
    expect(line).toMatch(/^FAILED STATE_FILE_BUDGET_TOO_SMALL /);
    expect(line).toContain('100 files (ulimit -n)');
    expect(line).toContain('each of the 2 executor slots 14 file handles');
    // Refused before anything was written.
    expect(existsSync(join(root, 'ckpt0', 'metadata'))).toBe(false);
  });

  it('a file source holds no descriptor per file: 1,000 files in one batch under ulimit -n 160', () => {
    const { line } = fdLimitChild(160, 100, 'files');
    expect(line).toBe('FILES 2000');
  });

  it('when the rest of the process takes the file handles, running out is TOO_MANY_OPEN_FILES naming the limit, never STATE_STORE_CORRUPT', () => {
    const { line } = fdLimitChild(256, 20, 'hog');
    expect(line).toMatch(/^FAILED TOO_MANY_OPEN_FILES /);
    expect(line).toContain('256 files (ulimit -n)');
    expect(line).toContain('sluice.sql.streaming.stateStore.maxOpenFiles');
  });

  it('a text source given a schema other than one STRING column is INVALID_SCHEMA at load()', async () => {
    await withSession({}, async (session) => {
      const dir = tempDir();
      expect(() => session.readStream.format('text').schema('value STRING, n LONG').load(dir)).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA' }));
      expect(() => session.readStream.format('text').schema('n LONG').load(dir)).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA' }));
      expect(session.readStream.format('text').schema('line STRING').load(dir).columns).toEqual(['line']);
    });
  });

  it('shuffle.partitions above the key groups of a stateful query names shuffle.partitions, the key the user set', async () => {
    await withSession({ 'spark.sql.shuffle.partitions': 100000 }, async (session) => {
      session.memoryStream('many_parts', 'id STRING');
      await expect(
        session.readStream
          .format('memory')
          .load('many_parts')
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName('many_parts')
          .outputMode('update')
          .start(),
      ).rejects.toMatchObject({
        code: 'INVALID_CONF',
        option: 'sluice.sql.shuffle.partitions',
        message: expect.stringContaining('sluice.sql.shuffle.partitions=100000'),
      });
    });
  });
});
