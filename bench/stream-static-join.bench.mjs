// Stream-static join: a stream joined against a 100k-row static table, against a hand-written
// Map-lookup loop over the same rows in the same run.
//
//   rate-micro-batch (rowsPerBatch 500,000) .select(value % 200000 as id, value)
//     .join(static JSON table of 100,000 rows {id, name}, 'id')  (inner: half the rows match)
//     -> foreachBatch counting the rows it gets;   2 warm-up batches, then 10 measured.
//
// Sluice's rate is sum(numInputRows) / sum(batchDuration) over the measured batches. The baseline,
// on the main thread: per batch, the rows as objects {id, value}, then for each a Map.get on the
// id and, on a match, a new row {id, value, name} pushed to an output array, the same rows the
// sink gets. It runs three times (before, between and after two Sluice runs); median.
//
// Knobs (environment): SLUICE_BENCH_ROWS_PER_BATCH (500000), SLUICE_BENCH_BATCHES (10),
// SLUICE_BENCH_TABLE_ROWS (100000), SLUICE_BENCH_CORES (2), SLUICE_BENCH_TMP.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, median, record, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS_PER_BATCH', 500_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 10);
const TABLE = envInt('SLUICE_BENCH_TABLE_ROWS', 100_000);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const WARMUP = 2;
const KEYS = 2 * TABLE;
const LOAD_AT_START = loadavg()[0];

const { Session, col } = await loadDriver();
const tmp = makeTempDir('join');
cleanupOnExit(tmp);
const tableDir = join(tmp, 'names');
mkdirSync(tableDir);
const names = Array.from({ length: TABLE }, (_, id) => ({ id, name: `name-${id}` }));
writeFileSync(join(tableDir, 'names.json'), `${names.map((r) => JSON.stringify(r)).join('\n')}\n`);

function baseline() {
  const index = new Map(names.map((r) => [r.id, r]));
  const ms = [];
  let matched = 0;
  for (let b = 0; b < WARMUP + MEASURED; b++) {
    const t0 = performance.now();
    const rows = new Array(ROWS);
    for (let i = 0; i < ROWS; i++) {
      const value = b * ROWS + i;
      rows[i] = { id: value % KEYS, value };
    }
    const out = [];
    for (const r of rows) {
      const m = index.get(r.id);
      if (m !== undefined) out.push({ id: r.id, value: r.value, name: m.name });
    }
    matched += out.length;
    if (b >= WARMUP) ms.push(performance.now() - t0);
  }
  return { rowsPerSec: (ROWS * MEASURED * 1000) / ms.reduce((a, b) => a + b, 0), matched };
}

async function sluice() {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  let matched = 0;
  try {
    const q = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', ROWS)
      .load()
      .select(col('value').mod(KEYS).alias('id'), col('value'))
      .join(session.read.format('json').schema('id LONG, name STRING').load(tableDir), 'id')
      .writeStream.foreachBatch((rows) => {
        matched += rows.length;
      })
      .option('checkpointLocation', join(tmp, `ckpt-${Date.now()}`))
      .start();
    while ((q.lastProgress?.batchId ?? -1) < WARMUP + MEASURED - 1) {
      if (q.exception) throw q.exception;
      await new Promise((r) => setTimeout(r, 5));
    }
    await q.stop();
    const measured = q.recentProgress.filter((p) => p.batchId >= WARMUP && p.batchId < WARMUP + MEASURED);
    const rows = measured.reduce((n, p) => n + p.numInputRows, 0);
    const ms = measured.reduce((n, p) => n + p.batchDuration, 0);
    return { rowsPerSec: (rows * 1000) / ms, medianBatchMs: median(measured.map((p) => p.batchDuration)), matched };
  } finally {
    await session.close();
  }
}

const base = [baseline()];
const runs = [await sluice()];
base.push(baseline());
runs.push(await sluice());
base.push(baseline());
for (const r of [...base, ...runs]) console.log(r);
// Half the keys are in the table: every run must have joined half its rows (the warm-up batches included for Sluice).
for (const r of base) if (r.matched !== ((WARMUP + MEASURED) * ROWS) / 2) throw new Error(`baseline joined ${r.matched} rows`);
const sluiceRate = median(runs.map((r) => r.rowsPerSec));
const baseRate = median(base.map((r) => r.rowsPerSec));
record({
  name: 'stream-static-join',
  unit: 'rows/s',
  value: Math.round(sluiceRate),
  baseline: Math.round(baseRate),
  ratio: round(sluiceRate / baseRate, 3),
  params: {
    ratioIs: `Sluice ${CORES} slots / main-thread Map-lookup loop, input rows per second`,
    query: `rate-micro-batch(${ROWS} rows) -> select(value % ${KEYS} as id, value) -> join(static JSON table of ${TABLE} rows {id, name}, 'id') -> foreachBatch`,
    sluiceRuns: runs.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs })),
    baselineRuns: base.map((r) => Math.round(r.rowsPerSec)),
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
