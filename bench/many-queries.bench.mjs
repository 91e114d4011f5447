// Many queries on one session: 1, 10, 50 and 100 identical small stateful queries share the
// slots and do the same total work, against one query doing all of it in the same run.
//
//   each of N queries: rate-micro-batch (rowsPerBatch ROWS / N, 2 partitions)
//     .select(value % 1000 as k).groupBy('k').count() -> foreachBatch (a no-op), update mode,
//   durable checkpoint in a temp dir, shuffle.partitions 8; 2 warm-up batches, then 10 measured.
//   Every round of batches, all queries together, covers ROWS rows, whatever N.
//
// Total rows/s = the rows of the measured batches of all queries / (the last measured batch's end
// - the first measured batch's start), from each query's own progress events (timestamp and
// batchDuration). Each query stops itself after its measured batches. p99 is over the measured
// batches' batchDuration of all queries. cpuMsPerBatch is the process's CPU time (user + sys, every
// thread) from all queries past their warm-up until all have made their measured batches, per
// batch: with SLUICE_BENCH_ROWS_PER_ROUND and SLUICE_BENCH_KEYS it splits a batch's cost into its
// fixed part, its rows and its state work.
//
// Three variants for each N: FIFO (one pool), FAIR with one pool per query, and FIFO with a
// listener that sleeps 200 ms on every event. The baseline is N = 1 under FIFO, run first and
// last; its figure is the mean of the two. ratio = total rows/s of N queries / baseline.
//
// Knobs (environment): SLUICE_BENCH_QUERIES (1,10,50,100), SLUICE_BENCH_ROWS_PER_ROUND (1000000),
// SLUICE_BENCH_BATCHES (10), SLUICE_BENCH_WARMUP (2), SLUICE_BENCH_CORES (2), SLUICE_BENCH_TMP (where the
// checkpoints go: /dev/shm takes the disk's syncs out), SLUICE_BENCH_KEYS (1000: distinct keys of
// each query, so the state work of a round can be held apart from its batch count) and
// SLUICE_BENCH_SHARDS (unset: sluice.sql.streaming.stateStore.shards left at its default).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, percentile, record, round } from './lib.mjs';

const COUNTS = (process.env.SLUICE_BENCH_QUERIES ?? '1,10,50,100').split(',').map(Number);
const ROWS = envInt('SLUICE_BENCH_ROWS_PER_ROUND', 1_000_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 10);
const WARMUP = envInt('SLUICE_BENCH_WARMUP', 2);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const PARTITIONS = 8;
const KEYS = envInt('SLUICE_BENCH_KEYS', 1000);
const SHARDS = process.env.SLUICE_BENCH_SHARDS ? envInt('SLUICE_BENCH_SHARDS', 0) : undefined;
const LOAD_AT_START = loadavg()[0];

const { Session, col } = await loadDriver();
const tmp = makeTempDir('many-queries');
cleanupOnExit(tmp);
let runs = 0;

/** One session running `n` queries under `variant`; total rows/s and batch duration percentiles. */
async function run(n, variant) {
  const t0 = Date.now();
  const session = await Session.create({
    conf: {
      'sluice.executor.cores': CORES,
      'sluice.sql.shuffle.partitions': PARTITIONS,
      'sluice.scheduler.mode': variant === 'FAIR' ? 'FAIR' : 'FIFO',
      ...(SHARDS !== undefined && { 'sluice.sql.streaming.stateStore.shards': SHARDS }),
    },
  });
  if (variant === 'slowListener') {
    const slow = () => sleep(200);
    session.streams.addListener({ onQueryStarted: slow, onQueryProgress: slow, onQueryIdle: slow, onQueryTerminated: slow });
  }
  const queries = [];
  try {
    const dir = join(tmp, `run-${runs++}`);
    for (let i = 0; i < n; i++) {
      let w = session.readStream
        .format('rate-micro-batch')
        .option('rowsPerBatch', Math.floor(ROWS / n))
        .option('numPartitions', 2)
        .load()
        .select(col('value').mod(KEYS).alias('k'))
        .groupBy('k')
        .count()
        .writeStream.foreachBatch(async () => {})
        .outputMode('update')
        .queryName(`q${i}`)
        .option('checkpointLocation', join(dir, `q${i}`));
      if (variant === 'FAIR') w = w.option('schedulerPool', `pool${i}`);
      queries.push(await w.start());
    }
    const startedMs = Date.now() - t0;
    const last = WARMUP + MEASURED - 1;
    const stopping = new Map();
    // CPU time (every thread of the process) from all queries past their warm-up to all done.
    const batchOf = (q) => q.lastProgress?.batchId ?? -1;
    let cpu;
    while (stopping.size < n) {
      if (cpu === undefined && queries.every((q) => batchOf(q) >= WARMUP - 1))
        cpu = { at: process.cpuUsage(), batches: queries.reduce((s, q) => s + batchOf(q), 0) };
      for (const q of queries) {
        if (q.exception) throw q.exception;
        if (!stopping.has(q) && (q.lastProgress?.batchId ?? -1) >= last) stopping.set(q, q.stop());
      }
      await sleep(5);
    }
    const cpuUsed = process.cpuUsage(cpu?.at);
    const cpuMsPerBatch = cpu && round((cpuUsed.user + cpuUsed.system) / 1000 / (n * last - cpu.batches), 2);
    await Promise.all(stopping.values());
    let rows = 0;
    let start = Infinity;
    let end = -Infinity;
    const durations = [];
    for (const q of queries) {
      const measured = q.recentProgress.filter((p) => p.batchId >= WARMUP && p.batchId <= last);
      if (measured.length !== MEASURED) throw new Error(`query ${q.name} has ${measured.length} measured batches, not ${MEASURED}`);
      for (const p of measured) {
        const t = Date.parse(p.timestamp);
        rows += p.numInputRows;
        start = Math.min(start, t);
        end = Math.max(end, t + p.batchDuration);
        durations.push(p.batchDuration);
      }
    }
    const expected = Math.floor(ROWS / n) * n * MEASURED;
    if (rows !== expected) throw new Error(`${n} queries read ${rows} rows, not ${expected}`);
    console.error(`  ${n} ${variant}: started in ${startedMs} ms, done at ${Date.now() - t0} ms`);
    return {
      queries: n,
      variant,
      startMs: startedMs,
      rowsPerSec: Math.round((rows * 1000) / (end - start)),
      wallMs: end - start,
      p50BatchMs: percentile(durations, 50),
      p99BatchMs: percentile(durations, 99),
      cpuMsPerBatch,
    };
  } finally {
    await Promise.allSettled(queries.map((q) => q.stop()));
    await session.close();
    console.error(`  ${n} ${variant}: closed at ${Date.now() - t0} ms`);
  }
}

const first = await run(1, 'FIFO');
console.log(first);
const results = [];
for (const n of COUNTS) {
  for (const variant of ['FIFO', 'FAIR', 'slowListener']) {
    const r = n === 1 && variant === 'FIFO' ? first : await run(n, variant);
    if (r !== first) console.log(r);
    results.push(r);
  }
}
const lastBaseline = await run(1, 'FIFO');
console.log(lastBaseline);
const baseline = (first.rowsPerSec + lastBaseline.rowsPerSec) / 2;

const table = results.map((r) => ({ ...r, ratio: round(r.rowsPerSec / baseline, 3) }));
console.log('\nqueries  variant       rows/s     ratio  p50 ms  p99 ms');
for (const r of table) {
  console.log(
    `${String(r.queries).padStart(7)}  ${r.variant.padEnd(12)} ${String(r.rowsPerSec).padStart(9)}  ${r.ratio.toFixed(3).padStart(6)}  ${String(round(r.p50BatchMs, 1)).padStart(6)}  ${String(round(r.p99BatchMs, 1)).padStart(6)}`,
  );
}

for (const n of COUNTS) {
  const of = (variant) => table.find((r) => r.queries === n && r.variant === variant);
  const fifo = of('FIFO');
  record({
    name: `many-queries-${n}`,
    unit: 'rows/s',
    value: fifo.rowsPerSec,
    baseline: Math.round(baseline),
    ratio: fifo.ratio,
    params: {
      ratioIs: `total rows/s of ${n} queries (FIFO) / 1 query doing the same rows (mean of a first and a last run)`,
      aim: n === 100 ? '>= 0.5' : undefined,
      fifo,
      fair: of('FAIR'),
      slowListener: of('slowListener'),
      baselineRuns: [first.rowsPerSec, lastBaseline.rowsPerSec],
      rowsPerRound: ROWS,
      rowsPerBatchPerQuery: Math.floor(ROWS / n),
      measuredBatches: MEASURED,
      warmupBatches: WARMUP,
      query: `rate-micro-batch(rowsPerBatch ${ROWS} / queries, 2 partitions) -> select(value % ${KEYS} as k) -> groupBy(k).count() -> foreachBatch no-op, update`,
      'sluice.executor.cores': CORES,
      'sluice.sql.shuffle.partitions': PARTITIONS,
      'sluice.sql.streaming.stateStore.shards': SHARDS ?? 'default (one a slot)',
      fairPools: 'one pool per query (weight 1, minShare 0)',
      slowListenerIs: 'a listener sleeping 200 ms on every event, beside FIFO',
      ...machineFacts(LOAD_AT_START),
    },
    command: commandLine(),
  });
}
