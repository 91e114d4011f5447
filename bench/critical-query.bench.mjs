// A critical query among busy ones. The critical query runs in the FAIR pool `critical` (weight 10,
// minShare 1): rate-micro-batch with ROWS rows a batch -> groupBy(value % 1000).count() ->
// foreachBatch no-op, update mode, a durable checkpoint. The busy queries, BUSY of them in the
// default pool, each read rate-micro-batch with BUSY_ROWS rows a batch, keep no row (a filter
// dropping every one) and write to a no-op foreachBatch.
//
// The figure is the critical query's median time from one batch's start to the next (progress
// timestamps, after WARMUP batches, over MEASURED intervals), with the busy queries running,
// against the same query alone in the same session mode, run first. ratio = among busy / alone
// (lower is better). FAIR and FIFO each get a result; under FIFO the pool settings do nothing.
// A critical query that does not make MEASURED batches within CAP_S seconds is reported at the
// cap: the figure is then a lower bound, and the run says so.
//
// Knobs (environment): SLUICE_BENCH_ROWS (2000000), SLUICE_BENCH_BUSY (30), SLUICE_BENCH_BUSY_ROWS
// (100000), SLUICE_BENCH_BATCHES (12), SLUICE_BENCH_WARMUP (2), SLUICE_BENCH_CAP_S (60),
// SLUICE_BENCH_CORES (2), SLUICE_BENCH_MODES (FAIR,FIFO).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, median, record, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS', 2_000_000);
const BUSY = envInt('SLUICE_BENCH_BUSY', 30);
const BUSY_ROWS = envInt('SLUICE_BENCH_BUSY_ROWS', 100_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 12);
const WARMUP = envInt('SLUICE_BENCH_WARMUP', 2);
const CAP_S = envInt('SLUICE_BENCH_CAP_S', 60);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const MODES = (process.env.SLUICE_BENCH_MODES ?? 'FAIR,FIFO').split(',');
const POOLS = { critical: { schedulingMode: 'FIFO', weight: 10, minShare: 1 } };
const LOAD_AT_START = loadavg()[0];

const { Session, col } = await loadDriver();
const tmp = makeTempDir('critical-query');
cleanupOnExit(tmp);
let runs = 0;

/** The critical query's batch-start-to-next-start intervals in one session of `mode`, with `busy` busy queries. */
async function run(mode, busy) {
  const session = await Session.create({
    conf: { 'sluice.executor.cores': CORES, 'sluice.scheduler.mode': mode, 'sluice.scheduler.pools': JSON.stringify(POOLS) },
  });
  const dir = join(tmp, `run-${runs++}`);
  const queries = [];
  try {
    for (let i = 0; i < busy; i++) {
      queries.push(
        await session.readStream
          .format('rate-micro-batch')
          .option('rowsPerBatch', BUSY_ROWS)
          .load()
          .filter(col('value').lt(0))
          .writeStream.foreachBatch(async () => {})
          .queryName(`busy${i}`)
          .option('checkpointLocation', join(dir, `busy${i}`))
          .start(),
      );
    }
    // The busy queries are all running before the critical one starts.
    while (queries.some((q) => q.lastProgress === null)) {
      for (const q of queries) if (q.exception) throw q.exception;
      await sleep(10);
    }
    const critical = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', ROWS)
      .load()
      .groupBy(col('value').mod(1000).alias('k'))
      .count()
      .writeStream.foreachBatch(async () => {})
      .outputMode('update')
      .queryName('critical')
      .option('schedulerPool', 'critical')
      .option('checkpointLocation', join(dir, 'critical'))
      .start();
    queries.push(critical);
    const started = Date.now();
    const wanted = WARMUP + MEASURED + 1;
    while (critical.recentProgress.length < wanted && Date.now() - started < CAP_S * 1000) {
      if (critical.exception) throw critical.exception;
      await sleep(20);
    }
    const starts = critical.recentProgress.map((p) => Date.parse(p.timestamp)).slice(WARMUP);
    const intervals = starts.slice(1).map((t, i) => t - starts[i]);
    const capped = intervals.length < MEASURED;
    // Too few batches within the cap: the missing intervals count as the time left after the last batch began.
    if (capped) {
      const last = starts.at(-1) ?? started;
      while (intervals.length < MEASURED) intervals.push(Math.max(Date.now() - last, 0));
    }
    const batches = critical.recentProgress.length;
    const busyBatches = queries.slice(0, busy).reduce((n, q) => n + q.recentProgress.length, 0);
    return { mode, busy, medianMs: median(intervals), maxMs: Math.max(...intervals), batches, capped, busyBatches, wallMs: Date.now() - started };
  } finally {
    await Promise.allSettled(queries.map((q) => q.stop()));
    await session.close();
  }
}

for (const mode of MODES) {
  const alone = await run(mode, 0);
  console.log(alone);
  const busy = await run(mode, BUSY);
  console.log(busy);
  const ratio = round(busy.medianMs / alone.medianMs, 3);
  console.log(
    `${mode}: median interval ${busy.medianMs} ms among ${BUSY} busy queries, ${alone.medianMs} ms alone: ratio ${ratio}${busy.capped ? ' (capped: a lower bound)' : ''}`,
  );
  record({
    name: `critical-query-${mode.toLowerCase()}`,
    unit: 'ms',
    value: busy.medianMs,
    baseline: alone.medianMs,
    ratio,
    params: {
      ratioIs: `the critical query's median batch start to next start among ${BUSY} busy queries / alone (${mode})`,
      aim: mode === 'FAIR' ? '<= 2' : 'worse than FAIR',
      alone,
      busy,
      critical: `rate-micro-batch(rowsPerBatch ${ROWS}) -> groupBy(value % 1000).count() -> foreachBatch no-op, update, pool critical ${JSON.stringify(POOLS.critical)}`,
      busyQuery: `rate-micro-batch(rowsPerBatch ${BUSY_ROWS}) -> filter(value < 0) -> foreachBatch no-op, default pool`,
      measuredIntervals: MEASURED,
      warmupBatches: WARMUP,
      capSeconds: CAP_S,
      'sluice.executor.cores': CORES,
      ...machineFacts(LOAD_AT_START),
    },
    command: commandLine(),
  });
}
