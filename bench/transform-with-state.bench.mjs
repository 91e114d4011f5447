// transformWithState: two figures.
//
// transform-with-state-count: a per-key running count through transformWithState (RunningCount in
// bench/processors.mjs) against groupBy('id').count() in update mode, on the same rows in the same
// run: rate-micro-batch (SLUICE_BENCH_ROWS_PER_BATCH rows a batch, ids value % 100000) into a
// foreachBatch counting rows. Rate = input rows / batch time over the measured batches; each query
// runs twice, alternating; medians. Ratio = transformWithState / aggregation (aim >= 0.5).
//
// transform-with-state-timers: the batch time of a batch firing 10,000 processing-time timers,
// with 1M keys holding a timer against 5M keys holding one (TimerPerKey: key k's timer at
// 1e9 ms + floor(k / 10000) s). The keys are loaded in batches of 250,000 on a manual clock, then
// the clock jumps to the timers and advances a second a batch: each batch fires one second's
// 10,000 timers. Median batchDuration of the measured batches; ratio = 5M / 1M (aim <= 1.2: the
// cost is what fires, not what exists).
//
// Knobs (environment): SLUICE_BENCH_ROWS_PER_BATCH (200000), SLUICE_BENCH_BATCHES (20 measured),
// SLUICE_BENCH_WARMUP (2), SLUICE_BENCH_CORES (2), SLUICE_BENCH_KEYS (1000000: the small timer
// run; the large one has 5 times as many), SLUICE_BENCH_TMP.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, measureDataBatches, median, record, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS_PER_BATCH', 200_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 20);
const WARMUP = envInt('SLUICE_BENCH_WARMUP', 2);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const KEYS = envInt('SLUICE_BENCH_KEYS', 1_000_000);
const LOAD_AT_START = loadavg()[0];

const { Session, ManualClock, Trigger, col, statefulProcessor } = await loadDriver();
const tmp = makeTempDir('tws');
cleanupOnExit(tmp);
const processors = new URL('./processors.mjs', import.meta.url);

async function countRun(tws) {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  let emitted = 0;
  try {
    const rows = session.readStream.format('rate-micro-batch').option('rowsPerBatch', ROWS).load().withColumn('id', col('value').mod(100_000)).select('id');
    const df = tws
      ? rows.groupBy('id').transformWithState(statefulProcessor(processors, 'RunningCount'), { outputSchema: 'id LONG, count LONG', outputMode: 'update' })
      : rows.groupBy('id').count();
    const q = await df.writeStream
      .outputMode('update')
      .foreachBatch((out) => {
        emitted += out.length;
      })
      .option('checkpointLocation', join(tmp, `count-${tws}-${Date.now()}`))
      .start();
    const { rowsPerSec, medianBatchMs } = await measureDataBatches(q, WARMUP, MEASURED);
    return { tws, rowsPerSec, medianBatchMs, emitted };
  } finally {
    await session.close();
  }
}

async function timerRun(keys) {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  const clock = new ManualClock(0);
  const load = 250_000;
  let fired = 0;
  try {
    const df = session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', load)
      .load()
      .filter(col('value').lt(keys))
      .select(col('value').alias('id'))
      .groupBy('id')
      .transformWithState(statefulProcessor(processors, 'TimerPerKey'), { outputSchema: 'id LONG', outputMode: 'update', timeMode: 'processingTime' });
    const q = await df.writeStream
      .outputMode('update')
      .foreachBatch((out) => {
        fired += out.length;
      })
      .trigger(Trigger.ProcessingTime('1 second'), { clock })
      .option('checkpointLocation', join(tmp, `timers-${keys}-${Date.now()}`))
      .start();
    await clock.allWaiting();
    while (q.recentProgress.reduce((n, p) => n + p.numInputRows, 0) < keys) {
      if (q.exception) throw q.exception;
      await clock.advance(1000);
    }
    const loaded = q.lastProgress.stateOperators[0].numRowsTotal;
    // To the first second of timers; then a second a batch.
    await clock.advance(1_000_000_000 - clock.now());
    const from = q.recentProgress.length;
    for (let i = 0; i < WARMUP + MEASURED; i++) await clock.advance(1000);
    if (q.exception) throw q.exception;
    const batches = q.recentProgress.slice(from + WARMUP);
    await q.stop();
    const expired = batches.map((p) => p.stateOperators[0].customMetrics.numExpiredTimers);
    if (expired.some((n) => n !== 10_000)) throw new Error(`a measured batch fired ${expired.join(', ')} timers, not 10000 each`);
    return { keys, loaded, fired, medianBatchMs: median(batches.map((p) => p.batchDuration)) };
  } finally {
    await session.close();
  }
}

const counts = { tws: [], agg: [] };
for (let r = 0; r < 2; r++) {
  counts.agg.push(await countRun(false));
  counts.tws.push(await countRun(true));
}
for (const r of [...counts.agg, ...counts.tws]) console.log(r);
const twsRate = median(counts.tws.map((r) => r.rowsPerSec));
const aggRate = median(counts.agg.map((r) => r.rowsPerSec));
record({
  name: 'transform-with-state-count',
  unit: 'rows/s',
  value: Math.round(twsRate),
  baseline: Math.round(aggRate),
  ratio: round(twsRate / aggRate, 3),
  params: {
    ratioIs: `a running count per id through transformWithState / groupBy('id').count(), update mode, ${CORES} slots, input rows per second`,
    query: `rate-micro-batch(${ROWS} rows) -> id = value % 100000 -> groupBy(id).[transformWithState(RunningCount) | count()] -> foreachBatch`,
    twsRuns: counts.tws.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs })),
    aggRuns: counts.agg.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs })),
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});

const small = await timerRun(KEYS);
const large = await timerRun(KEYS * 5);
console.log(small, large);
record({
  name: 'transform-with-state-timers',
  unit: 'ms',
  value: large.medianBatchMs,
  baseline: small.medianBatchMs,
  ratio: round(large.medianBatchMs / small.medianBatchMs, 3),
  params: {
    ratioIs: `median batch time firing 10,000 processing-time timers with ${KEYS * 5} keys holding timers / with ${KEYS}, ${CORES} slots`,
    small,
    large,
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
