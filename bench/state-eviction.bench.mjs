// Eviction cost against the size of the state: the same batch (100k new keys, 100k evicted) over a
// state of 1M keys and over one of 5M, in the same run.
//
//   rate-micro-batch (rowsPerBatch 100,000, advanceMillisPerBatch 60,000) -> id = value
//     -> withWatermark(timestamp, D minutes) -> groupBy(window(timestamp, 1 minute), id).count()
//     -> memory sink, append mode
// Each batch fills one new 1-minute window with 100k keys; once D windows are open, each batch
// also evicts (and emits) the oldest window's 100k keys, so the state holds D x 100k keys: D = 10
// for 1M, D = 50 for 5M. After D + 2 warm-up batches, SLUICE_BENCH_BATCHES measured batches; the
// figure is the median durationMs.triggerExecution. The ratio 5M / 1M is near 1 when eviction
// costs what it evicts, not what the state holds (the index scan reads only the expired range).
//
// Knobs: SLUICE_BENCH_EVICT_KEYS (100000 per batch), SLUICE_BENCH_BATCHES (6 measured),
// SLUICE_BENCH_CORES (os.availableParallelism()), SLUICE_BENCH_TMP.
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { cleanupOnExit, commandLine, engineVersion, envInt, loadDriver, makeTempDir, median, record, round } from './lib.mjs';

const PER_BATCH = envInt('SLUICE_BENCH_EVICT_KEYS', 100_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 6);
const CORES = envInt('SLUICE_BENCH_CORES', availableParallelism());
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function run(driver, work, windows) {
  const { col, window } = driver;
  const session = await driver.Session.create({ conf: { 'sluice.executor.cores': CORES } });
  const total = windows + 2 + MEASURED;
  let q;
  try {
    q = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', PER_BATCH)
      .option('advanceMillisPerBatch', 60_000)
      .load()
      .withColumn('id', col('value'))
      .withWatermark('timestamp', `${windows} minutes`)
      .groupBy(window('timestamp', '1 minute'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName(`evict_${windows}`)
      .outputMode('append')
      .option('checkpointLocation', join(work, `ckpt-${windows}`))
      .start();
    while (q.recentProgress.length < total) {
      if (!q.isActive) throw q.exception ?? new Error('the query ended');
      await sleep(50);
    }
  } finally {
    if (q) await q.stop();
    await session.close();
  }
  const measured = q.recentProgress.slice(windows + 2, total);
  for (const p of measured) {
    const op = p.stateOperators[0];
    if (op.numRowsRemoved !== PER_BATCH) throw new Error(`batch ${p.batchId} evicted ${op.numRowsRemoved} keys, expected ${PER_BATCH}`);
  }
  return {
    windows,
    stateKeys: measured.map((p) => p.stateOperators[0].numRowsTotal),
    ms: measured.map((p) => p.durationMs.triggerExecution),
    commitMs: measured.map((p) => p.stateOperators[0].commitTimeMs),
  };
}

async function main() {
  const driver = await loadDriver();
  const work = makeTempDir('eviction');
  cleanupOnExit(work);
  const small = await run(driver, work, 10);
  console.log(`  state ${small.stateKeys[0]} keys: batches ${small.ms.join(', ')} ms`);
  const big = await run(driver, work, 50);
  console.log(`  state ${big.stateKeys[0]} keys: batches ${big.ms.join(', ')} ms`);
  const result = record({
    name: 'state-eviction-cost',
    unit: 'ms',
    value: median(big.ms),
    baseline: median(small.ms),
    ratio: round(median(big.ms) / median(small.ms), 3),
    params: {
      ratioIs: `median batch time (${PER_BATCH} keys created and ${PER_BATCH} evicted per batch), state of ${big.stateKeys[0]} / ${small.stateKeys[0]} keys; aim within 1.2`,
      big,
      small,
      slots: CORES,
      query: `rate-micro-batch(${PER_BATCH} rows, 1 minute a batch) -> withWatermark(timestamp, D minutes) -> groupBy(window(timestamp, 1 minute), value).count() -> memory sink, append`,
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      engine: engineVersion(),
    },
    command: commandLine(),
  });
  console.log(`\nstate-eviction-cost: ${result.value} vs ${result.baseline} ms -> ratio ${result.ratio} (${result.params.ratioIs})`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
