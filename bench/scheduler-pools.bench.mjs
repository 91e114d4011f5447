// Scheduler pools under load: a query in a chosen pool among BUSY busy queries in the default pool,
// all on 2 slots, against the same query alone in the same session.
//
//   measured query: rate-micro-batch (2 × tasks rows a batch, `tasks` partitions)
//     .select(nap(value, 20 ms) as v).groupBy('v').count() -> memory sink, update mode, a durable
//     checkpoint; each map task holds its slot ~40 ms asleep (Atomics.wait), so the queries contend
//     for slots, which the pools arbitrate, and not for the CPU cores.
//   busy queries: rate-micro-batch (2 rows a batch, 2 partitions) .select(nap(value, 5 ms)) ->
//     memory sink, default pool: the slots never idle.
//
// The figure is the measured query's median batchDuration over MEASURED batches (after 2 that start
// it) among the busy queries, over the same alone in the same session, measured first. ratio =
// among busy / alone (lower is better). Pools: `critical` (weight 10), `minshare` (weight 1,
// minShare 2) and `plain` (weight 1, minShare 0). Under FAIR: critical with one map task a batch,
// minshare and plain with two, so that the second task meets the default pool's tasks with one of
// its own already running (a plain pool then loses to the default pool, running/weight as in Spark's
// FairSchedulingAlgorithm, and its two tasks run one after the other). Under FIFO: critical, which
// queues behind the tasks the busy queries submitted first.
//
// Aims: FAIR critical <= 2 and minshare <= 2; FAIR plain > 1.3 × FAIR minshare; FIFO critical >
// 2 × FAIR critical. Checkpoints go to /dev/shm where there is one (SLUICE_BENCH_TMP), so that the
// busy queries' syncs do not queue in front of the measured query's.
//
// Knobs (environment): SLUICE_BENCH_BUSY (30), SLUICE_BENCH_BATCHES (12), SLUICE_BENCH_CORES (2).
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, median, record, round } from './lib.mjs';

if (!process.env.SLUICE_BENCH_TMP && existsSync('/dev/shm')) process.env.SLUICE_BENCH_TMP = '/dev/shm';
const BUSY = envInt('SLUICE_BENCH_BUSY', 30);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 12);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const WARMUP = 2;
const POOLS = {
  critical: { schedulingMode: 'FIFO', weight: 10, minShare: 0 },
  minshare: { schedulingMode: 'FIFO', weight: 1, minShare: 2 },
  plain: { schedulingMode: 'FIFO', weight: 1, minShare: 0 },
};
const LOAD_AT_START = loadavg()[0];

const { Session, col, lit, udf } = await loadDriver();
const nap = udf(new URL('./udfs.mjs', import.meta.url).href, 'nap', 'long');
const tmp = makeTempDir('scheduler-pools');
cleanupOnExit(tmp);
let dirs = 0;
const ckpt = () => join(tmp, `ckpt-${dirs++}`);

/** Waits until `done()`, failing past `ms` with `what`. */
async function until(done, what, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await sleep(10);
  }
}

/** The measured query in `pool` with `tasks` map tasks a batch: its median batch duration over MEASURED batches. */
async function measured(session, pool, tasks) {
  const q = await session.readStream
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
    await until(() => q.exception !== null || q.recentProgress.length >= WARMUP + MEASURED, `${MEASURED} batches of the query in pool ${pool}`);
    if (q.exception) throw q.exception;
    if (q.lastProgress?.schedulerPool !== pool) throw new Error(`the query ran in pool ${q.lastProgress?.schedulerPool}, not ${pool}`);
    return median(q.recentProgress.slice(WARMUP, WARMUP + MEASURED).map((p) => p.batchDuration));
  } finally {
    await q.stop();
  }
}

/** BUSY queries in the default pool, each running before this returns. */
async function busy(session) {
  const queries = [];
  for (let i = 0; i < BUSY; i++) {
    queries.push(
      await session.readStream
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
  await until(() => queries.every((q) => q.recentProgress.length > 0), 'every busy query to run a batch');
  return queries;
}

/** One session of `mode`: per [pool, tasks], the median batch duration alone and among the busy queries. */
async function run(mode, pools) {
  const session = await Session.create({
    conf: {
      'sluice.executor.cores': CORES,
      'sluice.scheduler.mode': mode,
      'sluice.scheduler.pools': JSON.stringify(POOLS),
      'sluice.sql.shuffle.partitions': 2,
    },
  });
  let others = [];
  try {
    const alone = new Map();
    for (const [, tasks] of pools) if (!alone.has(tasks)) alone.set(tasks, await measured(session, 'critical', tasks));
    others = await busy(session);
    const out = {};
    for (const [pool, tasks] of pools) out[pool] = { pool, tasks, aloneMs: alone.get(tasks), busyMs: await measured(session, pool, tasks) };
    for (const q of others) if (!q.isActive || q.exception) throw new Error(`busy query ${q.name} ended: ${q.exception?.message}`);
    return out;
  } finally {
    await Promise.allSettled(others.map((q) => q.stop()));
    await session.close();
  }
}

const fair = await run('FAIR', [
  ['critical', 1],
  ['minshare', 2],
  ['plain', 2],
]);
const fifo = await run('FIFO', [['critical', 1]]);
const ratioOf = (r) => round(r.busyMs / r.aloneMs, 3);
const results = [
  ['fair-critical', fair.critical, '<= 2'],
  ['fair-minshare', fair.minshare, '<= 2'],
  ['fair-plain', fair.plain, `> 1.3 × fair-minshare (${round(1.3 * ratioOf(fair.minshare), 3)})`],
  ['fifo-critical', fifo.critical, `> 2 × fair-critical (${round(2 * ratioOf(fair.critical), 3)})`],
];
for (const [name, r, aim] of results) {
  const ratio = ratioOf(r);
  console.log(`${name}: median batch ${r.busyMs} ms among ${BUSY} busy queries, ${r.aloneMs} ms alone: ratio ${ratio} (aim ${aim})`);
  record({
    name: `scheduler-pools-${name}`,
    unit: 'ms',
    value: r.busyMs,
    baseline: r.aloneMs,
    ratio,
    params: {
      ratioIs: `median batchDuration of a query in pool ${r.pool} (${r.tasks} map task(s) a batch) among ${BUSY} busy queries / alone (${name.startsWith('fair') ? 'FAIR' : 'FIFO'})`,
      aim,
      pools: POOLS,
      measuredQuery: `rate-micro-batch(rowsPerBatch ${2 * r.tasks}, ${r.tasks} partitions) -> select(nap(value, 20 ms)) -> groupBy(v).count() -> memory, update`,
      busyQuery: 'rate-micro-batch(rowsPerBatch 2, 2 partitions) -> select(nap(value, 5 ms)) -> memory, default pool',
      busyQueries: BUSY,
      measuredBatches: MEASURED,
      warmupBatches: WARMUP,
      'sluice.executor.cores': CORES,
      ...machineFacts(LOAD_AT_START),
    },
    command: commandLine(),
  });
}
