/**
 * The Redis Streams source against a real redis-server (Debian's, started by the test on a free
 * loopback port with a temp dir): maxOffsetsPerTrigger's exact entry sets over one stream and
 * two, earliest and latest, failOnDataLoss both ways after an XTRIM, and the coded errors at
 * start(). `.ci/run` installs redis-server when it is missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Session, Trigger, type StreamingQuery } from '@sluice/driver';
import { machineHas, removeTempDirs, tempDir, waitUntil, withSession } from './helpers.js';
import { calibrate, committedRows, expectCompleted, killAndRestart, planKills, runChild } from './killHarness.js';

const REDIS_SERVER = '/usr/bin/redis-server';
const hasRedis = machineHas('redis-server', existsSync(REDIS_SERVER), 'install it with apt-get install -y redis-server, as .ci/run does');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

let url = '';
let redis: Redis;
const servers: ChildProcess[] = [];

/** A redis-server on `port` with its data in `dir` (appendonly: it survives a restart), killed after the tests. */
async function startServer(port: number, dir: string, appendonly = false): Promise<ChildProcess> {
  const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', appendonly ? 'yes' : 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  servers.push(proc);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    proc.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  return proc;
}

beforeAll(async () => {
  if (!hasRedis) return;
  expect(existsSync(REDIS_SERVER), `${REDIS_SERVER} is missing: .ci/run installs it (apt-get install -y redis-server)`).toBe(true);
  const port = await freePort();
  await startServer(port, tempDir('sluice-redis-'));
  url = `redis://127.0.0.1:${port}`;
  redis = new Redis(url);
});

afterAll(async () => {
  redis?.disconnect();
  for (const s of servers) s.kill('SIGKILL');
  removeTempDirs();
});

/** Adds `n` entries {n: i} to `stream`, and returns their ids. */
async function add(stream: string, n: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await redis.xadd(stream, '*', 'n', String(from + i))) as string);
  return ids;
}

async function query(s: Session, name: string, options: Record<string, string | number | boolean>, ckpt = tempDir()): Promise<StreamingQuery> {
  return s.readStream
    .format('redis')
    .options({ url, ...options })
    .load()
    .writeStream.format('memory')
    .queryName(name)
    .option('checkpointLocation', ckpt)
    .start();
}

describe.skipIf(!hasRedis)('redis source', () => {
  it('caps each batch at maxOffsetsPerTrigger, over one stream and split by backlog over two', async () => {
    const one = await add('one', 25);
    const a = await add('two_a', 6);
    const b = await add('two_b', 2);
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const q = await query(s, 'capped', { stream: 'one', startingOffsets: 'earliest', maxOffsetsPerTrigger: 10 });
      await q.processAllAvailable();
      expect(q.recentProgress.filter((p) => p.numInputRows > 0).map((p) => p.numInputRows)).toEqual([10, 10, 5]);
      const rows = await s.memoryTable('capped');
      expect(rows.map((r) => r.id)).toEqual(one);
      expect(rows.map((r) => JSON.parse(r.fields as string).n)).toEqual(one.map((_, i) => String(i)));
      expect((rows[0]!.timestamp as Date).getTime()).toBe(Number(one[0]?.split('-')[0]));
      await q.stop();

      const q2 = await query(s, 'split', { stream: 'two_a,two_b', startingOffsets: 'earliest', maxOffsetsPerTrigger: 4 });
      await q2.processAllAvailable();
      // 4 of a backlog of 6 and 2: 3 and 1.
      expect(q2.recentProgress[0]?.sources[0]?.endOffset).toMatchObject({ two_a: a[2], two_b: b[0] });
      const got = await s.memoryTable('split');
      expect(got.length).toBe(8);
      expect(new Set(got.map((r) => `${r.stream} ${r.id}`)).size).toBe(8);
      await q2.stop();
    });
  });

  it("prorates the cap by each stream's whole backlog, as Spark's Kafka source does: 75 + 25 in every batch of 300 and 100 under 100", async () => {
    await add('pro_a', 300);
    await add('pro_b', 100);
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const q = await query(s, 'prorated', { stream: 'pro_a,pro_b', startingOffsets: 'earliest', maxOffsetsPerTrigger: 100 });
      await q.processAllAvailable();
      await q.stop();
      const perStream: Record<string, number> = {};
      for (const r of await s.memoryTable('prorated')) perStream[r.stream as string] = (perStream[r.stream as string] ?? 0) + 1;
      expect(perStream).toEqual({ pro_a: 300, pro_b: 100 });
      expect(q.recentProgress.filter((p) => p.numInputRows > 0).map((p) => p.numInputRows)).toEqual([100, 100, 100, 100]);
      // Each batch's end moves stream a 75 entries and stream b 25 (the ordinals under '#').
      const ordinals = q.recentProgress.filter((p) => p.numInputRows > 0).map((p) => (p.sources[0]!.endOffset as { '#': Record<string, number> })['#']);
      expect(ordinals).toEqual([1, 2, 3, 4].map((k) => ({ pro_a: 75 * k, pro_b: 25 * k })));
    });
  });

  it("reports the backlog as Spark's Kafka source does, and AvailableNow reads what was there at the start, capped, then stops", async () => {
    const ids = await add('backlog', 25);
    await withSession({}, async (s) => {
      const q = await s.readStream
        .format('redis')
        .options({ url, stream: 'backlog', startingOffsets: 'earliest', maxOffsetsPerTrigger: 10 })
        .load()
        .writeStream.format('memory')
        .queryName('backlog_out')
        .trigger(Trigger.AvailableNow())
        .start();
      // Added once the first batch ran (the ends were pinned at its trigger): left for the next run.
      await waitUntil(() => (q.lastProgress?.batchId ?? -1) >= 0 || !q.isActive, 'the first batch of backlog_out', 30_000, 2);
      await add('backlog', 5, 25);
      await q.awaitTermination();
      const batches = q.recentProgress.filter((p) => p.numInputRows > 0);
      expect(batches.map((p) => p.numInputRows)).toEqual([10, 10, 5]);
      expect((await s.memoryTable('backlog_out')).map((r) => r.id)).toEqual(ids);
      const last = batches.at(-1)?.sources[0]?.metrics;
      // The 5 added after the start are the backlog left.
      expect(last).toMatchObject({ minOffsetsBehindLatest: '5', maxOffsetsBehindLatest: '5', avgOffsetsBehindLatest: '5', offsetsBehindLatest: '5' });
      const scrape = await s.prometheusMetrics();
      expect(scrape).toContain(`sluice_query_source_backlog{query_name="backlog_out",query_id="${q.id}"} 5\n`);
    });
  });

  it('with a declared schema, the fields become typed columns beside the standard ones', async () => {
    const a = (await redis.xadd('typed', '*', 'user', 'ann', 'amount', '12.5', 'count', '3', 'flag', 'true')) as string;
    const b = (await redis.xadd('typed', '*', 'user', 'bob', 'amount', 'lots', 'flag', 'no')) as string;
    await withSession({}, async (s) => {
      const q = await s.readStream
        .format('redis')
        .schema('id STRING, timestamp TIMESTAMP, user STRING, amount DOUBLE, count LONG, flag BOOLEAN')
        .options({ url, stream: 'typed', startingOffsets: 'earliest' })
        .load()
        .writeStream.format('memory')
        .queryName('typed_out')
        .start();
      await q.processAllAvailable();
      const rows = await s.memoryTable('typed_out');
      expect(rows.map((r) => ({ ...r, timestamp: (r.timestamp as Date).getTime() }))).toEqual([
        { id: a, timestamp: Number(a.split('-')[0]), user: 'ann', amount: 12.5, count: 3, flag: true },
        // What does not parse, or is missing, is null.
        { id: b, timestamp: Number(b.split('-')[0]), user: 'bob', amount: null, count: null, flag: null },
      ]);
      await q.stop();
      for (const schema of ['stream LONG', 'id STRING, nested STRUCT<a: STRING>']) {
        expect(() => s.readStream.format('redis').schema(schema).options({ url, stream: 'typed' }).load()).toThrow(
          expect.objectContaining({ code: 'INVALID_SCHEMA' }),
        );
      }
    });
  });

  it("from_json over an entry's fields: typed columns, a nested JSON field parsed again, and json_tuple", async () => {
    const payload = (item: string, qty: number | string) => JSON.stringify({ item, qty, tags: [item[0], 'x'] });
    await redis.xadd('orders', '*', 'user', 'ann', 'amount', '12.5', 'payload', payload('apple', 3));
    await redis.xadd('orders', '*', 'user', 'bob', 'payload', '{not json');
    await redis.xadd('orders', '*', 'user', 'cy', 'amount', 'lots', 'payload', payload('fig', 'two'));
    await withSession({}, async (s) => {
      s.readStream.format('redis').options({ url, stream: 'orders', startingOffsets: 'earliest' }).load().createOrReplaceTempView('orders');
      const q = await s
        .sql(
          `SELECT o.user, CAST(o.amount AS DOUBLE) AS amount, p.item, p.qty, p.tags FROM (
             SELECT from_json(fields, 'user STRING, amount STRING, payload STRING') AS o,
                    from_json(get_json_object(fields, '$.payload'), 'item STRING, qty INT, tags ARRAY<STRING>') AS p
             FROM orders)`,
        )
        .writeStream.format('memory')
        .queryName('orders_out')
        .start();
      const t = await s.readStream
        .format('redis')
        .options({ url, stream: 'orders', startingOffsets: 'earliest' })
        .load()
        .selectExpr("json_tuple(fields, 'user', 'amount') AS (user, amount)")
        .writeStream.format('memory')
        .queryName('orders_tuple')
        .start();
      await q.processAllAvailable();
      await t.processAllAvailable();
      expect(await s.memoryTable('orders_out')).toEqual([
        { user: 'ann', amount: 12.5, item: 'apple', qty: 3, tags: ['a', 'x'] },
        // A payload that is not JSON gives nulls (PERMISSIVE), and so does a field of the wrong type.
        { user: 'bob', amount: null, item: null, qty: null, tags: null },
        { user: 'cy', amount: null, item: 'fig', qty: null, tags: ['f', 'x'] },
      ]);
      expect(await s.memoryTable('orders_tuple')).toEqual([
        { user: 'ann', amount: '12.5' },
        { user: 'bob', amount: null },
        { user: 'cy', amount: 'lots' },
      ]);
      await q.stop();
      await t.stop();
    });
  });

  it('latest starts after what the stream holds at the start; earliest from its first entry', async () => {
    await add('late', 5);
    await withSession({}, async (s) => {
      const latest = await query(s, 'from_latest', { stream: 'late', startingOffsets: 'latest' });
      const earliest = await query(s, 'from_earliest', { stream: 'late', startingOffsets: 'earliest' });
      await latest.processAllAvailable();
      const added = await add('late', 3, 5);
      await latest.processAllAvailable();
      await earliest.processAllAvailable();
      expect((await s.memoryTable('from_latest')).map((r) => r.id)).toEqual(added);
      expect((await s.memoryTable('from_earliest')).length).toBe(8);
      await latest.stop();
      await earliest.stop();
    });
  });

  it('failOnDataLoss: entries trimmed before they were read fail the query with the range, or are skipped with a warning', async () => {
    for (const failOnDataLoss of [true, false]) {
      const stream = `trimmed_${failOnDataLoss}`;
      const ids = await add(stream, 10);
      const ckpt = tempDir();
      await withSession({}, async (s) => {
        // One batch of 4 (the next would come in an hour): entries 5 to 10 are still to read.
        const q = await s.readStream
          .format('redis')
          .options({ url, stream, startingOffsets: 'earliest', maxOffsetsPerTrigger: 4 })
          .load()
          .writeStream.format('memory')
          .queryName(`first_${failOnDataLoss}`)
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.ProcessingTime('1 hour'))
          .start();
        await waitUntil(() => (q.lastProgress?.batchId ?? -1) >= 0, `the first batch of first_${failOnDataLoss}`, 30_000, 5);
        await q.stop();
      });
      await redis.xtrim(stream, 'MAXLEN', 2);
      await withSession({}, async (s) => {
        const q = await query(s, `again_${failOnDataLoss}`, { stream, startingOffsets: 'earliest', failOnDataLoss }, ckpt);
        if (failOnDataLoss) {
          const e = (await q.awaitTermination().catch((err: unknown) => err)) as { code?: string; message?: string };
          expect(e?.code).toBe('REDIS_DATA_LOSS');
          expect(e?.message).toContain(stream);
        } else {
          await q.processAllAvailable();
          // The two entries the trim left, after the range it took.
          expect((await s.memoryTable(`again_${failOnDataLoss}`)).map((r) => r.id).slice(-2)).toEqual(ids.slice(-2));
          await q.stop();
        }
      });
    }
  });

  it('exactly once through 10 SIGKILLs of the query process while a producer keeps adding', async () => {
    const child = fileURLToPath(new URL('./fixtures/redis-kill-child.mjs', import.meta.url));
    const produced: string[] = [];
    const produce = async (n: number) => {
      for (let i = 0; i < n; i++) produced.push((await redis.xadd('events', '*', 'n', String(produced.length))) as string);
    };
    await produce(300);
    const dirs = { input: url, out: tempDir('sluice-redis-out-'), ckpt: tempDir('sluice-redis-ckpt-') };
    // Calibration: a clean run over the same stream, into a sink and checkpoint of its own.
    const calDirs = { input: url, out: tempDir('sluice-redis-out-'), ckpt: tempDir('sluice-redis-ckpt-') };
    const cal = await runChild(child, calDirs);
    expectCompleted(cal);
    let producing = true;
    const producer = (async () => {
      while (producing) {
        await produce(5);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const kills = await killAndRestart(child, dirs, planKills(0x7ed15, 10, calibrate(cal), { startupShare: 0.3, batchPhases: 4 }), () => ({}));
      // Worth something only if kills landed while batches were being committed.
      expect(kills.filter((k) => k.ended === 'SIGKILL' && k.commits > k.commitsBefore).length, 'kills that landed mid-stream').toBeGreaterThanOrEqual(3);
    } finally {
      producing = false;
      await producer;
    }
    expectCompleted(await runChild(child, dirs));
    const ids = committedRows(dirs.out).map((r) => r.id as string);
    const seen = new Map<string, number>();
    for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
    expect(
      [...seen].filter(([, n]) => n > 1),
      'entries written twice',
    ).toEqual([]);
    expect(
      produced.filter((id) => !seen.has(id)),
      'entries never written',
    ).toEqual([]);
    expect(ids.length).toBe(produced.length);
  }, 180_000);

  it('rides out a server restart mid-query, then fails with REDIS_CONNECTION_LOST when the server stays away', async () => {
    const port = await freePort();
    const dir = tempDir('sluice-redis-aof-');
    let proc = await startServer(port, dir, true);
    const own = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 50 });
    own.on('error', () => {});
    await own.connect();
    const ids: string[] = [];
    const addOwn = async (n: number) => {
      for (let i = 0; i < n; i++) ids.push((await own.xadd('restarted', '*', 'n', String(ids.length))) as string);
    };
    await addOwn(5);
    await withSession({}, async (s) => {
      const q = await s.readStream
        .format('redis')
        .options({ url: `redis://127.0.0.1:${port}`, stream: 'restarted', startingOffsets: 'earliest' })
        .load()
        .writeStream.format('memory')
        .queryName('restarted_out')
        .start();
      await q.processAllAvailable();
      proc.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      proc = await startServer(port, dir, true);
      await addOwn(5);
      await q.processAllAvailable();
      expect((await s.memoryTable('restarted_out')).map((r) => r.id)).toEqual(ids);
      expect(q.exception).toBeNull();
      // Gone for good: retried with backoff, then the query fails with a code.
      proc.kill('SIGKILL');
      const e = (await q.awaitTermination().catch((err: unknown) => err)) as { code?: string };
      expect(e?.code).toBe('REDIS_CONNECTION_LOST');
    });
    own.disconnect();
  }, 90_000);

  it('refuses at start(): no server, no such stream, a key that is not a stream, bad options', async () => {
    await redis.set('plain_key', 'x');
    await add('exists', 1);
    await withSession({}, async (s) => {
      const start = (options: Record<string, string | number>) =>
        query(s, `bad_${Object.values(options).join('_').replace(/\W/g, '')}`, options).then(
          () => 'started',
          (e: { code: string }) => e.code,
        );
      const closed = `redis://127.0.0.1:${await freePort()}`;
      expect(
        await s.readStream
          .format('redis')
          .options({ url: closed, stream: 'exists' })
          .load()
          .writeStream.format('memory')
          .queryName('closed')
          .start()
          .then(
            () => 'started',
            (e: { code: string }) => e.code,
          ),
      ).toBe('REDIS_CONNECTION_FAILED');
      expect(await start({ stream: 'nope' })).toBe('REDIS_STREAM_NOT_FOUND');
      expect(await start({ stream: 'plain_key' })).toBe('REDIS_WRONG_TYPE');
      expect(() => s.readStream.format('redis').options({ url }).load()).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', option: 'stream' }));
      expect(() => s.readStream.format('redis').options({ url, stream: 'exists', startingOffsets: '{"exists": 5}' }).load()).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', option: 'startingOffsets' }),
      );
    });
  });
});
