// Session windows: a count per session of each id, against a count per 5-minute window of each id,
// on the same rows in the same run: the cost of sessions (merged per key, closed by the watermark)
// over the seed query's tumbling windows.
//
//   rate-micro-batch (rowsPerBatch 1,000,000, advanceMillisPerBatch 300000)
//     .withColumn('id', floor(value / 10) % 100000).withWatermark('timestamp', '10 minutes')
//     .groupBy(session_window('timestamp', '1 minute') | window('timestamp', '5 minutes'), 'id').count()
//     -> foreachBatch counting rows
//
// Each id has a burst of 10 rows (3 ms of event time) per batch, 5 minutes apart: one session of
// 10 rows per id and batch, and one window. Both queries keep 100,000 keys a batch and close as
// many once the watermark passes them. The rate of each is sum(numInputRows) / sum(batchDuration)
// over the measured batches (after the warm-up ones); the ratio is sessions / windows. Each query
// runs twice, alternating; medians.
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

const { Session, expr, session_window, window } = await loadDriver();
const tmp = makeTempDir('session-window');
cleanupOnExit(tmp);

async function run(sessions) {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  let emitted = 0;
  try {
    const key = sessions ? session_window('timestamp', '1 minute') : window('timestamp', '5 minutes');
    const df = session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', ROWS)
      .option('advanceMillisPerBatch', 300_000)
      .load()
      .withColumn('id', expr('floor(value / 10) % 100000'))
      .withWatermark('timestamp', '10 minutes')
      .groupBy(key, 'id')
      .count();
    const q = await df.writeStream
      .foreachBatch((rows) => {
        emitted += rows.length;
      })
      .option('checkpointLocation', join(tmp, `ckpt-${sessions}-${Date.now()}`))
      .start();
    const { rowsPerSec, medianBatchMs, last } = await measureDataBatches(q, WARMUP, MEASURED);
    return { sessions, rowsPerSec, medianBatchMs, emitted, operator: last.stateOperators[0].operatorName, stateRows: last.stateOperators[0].numRowsTotal };
  } finally {
    await session.close();
  }
}

const windows = [];
const sessions = [];
for (let round = 0; round < 2; round++) {
  windows.push(await run(false));
  sessions.push(await run(true));
}
for (const r of [...windows, ...sessions]) console.log(r);
for (const r of sessions) {
  if (r.operator !== 'sessionWindowStateStoreSaveExec' || r.emitted === 0) throw new Error(`the session query ran ${r.operator} and emitted ${r.emitted} rows`);
}
const sessionRate = median(sessions.map((r) => r.rowsPerSec));
const windowRate = median(windows.map((r) => r.rowsPerSec));
record({
  name: 'session-window',
  unit: 'rows/s',
  value: Math.round(sessionRate),
  baseline: Math.round(windowRate),
  ratio: round(sessionRate / windowRate, 3),
  params: {
    ratioIs: `a count per 1-minute-gap session of each id / a count per 5-minute window of each id, same rows, ${CORES} slots, input rows per second`,
    query: `rate-micro-batch(${ROWS} rows, 5 minutes a batch) -> id = floor(value / 10) % 100000 -> groupBy(session_window 1 min | window 5 min, id).count() -> foreachBatch`,
    sessionRuns: sessions.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs, stateRows: r.stateRows })),
    windowRuns: windows.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs, stateRows: r.stateRows })),
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
