/**
 * Many queries in one session sharing 2 slots: 40 stateful queries stay exact; a query in each
 * scheduler pool (weighted, with a minShare, plain; FAIR and FIFO) runs exactly beside 30 busy
 * queries and reports its pool; a query with no new input makes no batch and runs no task beside
 * busy ones; a listener stuck on an event holds back no batch; and a low `ulimit -n` child runs 20
 * stateful queries of 200 partitions each exactly.
 *
 * How long batches take under such load is measured by benchmarks, not asserted here:
 * bench/scheduler-pools.bench.mjs (each pool's batch time among the busy queries over alone) and
 * bench/slow-listener.bench.mjs (rows/s with a slow listener over without). The busy queries'
 * tasks hold their slot in a udf that sleeps (Atomics.wait) rather than spins, so they contend for
 * slots, which the pools arbitrate, and not for the 2 CPU cores. Checkpoints live on tmpfs where
 * there is one, so that 30 queries' syncs do not queue in front of the others'.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { col, lit, Session, udf, type StreamingQuery } from '@sluice/driver';
import { waitUntil } from './helpers.js';

const UDFS = new URL('./fixtures/udfs.mjs', import.meta.url);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'sluice-many-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const ckpt = () => join(root, `ckpt-${dirs++}`);

async function stopAll(queries: StreamingQuery[]): Promise<void> {
  await Promise.allSettled(queries.map((q) => q.stop()));
}

describe('many queries on one session', () => {
  it('40 stateful queries on 2 slots all make progress, and every count is exact', async () => {
    const n = 40;
    const s = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 8 } });
    const queries: StreamingQuery[] = [];
    try {
      for (let i = 0; i < n; i++) {
        s.memoryStream(`in${i}`, 'id STRING').addData(Array.from({ length: 20 + i }, (_, k) => ({ id: `k${k % 5}` })));
        queries.push(
          await s.readStream
            .format('memory')
            .load(`in${i}`)
            .groupBy('id')
            .count()
            .writeStream.format('memory')
            .queryName(`counts${i}`)
            .outputMode('complete')
            .option('checkpointLocation', ckpt())
            .start(),
        );
      }
      await Promise.all(queries.map((q) => q.processAllAvailable()));
      for (let i = 0; i < n; i++) s.memoryStream(`in${i}`).addData(Array.from({ length: i + 1 }, () => ({ id: 'k0' })));
      await Promise.all(queries.map((q) => q.processAllAvailable()));
      for (let i = 0; i < n; i++) {
        const rows = await s.memoryTable(`counts${i}`);
        const got = Object.fromEntries(rows.map((r) => [r.id as string, Number(r.count)]));
        const first = 20 + i;
        const want = Object.fromEntries([0, 1, 2, 3, 4].map((r) => [`k${r}`, Math.floor(first / 5) + (r < first % 5 ? 1 : 0) + (r === 0 ? i + 1 : 0)]));
        expect(got).toEqual(want);
        expect(queries[i]?.lastProgress?.batchId).toBe(1);
        expect(queries[i]?.exception).toBeNull();
      }
    } finally {
      await stopAll(queries);
      await s.close();
    }
  }, 120_000);

  describe('scheduler pools under load: 30 busy queries in the default pool', () => {
    const nap = udf(UDFS, 'nap', 'long');
    const BATCHES = 3;
    const BUSY = 30;

    /**
     * A stateful query in `pool` whose `tasks` map tasks each hold their slot ~40 ms, run for
     * BATCHES batches: it reports its pool, and its sink counts every value it read once.
     */
    async function expectRunsExactly(s: Session, pool: string, tasks: number): Promise<void> {
      const name = `in_pool_${dirs}`;
      const q = await s.readStream
        .format('rate-micro-batch')
        .option('rowsPerBatch', 2 * tasks)
        .option('numPartitions', tasks)
        .load()
        .select(nap(col('value'), lit(20)).alias('v'))
        .groupBy('v')
        .count()
        .writeStream.format('memory')
        .queryName(name)
        .outputMode('update')
        .option('schedulerPool', pool)
        .option('checkpointLocation', ckpt())
        .start();
      try {
        await waitUntil(() => q.exception !== null || q.recentProgress.length >= BATCHES, `${BATCHES} batches of the query in pool ${pool}`, 60_000);
      } finally {
        await q.stop();
      }
      expect(q.exception).toBeNull();
      expect(q.recentProgress.map((p) => p.schedulerPool)).toEqual(q.recentProgress.map(() => pool));
      const read = q.recentProgress.reduce((n, p) => n + p.numInputRows, 0);
      expect(read).toBe(2 * tasks * q.recentProgress.length);
      const rows = (await s.memoryTable(name)).map((r) => [Number(r.v), Number(r.count)]).sort((a, b) => (a[0] as number) - (b[0] as number));
      expect(rows).toEqual(Array.from({ length: read }, (_, v) => [v, 1]));
    }

    /** BUSY stateless queries in the default pool, each batch 2 tasks holding a slot ~5 ms: the slots never idle. */
    async function busy(s: Session): Promise<StreamingQuery[]> {
      const queries: StreamingQuery[] = [];
      for (let i = 0; i < BUSY; i++) {
        queries.push(
          await s.readStream
            .format('rate-micro-batch')
            .option('rowsPerBatch', 2)
            .option('numPartitions', 2)
            .load()
            .select(nap(col('value'), lit(5)).alias('v'))
            .writeStream.format('memory')
            .queryName(`busy${i}`)
            .option('checkpointLocation', ckpt())
            .start(),
        );
      }
      await waitUntil(() => queries.every((q) => q.recentProgress.length > 0), 'every busy query to run a batch', 60_000);
      return queries;
    }

    /** A session of `mode` with the pools critical (weight 10), minshare (minShare 2) and plain: a query in each of `pools` beside the busy ones. */
    async function expectPoolsRunExactly(mode: 'FIFO' | 'FAIR', pools: Array<[pool: string, tasks: number]>): Promise<void> {
      const poolConf = {
        critical: { schedulingMode: 'FIFO', weight: 10, minShare: 0 },
        minshare: { schedulingMode: 'FIFO', weight: 1, minShare: 2 },
        plain: { schedulingMode: 'FIFO', weight: 1, minShare: 0 },
      };
      const s = await Session.create({
        conf: {
          'sluice.executor.cores': 2,
          'sluice.scheduler.mode': mode,
          'sluice.scheduler.pools': JSON.stringify(poolConf),
          'sluice.sql.shuffle.partitions': 2,
        },
      });
      let others: StreamingQuery[] = [];
      try {
        others = await busy(s);
        const before = others.map((q) => q.recentProgress.length);
        for (const [pool, tasks] of pools) await expectRunsExactly(s, pool, tasks);
        // The busy queries kept running beside them, untouched.
        expect(others.every((q) => q.isActive && q.exception === null)).toBe(true);
        expect(others.filter((q, i) => q.recentProgress.length <= (before[i] as number)).map((q) => q.name)).toEqual([]);
      } finally {
        await stopAll(others);
        await s.close();
      }
    }

    it('under FAIR, a query in a weight-10 pool, in a minShare-2 pool and in a plain pool each run exactly beside them', async () => {
      await expectPoolsRunExactly('FAIR', [
        ['critical', 1],
        ['minshare', 2],
        ['plain', 2],
      ]);
    }, 120_000);

    it('under FIFO, a query in the weight-10 pool runs exactly behind them', async () => {
      await expectPoolsRunExactly('FIFO', [['critical', 1]]);
    }, 120_000);
  });

  it('a query with no new input makes no batch and runs no task while busy queries run beside it', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
    const queries: StreamingQuery[] = [];
    try {
      const stream = s.memoryStream('quiet_in', 'id STRING');
      stream.addData([{ id: 'a' }, { id: 'b' }, { id: 'a' }]);
      const dir = ckpt();
      const quiet = await s.readStream
        .format('memory')
        .load('quiet_in')
        .groupBy('id')
        .count()
        .writeStream.format('memory')
        .queryName('quiet_counts')
        .outputMode('update')
        .option('checkpointLocation', dir)
        .option('schedulerPool', 'quiet')
        .start();
      queries.push(quiet);
      await quiet.processAllAvailable();
      for (let i = 0; i < 4; i++) {
        queries.push(
          await s.readStream
            .format('rate-micro-batch')
            .option('rowsPerBatch', 1000)
            .load()
            .groupBy(col('value').mod(10).alias('k'))
            .count()
            .writeStream.foreachBatch(async () => {})
            .outputMode('update')
            .queryName(`loud${i}`)
            .option('checkpointLocation', ckpt())
            .start(),
        );
      }
      const loud = queries.slice(1);
      const before = loud.map((q) => q.recentProgress.length);
      let quietTasks = 0;
      let loudTasks = 0;
      const tasksOf = (name: string): number => {
        const pool = s.metrics().scheduler.pools[name];
        return (pool?.runningTasks ?? 0) + (pool?.waitingTasks ?? 0);
      };
      const sampler = setInterval(() => {
        quietTasks += tasksOf('quiet');
        loudTasks += tasksOf('default');
      }, 1);
      try {
        await waitUntil(() => loud.every((q, i) => q.recentProgress.length >= (before[i] as number) + 20), '20 batches of each busy query', 60_000);
      } finally {
        clearInterval(sampler);
      }
      // The quiet query ran its one batch and nothing since: no batch, no checkpoint entry, no task.
      expect(quiet.recentProgress.map((p) => p.batchId)).toEqual([0]);
      expect(readdirSync(join(dir, 'offsets')).filter((f) => /^\d+$/.test(f))).toEqual(['0']);
      expect(readdirSync(join(dir, 'commits')).filter((f) => /^\d+$/.test(f))).toEqual(['0']);
      expect(quietTasks).toBe(0);
      expect(loudTasks).toBeGreaterThan(0); // the sampling sees the busy queries' tasks
      expect(quiet.status.isDataAvailable).toBe(false);
      expect(await s.memoryTable('quiet_counts')).toEqual(
        expect.arrayContaining([
          { id: 'a', count: 2 },
          { id: 'b', count: 1 },
        ]),
      );
    } finally {
      await stopAll(queries);
      await s.close();
    }
  }, 90_000);

  it('one-shard stateful queries share the slots out: each worker hosts half of them', async () => {
    const n = 4;
    const s = await Session.create({
      conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4, 'sluice.sql.streaming.stateStore.shards': 1 },
    });
    const queries: StreamingQuery[] = [];
    try {
      // Every query starts before any has data: each shard opens with its share of a worker's
      // budget among all four (one opened alone would take the whole budget, and the next on its
      // slot would close it to make room).
      const streams = Array.from({ length: n }, (_, i) => s.memoryStream(`one${i}`, 'id STRING'));
      for (let i = 0; i < n; i++) {
        queries.push(
          await s.readStream
            .format('memory')
            .load(`one${i}`)
            .groupBy('id')
            .count()
            .writeStream.format('memory')
            .queryName(`one_counts${i}`)
            .outputMode('complete')
            .option('checkpointLocation', ckpt())
            .start(),
        );
      }
      for (const m of streams) m.addData([{ id: 'a' }, { id: 'b' }, { id: 'a' }]);
      await Promise.all(queries.map((q) => q.processAllAvailable()));
      for (const q of queries) expect(q.lastProgress?.stateOperators[0]?.numStateStoreInstances).toBe(1);
      expect(queries.map((q) => q.stateSlots)).toEqual([[0], [1], [0], [1]]);
      expect(s.metrics().executor.stateStores.map((w) => w?.openShards)).toEqual([2, 2]);
      for (let i = 0; i < n; i++)
        expect(await s.memoryTable(`one_counts${i}`)).toEqual(
          expect.arrayContaining([
            { id: 'a', count: 2 },
            { id: 'b', count: 1 },
          ]),
        );
    } finally {
      await stopAll(queries);
      await s.close();
    }
  });

  it('a listener stuck on its first event holds back no batch: a stateful query runs 20 batches meanwhile, exactly', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let heard = 0;
    s.streams.addListener({
      onQueryProgress: () => {
        heard += 1;
        return gate;
      },
    });
    try {
      const q = await s.readStream
        .format('rate-micro-batch')
        .option('rowsPerBatch', 10_000)
        .load()
        .groupBy(col('value').mod(100).alias('k'))
        .count()
        .writeStream.format('memory')
        .queryName('listened')
        .outputMode('complete')
        .option('checkpointLocation', ckpt())
        .start();
      try {
        await waitUntil(() => q.exception !== null || q.recentProgress.length >= 20, '20 batches while the listener is stuck', 60_000);
        expect(heard, 'progress events the stuck listener took').toBe(1);
      } finally {
        await q.stop();
      }
      expect(q.exception).toBeNull();
      const batches = q.recentProgress.length;
      expect(q.recentProgress.map((p) => p.numInputRows)).toEqual(Array(batches).fill(10_000));
      // Complete mode: the last batch's counts, 1 in 100 of every row read so far for each key.
      const counts = await s.memoryTable('listened');
      expect(counts).toHaveLength(100);
      expect(new Set(counts.map((r) => Number(r.count)))).toEqual(new Set([batches * 100]));
      // Released, the listener hears every progress event the bus kept (a full queue drops the oldest, and counts them).
      release();
      await s.listenerBus.idle();
      expect(heard + s.metrics().listenerBus.numDroppedEventsByKind.onQueryProgress).toBe(batches);
    } finally {
      await s.close();
    }
  });

  it('a child under ulimit -n 256 runs 20 stateful queries of 200 partitions each, exactly, within its file budget', () => {
    const child = fileURLToPath(new URL('./fixtures/many-stateful-child.mjs', import.meta.url));
    const r = spawnSync('bash', ['-c', `ulimit -n 256 && exec "${process.execPath}" "${child}" "${join(root, 'ulimit')}" 20 200`], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.signal, r.stderr).toBeNull();
    const line = r.stdout.trim().split('\n').at(-1) as string;
    expect(line, r.stdout + r.stderr).toMatch(/^RESULT /);
    const result = JSON.parse(line.slice('RESULT '.length)) as {
      exact: boolean[];
      failures: string[];
      stateStores: Array<{ fileHandles: number; maxOpenFiles: number; openShards: number; shardsClosedForBudget: number }>;
    };
    expect(result.failures).toEqual([]);
    expect(result.exact).toEqual(Array(20).fill(true));
    // (256 - 64 for the driver) / 2 slots - 4 for each worker's own: 92 handles a worker.
    for (const w of result.stateStores) {
      expect(w.maxOpenFiles).toBe(92);
      expect(w.fileHandles).toBeLessThanOrEqual(92);
    }
    // 20 queries' shards do not all fit: some were closed to make room and reopened.
    expect(result.stateStores.reduce((n, w) => n + w.shardsClosedForBudget, 0)).toBeGreaterThan(0);
  }, 150_000);
});
