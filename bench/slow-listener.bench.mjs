// A slow listener beside a busy query: rows per second of a stateful query with a listener that
// sleeps 200 ms on every progress and idle event, against the same query without it.
//
//   rate-micro-batch (2,000,000 rows a batch) -> groupBy(value % 100).count() -> memory sink,
//   update mode, a durable checkpoint; ROUNDS rounds, each running the query without the listener,
//   then with it (interleaved, so that the machine's noise hits both alike).
//
// A run's rows/s is the rows of MEASURED batches after 2 warm-up ones over the time from the first
// measured batch's trigger to the trigger after the last (progress timestamps). The figure is the
// best run with the listener, over the best run without (higher is better; aim >= 0.9: listeners
// are called off the batch loop, so the listener costs no batch time).
//
// Knobs (environment): SLUICE_BENCH_ROWS (2000000), SLUICE_BENCH_BATCHES (30), SLUICE_BENCH_ROUNDS
// (3), SLUICE_BENCH_CORES (2).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, record, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS', 2_000_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 30);
const ROUNDS = envInt('SLUICE_BENCH_ROUNDS', 3);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const WARMUP = 2;
const LOAD_AT_START = loadavg()[0];

const { Session, col } = await loadDriver();
const tmp = makeTempDir('slow-listener');
cleanupOnExit(tmp);
let runs = 0;

const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });

/** Rows per second of one run of the query (see the top of this file). */
async function run() {
  const n = runs++;
  const q = await session.readStream
    .format('rate-micro-batch')
    .option('rowsPerBatch', ROWS)
    .load()
    .groupBy(col('value').mod(100).alias('k'))
    .count()
    .writeStream.format('memory')
    .queryName(`listened_${n}`)
    .outputMode('update')
    .option('checkpointLocation', join(tmp, `run-${n}`))
    .start();
  try {
    const deadline = Date.now() + 300_000;
    while (q.recentProgress.length < WARMUP + MEASURED + 1) {
      if (q.exception) throw q.exception;
      if (Date.now() > deadline) throw new Error(`waited 300 s for ${WARMUP + MEASURED + 1} batches`);
      await sleep(10);
    }
    const p = q.recentProgress;
    const ms = Date.parse(p[WARMUP + MEASURED].timestamp) - Date.parse(p[WARMUP].timestamp);
    const rows = p.slice(WARMUP, WARMUP + MEASURED).reduce((s, x) => s + x.numInputRows, 0);
    if (rows !== ROWS * MEASURED) throw new Error(`the query read ${rows} rows in ${MEASURED} batches, not ${ROWS * MEASURED}`);
    return Math.round(rows / (ms / 1000));
  } finally {
    await q.stop();
  }
}

const slow = { onQueryProgress: () => sleep(200), onQueryIdle: () => sleep(200) };
const without = [];
const withSlow = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    without.push(await run());
    session.streams.addListener(slow);
    withSlow.push(await run());
    session.streams.removeListener(slow);
    console.log(`round ${round + 1}: ${withSlow.at(-1)} rows/s with the listener, ${without.at(-1)} without`);
  }
} finally {
  await session.close();
}
const value = Math.max(...withSlow);
const baseline = Math.max(...without);
const ratio = round(value / baseline, 3);
console.log(`slow listener: best ${value} rows/s with it, ${baseline} without: ratio ${ratio} (aim >= 0.9)`);
record({
  name: 'slow-listener',
  unit: 'rows/s',
  value,
  baseline,
  ratio,
  params: {
    ratioIs: 'best rows/s with a listener sleeping 200 ms per progress and idle event / best without, interleaved rounds',
    aim: '>= 0.9',
    withListener: withSlow,
    withoutListener: without,
    query: `rate-micro-batch(rowsPerBatch ${ROWS}) -> groupBy(value % 100).count() -> memory, update`,
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    rounds: ROUNDS,
    'sluice.executor.cores': CORES,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
