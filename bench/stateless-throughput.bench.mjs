// Stateless throughput: a file source -> filter + select -> JSON file sink query, run with
// Trigger.AvailableNow() over 2M JSON rows in 200 files, against a hand-written single-thread
// loop over the same files (read, split, JSON.parse, filter, JSON.stringify, write per file).
// Both sides run SLUICE_BENCH_REPS times, alternating; the figures are medians in rows/s.
//
// Knobs (environment): SLUICE_BENCH_ROWS (2000000), SLUICE_BENCH_FILES (200),
// SLUICE_BENCH_REPS (3), SLUICE_BENCH_CORES (os.availableParallelism()), SLUICE_BENCH_TMP.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, prng, envInt, loadDriver, makeTempDir, median, record, removeDir, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS', 2_000_000);
const FILES = envInt('SLUICE_BENCH_FILES', 200);
const REPS = envInt('SLUICE_BENCH_REPS', 3);
const CORES = envInt('SLUICE_BENCH_CORES', availableParallelism());
const V_RANGE = 1000; // v is uniform in [0, 1000)
const THRESHOLD = 499; // v > 499 keeps half of the rows
const SCHEMA = 'id STRING, v LONG, ts TIMESTAMP';

/** Writes ROWS rows over FILES files; returns the file paths and the number of rows with v > THRESHOLD. */
function generate(dir) {
  mkdirSync(dir, { recursive: true });
  const rand = prng(42);
  const base = Date.UTC(2024, 0, 1);
  const files = [];
  let expectedKept = 0;
  let row = 0;
  for (let f = 0; f < FILES; f++) {
    const n = Math.floor(ROWS / FILES) + (f < ROWS % FILES ? 1 : 0);
    const lines = new Array(n);
    for (let i = 0; i < n; i++, row++) {
      const id = `k${Math.floor(rand() * 100_000)}`;
      const v = Math.floor(rand() * V_RANGE);
      if (v > THRESHOLD) expectedKept++;
      lines[i] = JSON.stringify({ id, v, ts: new Date(base + row * 10).toISOString() });
    }
    const path = join(dir, `input-${String(f).padStart(5, '0')}.json`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    files.push(path);
  }
  return { files, expectedKept };
}

/** Counts the rows in a sink directory's part files (untimed check). */
function countOutputRows(dir) {
  let rows = 0;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('part-')) continue;
    const text = readFileSync(join(dir, name), 'utf8');
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) rows++;
    if (text.length > 0 && !text.endsWith('\n')) rows++;
  }
  return rows;
}

/** The baseline: one thread, one file at a time. Returns { ms, kept }. */
function runBaseline(files, outDir) {
  mkdirSync(outDir, { recursive: true });
  const t0 = performance.now();
  let kept = 0;
  for (let f = 0; f < files.length; f++) {
    const lines = readFileSync(files[f], 'utf8').split('\n');
    const out = [];
    for (const line of lines) {
      if (line.length === 0) continue;
      const r = JSON.parse(line);
      if (r.v > THRESHOLD) out.push(JSON.stringify({ id: r.id, v: r.v }));
    }
    writeFileSync(join(outDir, `part-${String(f).padStart(5, '0')}.json`), out.length ? `${out.join('\n')}\n` : '');
    kept += out.length;
  }
  return { ms: performance.now() - t0, kept };
}

/** One Sluice query over all files; the time is start() -> awaitTermination(). */
async function runSluice(driver, session, inDir, ckpt, outDir) {
  const { col, Trigger } = driver;
  const t0 = performance.now();
  const q = await session.readStream
    .format('json')
    .schema(SCHEMA)
    .option('maxFilesPerTrigger', FILES)
    .load(inDir)
    .filter(col('v').gt(THRESHOLD))
    .select(col('id'), col('v'))
    .writeStream.format('json')
    .option('checkpointLocation', ckpt)
    .trigger(Trigger.AvailableNow())
    .start(outDir);
  await q.awaitTermination();
  const ms = performance.now() - t0;
  const progress = q.recentProgress;
  const sum = (f) => progress.reduce((s, p) => s + (f(p) ?? 0), 0);
  return {
    ms,
    batches: progress.length,
    inputRows: sum((p) => p.numInputRows),
    outputRows: sum((p) => p.sink?.numOutputRows),
    triggerExecutionMs: sum((p) => p.durationMs?.triggerExecution),
    addBatchMs: sum((p) => p.durationMs?.addBatch),
  };
}

async function main() {
  const driver = await loadDriver();
  const work = makeTempDir('stateless');
  cleanupOnExit(work);
  const inDir = join(work, 'in');

  console.log(`generating ${ROWS} rows in ${FILES} files under ${work} ...`);
  const g0 = performance.now();
  const { files, expectedKept } = generate(inDir);
  console.log(`  done in ${((performance.now() - g0) / 1000).toFixed(1)} s; ${expectedKept} rows have v > ${THRESHOLD}`);

  const session = await driver.Session.create({ conf: { 'sluice.executor.cores': CORES } });
  const sluice = [];
  const baseline = [];
  try {
    for (let rep = 0; rep < REPS; rep++) {
      const bOut = join(work, `baseline-out-${rep}`);
      const b = runBaseline(files, bOut);
      if (b.kept !== expectedKept) throw new Error(`baseline kept ${b.kept} rows, expected ${expectedKept}`);
      removeDir(bOut);
      baseline.push(b);
      console.log(`  rep ${rep + 1}/${REPS} baseline: ${(b.ms / 1000).toFixed(2)} s = ${Math.round(ROWS / (b.ms / 1000))} rows/s`);

      const sOut = join(work, `sluice-out-${rep}`);
      const s = await runSluice(driver, session, inDir, join(work, `ckpt-${rep}`), sOut);
      const written = countOutputRows(sOut);
      if (s.inputRows !== ROWS) throw new Error(`Sluice read ${s.inputRows} rows, expected ${ROWS}`);
      if (written !== expectedKept || s.outputRows !== expectedKept) {
        throw new Error(`Sluice wrote ${written} rows (progress: ${s.outputRows}), expected ${expectedKept}`);
      }
      removeDir(sOut);
      removeDir(join(work, `ckpt-${rep}`));
      sluice.push(s);
      console.log(
        `  rep ${rep + 1}/${REPS} sluice:   ${(s.ms / 1000).toFixed(2)} s = ${Math.round(ROWS / (s.ms / 1000))} rows/s ` +
          `(${s.batches} batch(es), triggerExecution ${s.triggerExecutionMs} ms, addBatch ${s.addBatchMs} ms)`,
      );
    }
  } finally {
    await session.close();
  }

  const sluiceRate = median(sluice.map((s) => ROWS / (s.ms / 1000)));
  const baselineRate = median(baseline.map((b) => ROWS / (b.ms / 1000)));
  const ratio = sluiceRate / baselineRate;
  const result = record({
    name: 'stateless-throughput',
    unit: 'rows/s',
    value: Math.round(sluiceRate),
    baseline: Math.round(baselineRate),
    ratio: round(ratio, 3),
    params: {
      rows: ROWS,
      files: FILES,
      keptRows: expectedKept,
      reps: REPS,
      cores: CORES,
      'sluice.executor.cores': CORES,
      maxFilesPerTrigger: FILES,
      trigger: 'AvailableNow',
      batches: sluice[0].batches,
      query: `json(${SCHEMA}) -> filter(v > ${THRESHOLD}) -> select(id, v) -> json sink`,
      baseline: 'single-thread loop: readFileSync, split, JSON.parse, filter, JSON.stringify({id, v}), writeFileSync per file',
      // Each rep's pair ran back to back: the median of the pair ratios is less exposed to
      // load that changes during the run than the ratio of medians (`ratio`).
      pairRatios: sluice.map((s, i) => round(baseline[i].ms / s.ms, 3)),
      medianPairRatio: round(median(sluice.map((s, i) => baseline[i].ms / s.ms)), 3),
      sluiceSeconds: sluice.map((s) => round(s.ms / 1000, 3)),
      baselineSeconds: baseline.map((b) => round(b.ms / 1000, 3)),
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
    },
    command: commandLine(),
  });
  console.log(
    `\nstateless-throughput: sluice ${result.value} rows/s vs baseline ${result.baseline} rows/s ` +
      `(median of ${REPS}); ratio ${result.ratio} with ${CORES} core(s)`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
