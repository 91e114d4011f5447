// What a tiny stateful batch costs the machine: the process's CPU time (user + sys, every thread:
// the driver, the executors, the checkpoint writer, libuv's and V8's threads) per batch, over
// BATCHES batches of one query after WARMUP, with nothing else running (the warm-up is long
// because V8 goes on optimizing the batch's functions for a few hundred batches: a query running
// for minutes pays the steady cost measured here). The query:
// rate-micro-batch (10 rows a batch, 2 partitions) -> groupBy(value % 10).count() -> a no-op
// foreachBatch, update mode, a durable checkpoint; once with 1 state shard, once with 2 (the
// default on 2 slots). The baseline is the CPU time of one piscina round trip (a no-op task on a
// one-thread pool) in the same process. ratio = CPU per batch / CPU per round trip.
//
// On Linux each thread's share (from /proc/self/task) is in params.threads: the main thread (the
// driver) by name, the others by the thread id, largest first.
//
// Knobs (environment): SLUICE_BENCH_BATCHES (600), SLUICE_BENCH_WARMUP (300), SLUICE_BENCH_CORES (2).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { BENCH_DIR, cleanupOnExit, commandLine, envInt, loadDriver, loadPiscina, machineFacts, makeTempDir, record, round } from './lib.mjs';

const BATCHES = envInt('SLUICE_BENCH_BATCHES', 600);
const WARMUP = envInt('SLUICE_BENCH_WARMUP', 300);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const ROUND_TRIPS = 2000;
const LOAD_AT_START = loadavg()[0];

const { Session, col } = await loadDriver();
const Piscina = await loadPiscina();
const tmp = makeTempDir('batch-cost');
cleanupOnExit(tmp);

/** CPU ms of each thread of this process (Linux), by thread id. */
function threadTimes() {
  if (!existsSync('/proc/self/task')) return new Map();
  const tick = 10; // ms per clock tick (USER_HZ 100)
  return new Map(
    readdirSync('/proc/self/task').map((t) => {
      const f = readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1].split(' ');
      return [t, (Number(f[11]) + Number(f[12])) * tick];
    }),
  );
}

const cpuMs = (c) => (c.user + c.system) / 1000;

async function measure(shards) {
  const session = await Session.create({
    conf: { 'sluice.executor.cores': CORES, 'sluice.sql.shuffle.partitions': 8, 'sluice.sql.streaming.stateStore.shards': shards },
  });
  const q = await session.readStream
    .format('rate-micro-batch')
    .option('rowsPerBatch', 10)
    .option('numPartitions', 2)
    .load()
    .select(col('value').mod(10).alias('k'))
    .groupBy('k')
    .count()
    .writeStream.foreachBatch(async () => {})
    .outputMode('update')
    .option('checkpointLocation', join(tmp, `shards-${shards}`))
    .start();
  const until = async (id) => {
    while ((q.lastProgress?.batchId ?? -1) < id) {
      if (q.exception) throw q.exception;
      await sleep(1);
    }
  };
  try {
    await until(WARMUP);
    const first = q.lastProgress.batchId;
    const t0 = threadTimes();
    const c0 = process.cpuUsage();
    await until(first + BATCHES);
    const cpu = cpuMs(process.cpuUsage(c0));
    const t1 = threadTimes();
    const batches = q.lastProgress.batchId - first;
    const threads = [...t1]
      .map(([t, ms]) => [t === String(process.pid) ? 'driver (main thread)' : `thread ${t}`, round((ms - (t0.get(t) ?? 0)) / batches, 3)])
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1]);
    return { shards, batches, cpuMsPerBatch: round(cpu / batches, 3), threads: Object.fromEntries(threads) };
  } finally {
    await q.stop();
    await session.close();
  }
}

const pool = new Piscina({
  filename: pathToFileURL(join(BENCH_DIR, 'echo-worker.mjs')).href,
  minThreads: 1,
  maxThreads: 1,
  idleTimeout: Number.POSITIVE_INFINITY,
});
let roundTrip;
try {
  for (let i = 0; i < 200; i++) await pool.run(null);
  const c0 = process.cpuUsage();
  for (let i = 0; i < ROUND_TRIPS; i++) await pool.run(null);
  roundTrip = cpuMs(process.cpuUsage(c0)) / ROUND_TRIPS;
} finally {
  await pool.destroy();
}

for (const shards of [1, 2]) {
  const r = await measure(shards);
  console.log(r);
  const ratio = round(r.cpuMsPerBatch / roundTrip, 2);
  console.log(`batch-cost, ${shards} shard(s): ${r.cpuMsPerBatch} ms of CPU a batch, ${round(roundTrip, 4)} ms a piscina round trip: ratio ${ratio}`);
  record({
    name: `batch-cost-${shards}shard`,
    unit: 'ms',
    value: r.cpuMsPerBatch,
    baseline: round(roundTrip, 4),
    ratio,
    params: {
      ratioIs: 'CPU time (user + sys, all threads) per tiny stateful batch / per piscina round trip',
      aim: 'CPU per batch <= 1.5 ms',
      ...r,
      query: `rate-micro-batch(rowsPerBatch 10, 2 partitions) -> groupBy(value % 10).count() -> foreachBatch no-op, update, ${shards} shard(s)`,
      warmupBatches: WARMUP,
      'sluice.executor.cores': CORES,
      ...machineFacts(LOAD_AT_START),
    },
    command: commandLine(),
  });
}
