/**
 * Many queries in one session sharing 2 slots: 40 stateful queries stay exact; scheduler pools
 * keep a critical query's batches near their duration alone (FAIR by weight, and by minShare)
 * while FIFO makes it wait behind 30 other queries; a query with no new input makes no batch and
 * runs no task beside busy ones; a slow listener costs no throughput; and a low `ulimit -n`
 * child runs 20 stateful queries of 200 partitions each exactly.
 *
 * Timings are ratios against the same query running alone in the same session. The busy queries'
 * tasks hold their slot in a udf that sleeps (Atomics.wait) rather than spins, so they contend for
 * slots, which the pools arbitrate, and not for the 2 CPU cores. Checkpoints live on tmpfs where
 * there is one, so that 30 queries' syncs do not queue in front of the measured query's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { col, lit, Session, udf, type StreamingQuery } from '@sluice/driver';
import { sleep, waitUntil } from './helpers.js';

const UDFS = new URL('./fixtures/udfs.mjs', import.meta.url);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'sluice-many-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const ckpt = () => join(root, `ckpt-${dirs++}`);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

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
    const BATCHES = 12;
    const BUSY = 30;

    /** A stateful query whose `tasks` map tasks each hold their slot ~40 ms; its median batch duration over BATCHES batches. */
    async function measured(s: Session, pool: string, tasks: number): Promise<number> {
      const q = await s.readStream
        .format('rate-micro-batch')
        .option('rowsPerBatch', 2 * tasks)
        .option('numPartitions', tasks)
        .load()
        .select(nap(col('value'), lit(20)).alias('v'))
        .groupBy('v')
        .count()
        .writeStream.format('memory')
        .queryName(`measured_${dirs}`)
        .outputMode('update')
        .option('schedulerPool', pool)
        .option('checkpointLocation', ckpt())
        .start();
      try {
        await waitUntil(() => q.recentProgress.length >= BATCHES + 2, `${BATCHES} batches of the measured query`, 60_000);
        expect(q.exception).toBeNull();
        expect(q.lastProgress?.schedulerPool).toBe(pool);
        // The first two batches start the query; the next BATCHES are measured.
        return median(q.recentProgress.slice(2, BATCHES + 2).map((p) => p.batchDuration));
      } finally {
        await q.stop();
      }
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

    /** The measured query's median batch duration in each pool (with its number of map tasks) over its median alone. */
    async function ratios(mode: 'FIFO' | 'FAIR', pools: Array<[pool: string, tasks: number]>): Promise<Record<string, number>> {
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
        const alone = new Map<number, number>();
        for (const [, tasks] of pools) if (!alone.has(tasks)) alone.set(tasks, await measured(s, 'critical', tasks));
        others = await busy(s);
        const out: Record<string, number> = {};
        for (const [pool, tasks] of pools) out[pool] = (await measured(s, pool, tasks)) / (alone.get(tasks) as number);
        // The busy queries kept running, untouched by the measured ones.
        expect(others.every((q) => q.isActive && q.exception === null)).toBe(true);
        return out;
      } finally {
        await stopAll(others);
        await s.close();
      }
    }

    it('FAIR keeps a weight-10 pool near its duration alone; a minShare-2 pool gets both its slots, a plain pool waits; FIFO makes the same query wait behind all', async () => {
      // One map task a batch in the weighted pool; two in the minShare and plain pools, so that
      // the second task meets the default pool's tasks with one of its own already running.
      const fair = await ratios('FAIR', [
        ['critical', 1],
        ['minshare', 2],
        ['plain', 2],
      ]);
      const fifo = await ratios('FIFO', [['critical', 1]]);
      const report = `FAIR ${JSON.stringify(fair)} FIFO ${JSON.stringify(fifo)}`;
      // Weight 10 against 30 queries of weight 1: within 2x of running alone.
      expect(fair.critical, report).toBeLessThanOrEqual(2);
      // minShare 2: both its tasks take the next free slots, before the default pool's.
      expect(fair.minshare, report).toBeLessThanOrEqual(2);
      // Weight 1 and no minShare, with a task already running, it loses to the default pool (running/weight
      // as in Spark's FairSchedulingAlgorithm): its two tasks run one after the other.
      expect(fair.plain as number, report).toBeGreaterThan(1.3 * (fair.minshare as number));
      // FIFO: each of its stages queues behind the tasks the 30 others submitted first.
      expect(fifo.critical as number, report).toBeGreaterThan(2 * (fair.critical as number));
    }, 180_000);
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

  it('a listener sleeping 200 ms per event costs under 10% of processed rows/s', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
    try {
      /** Rows per second of wall time over 30 batches of 2,000,000 rows (about 50 ms each), after two warm-up batches (trigger start to trigger start). */
      const run = async (): Promise<number> => {
        const q = await s.readStream
          .format('rate-micro-batch')
          .option('rowsPerBatch', 2_000_000)
          .load()
          .groupBy(col('value').mod(100).alias('k'))
          .count()
          .writeStream.format('memory')
          .queryName(`listened_${dirs}`)
          .outputMode('update')
          .option('checkpointLocation', ckpt())
          .start();
        try {
          await waitUntil(() => q.recentProgress.length >= 33, '33 batches', 120_000);
          const p = q.recentProgress;
          const ms = Date.parse((p[32] as { timestamp: string }).timestamp) - Date.parse((p[2] as { timestamp: string }).timestamp);
          return p.slice(2, 32).reduce((n, x) => n + x.numInputRows, 0) / (ms / 1000);
        } finally {
          await q.stop();
        }
      };
      const slow = { onQueryProgress: () => sleep(200), onQueryIdle: () => sleep(200) };
      const without: number[] = [];
      const withSlow: number[] = [];
      // Interleaved, best of three each: the machine's noise hits both alike.
      for (let round = 0; round < 3; round++) {
        without.push(await run());
        s.streams.addListener(slow);
        withSlow.push(await run());
        s.streams.removeListener(slow);
      }
      expect(Math.max(...withSlow), `with ${withSlow.join(', ')} rows/s, without ${without.join(', ')}`).toBeGreaterThanOrEqual(0.9 * Math.max(...without));
    } finally {
      await s.close();
    }
  }, 180_000);

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
