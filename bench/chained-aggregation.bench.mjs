// Chained aggregation: the seed query followed by a second aggregation (its 5-minute windows
// counted per hour), against the seed query alone on the same rows, in the same run: the cost of
// the second stateful operator.
//
//   rate-micro-batch (rowsPerBatch 1,000,000, advanceMillisPerBatch 300000)
//     .withColumn('id', value % 100000).withWatermark('timestamp', '10 minutes')
//     .groupBy(window('timestamp', '5 minutes'), 'id').count()
//     [.groupBy(window(window_time('window'), '1 hour')).count()]   -> foreachBatch counting rows
//
// Each batch is 5 minutes of event time later, so the first aggregation closes a 5-minute window
// of 100,000 keys every batch, the second one takes those 100,000 rows in (one key: the hour), and
// emits an hour every twelfth batch. The rate of each is sum(numInputRows) / sum(batchDuration) over the measured
// batches (after the warm-up ones); the ratio is chained / single. Each query runs twice,
// alternating; medians.
//
// Knobs (environment): SLUICE_BENCH_ROWS_PER_BATCH (1000000), SLUICE_BENCH_BATCHES (20 measured),
// SLUICE_BENCH_WARMUP (2), SLUICE_BENCH_CORES (2), SLUICE_BENCH_TMP.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, measureDataBatches, median, record, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS_PER_BATCH', 1_000_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 20);
const WARMUP = envInt('SLUICE_BENCH_WARMUP', 2);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const LOAD_AT_START = loadavg()[0];

const { Session, col, window, window_time } = await loadDriver();
const tmp = makeTempDir('chained');
cleanupOnExit(tmp);

async function run(chained) {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  let emitted = 0;
  try {
    const counts = session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', ROWS)
      .option('advanceMillisPerBatch', 300_000)
      .load()
      .withColumn('id', col('value').mod(100_000))
      .withWatermark('timestamp', '10 minutes')
      .groupBy(window('timestamp', '5 minutes'), 'id')
      .count();
    const df = chained ? counts.groupBy(window(window_time('window'), '1 hour')).count() : counts;
    const q = await df.writeStream
      .foreachBatch((rows) => {
        emitted += rows.length;
      })
      .option('checkpointLocation', join(tmp, `ckpt-${chained}-${Date.now()}`))
      .start();
    const { rowsPerSec, medianBatchMs, last } = await measureDataBatches(q, WARMUP, MEASURED);
    return { chained, rowsPerSec, medianBatchMs, emitted, operators: last.stateOperators.length };
  } finally {
    await session.close();
  }
}

const single = [];
const chained = [];
for (let round = 0; round < 2; round++) {
  single.push(await run(false));
  chained.push(await run(true));
}
for (const r of [...single, ...chained]) console.log(r);
for (const r of chained)
  if (r.operators !== 2 || r.emitted === 0) throw new Error(`the chained query ran ${r.operators} operators and emitted ${r.emitted} rows`);
const chainedRate = median(chained.map((r) => r.rowsPerSec));
const singleRate = median(single.map((r) => r.rowsPerSec));
record({
  name: 'chained-aggregation',
  unit: 'rows/s',
  value: Math.round(chainedRate),
  baseline: Math.round(singleRate),
  ratio: round(chainedRate / singleRate, 3),
  params: {
    ratioIs: `the seed query followed by an hourly count of its windows / the seed query alone, ${CORES} slots, input rows per second`,
    query: `rate-micro-batch(${ROWS} rows, 5 minutes a batch) -> groupBy(window 5 min, id % 100000).count() [-> groupBy(window(window_time(window), 1 hour)).count()] -> foreachBatch`,
    chainedRuns: chained.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs })),
    singleRuns: single.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs })),
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
