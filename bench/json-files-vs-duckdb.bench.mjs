// The seed query over JSON files against DuckDB on the same files, with the same thread count, in
// the same run.
//
//   2M JSON-lines rows {"id": <0..9999>, "timestamp": "<ISO>"} in 200 files, event times 2 ms apart
//   with up to 5 minutes of disorder (generated untimed, seeded).
//   Sluice: json source (id BIGINT, timestamp TIMESTAMP), maxFilesPerTrigger 200 (one batch),
//     withWatermark(timestamp, 10 minutes), groupBy(window(timestamp, 5 minutes), id).count(),
//     memory sink, update mode, Trigger.AvailableNow(), sluice.executor.cores = CORES; the time is
//     start() -> awaitTermination().
//   DuckDB (@duckdb/node-api, threads = CORES): read_json over the same files with the same
//     columns, GROUP BY the 5-minute bucket and id, count(*); the time is the query.
//   A naive single-thread JS loop (readFileSync, split, JSON.parse, Map by `${bucket},${id}`) is in
//   params for reference.
// Three runs of each, alternating; medians. All three must find the same groups and counts.
//
// Knobs (environment): SLUICE_BENCH_ROWS (2000000), SLUICE_BENCH_FILES (200), SLUICE_BENCH_IDS
// (10000), SLUICE_BENCH_REPS (3), SLUICE_BENCH_CORES (os.availableParallelism()), SLUICE_BENCH_TMP.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, prng, engineVersion, envInt, loadDriver, makeTempDir, median, record, removeDir, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS', 2_000_000);
const FILES = envInt('SLUICE_BENCH_FILES', 200);
const IDS = envInt('SLUICE_BENCH_IDS', 10_000);
const REPS = envInt('SLUICE_BENCH_REPS', 3);
const CORES = envInt('SLUICE_BENCH_CORES', availableParallelism());
const WINDOW_MS = 5 * 60_000;
const DISORDER_MS = 5 * 60_000;
const BASE = Date.UTC(2024, 0, 1);

function generate(dir) {
  mkdirSync(dir, { recursive: true });
  const rand = prng(7);
  let row = 0;
  for (let f = 0; f < FILES; f++) {
    const n = Math.floor(ROWS / FILES) + (f < ROWS % FILES ? 1 : 0);
    const lines = new Array(n);
    for (let i = 0; i < n; i++, row++) {
      const t = BASE + row * 2 - Math.floor(rand() * DISORDER_MS);
      lines[i] = JSON.stringify({ id: Math.floor(rand() * IDS), timestamp: new Date(t).toISOString() });
    }
    writeFileSync(join(dir, `input-${String(f).padStart(5, '0')}.json`), `${lines.join('\n')}\n`);
  }
}

/** Groups as `${windowStart},${id}` -> count, the common form of every side's result. */
function naive(dir) {
  const t0 = performance.now();
  const groups = new Map();
  for (let f = 0; f < FILES; f++) {
    const text = readFileSync(join(dir, `input-${String(f).padStart(5, '0')}.json`), 'utf8');
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      const r = JSON.parse(line);
      const t = Date.parse(r.timestamp);
      const key = `${t - (t % WINDOW_MS)},${r.id}`;
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
  }
  return { ms: performance.now() - t0, groups };
}

async function duck(con, dir) {
  const t0 = performance.now();
  const reader = await con.runAndReadAll(
    `SELECT (epoch_ms(timestamp) // ${WINDOW_MS}) * ${WINDOW_MS} AS w, id, count(*) AS c
       FROM read_json('${join(dir, '*.json')}', format = 'newline_delimited', columns = {id: 'BIGINT', timestamp: 'TIMESTAMP'})
      GROUP BY ALL`,
  );
  const rows = reader.getRows();
  const ms = performance.now() - t0;
  const groups = new Map(rows.map(([w, id, c]) => [`${Number(w)},${Number(id)}`, Number(c)]));
  return { ms, groups };
}

async function sluice(driver, session, dir, ckpt, rep) {
  const { col, window, Trigger } = driver;
  const name = `seed_json_${rep}`;
  const t0 = performance.now();
  const q = await session.readStream
    .format('json')
    .schema('id BIGINT, timestamp TIMESTAMP')
    .option('maxFilesPerTrigger', FILES)
    .load(dir)
    .withWatermark('timestamp', '10 minutes')
    .groupBy(window(col('timestamp'), '5 minutes'), 'id')
    .count()
    .writeStream.format('memory')
    .queryName(name)
    .outputMode('update')
    .option('checkpointLocation', ckpt)
    .trigger(Trigger.AvailableNow())
    .start();
  await q.awaitTermination();
  const ms = performance.now() - t0;
  const rows = await session.memoryTable(name);
  const groups = new Map(rows.map((r) => [`${r.window.start.getTime()},${r.id}`, r.count]));
  const p = q.recentProgress;
  return { ms, groups, batches: p.length, inputRows: p.reduce((s, x) => s + x.numInputRows, 0), durationMs: p[0]?.durationMs };
}

function sameGroups(a, b, what) {
  if (a.size !== b.size) throw new Error(`${what}: ${a.size} groups against ${b.size}`);
  for (const [k, v] of a) if (b.get(k) !== v) throw new Error(`${what}: group ${k} counts ${v} against ${b.get(k)}`);
}

async function main() {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const driver = await loadDriver();
  const work = makeTempDir('json-duckdb');
  cleanupOnExit(work);
  const dir = join(work, 'in');
  console.log(`generating ${ROWS} rows (${IDS} ids) in ${FILES} files under ${work} ...`);
  generate(dir);
  const instance = await DuckDBInstance.create(':memory:', { threads: String(CORES) });
  const con = await instance.connect();
  const session = await driver.Session.create({ conf: { 'sluice.executor.cores': CORES } });
  const runs = { sluice: [], duck: [], naive: [] };
  try {
    for (let rep = 0; rep < REPS; rep++) {
      const d = await duck(con, dir);
      const s = await sluice(driver, session, dir, join(work, `ckpt-${rep}`), rep);
      removeDir(join(work, `ckpt-${rep}`));
      const n = naive(dir);
      if (s.inputRows !== ROWS) throw new Error(`Sluice read ${s.inputRows} rows, expected ${ROWS}`);
      sameGroups(s.groups, d.groups, 'Sluice vs DuckDB');
      sameGroups(n.groups, d.groups, 'naive loop vs DuckDB');
      runs.duck.push(d.ms);
      runs.sluice.push(s.ms);
      runs.naive.push(n.ms);
      console.log(
        `  rep ${rep + 1}/${REPS}: sluice ${(s.ms / 1000).toFixed(2)} s (${s.batches} batch, addBatch ${s.durationMs?.addBatch} ms), ` +
          `duckdb ${(d.ms / 1000).toFixed(2)} s, naive ${(n.ms / 1000).toFixed(2)} s; ${d.groups.size} groups`,
      );
    }
  } finally {
    await session.close();
    con.closeSync?.();
  }
  const rate = (ms) => ROWS / (median(ms) / 1000);
  const result = record({
    name: 'json-files-vs-duckdb',
    unit: 'rows/s',
    value: Math.round(rate(runs.sluice)),
    baseline: Math.round(rate(runs.duck)),
    ratio: round(rate(runs.sluice) / rate(runs.duck), 3),
    params: {
      ratioIs: `Sluice ${CORES} slots / DuckDB ${CORES} threads, rows/s (medians of ${REPS})`,
      vsNaive: round(rate(runs.sluice) / rate(runs.naive), 3),
      naiveRowsPerSec: Math.round(rate(runs.naive)),
      rows: ROWS,
      files: FILES,
      ids: IDS,
      cores: CORES,
      query:
        'json(id BIGINT, timestamp TIMESTAMP) -> withWatermark(timestamp, 10 minutes) -> groupBy(window(timestamp, 5 minutes), id).count() -> memory sink, update, AvailableNow, maxFilesPerTrigger 200',
      duckdb: `read_json(newline_delimited, columns id BIGINT, timestamp TIMESTAMP) GROUP BY 5-minute bucket, id; threads ${CORES}`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the description quotes the naive loop's key expression
      naive: 'one thread: readFileSync, split, JSON.parse, Date.parse, Map by `${bucket},${id}`',
      sluiceSeconds: runs.sluice.map((m) => round(m / 1000, 3)),
      duckdbSeconds: runs.duck.map((m) => round(m / 1000, 3)),
      naiveSeconds: runs.naive.map((m) => round(m / 1000, 3)),
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      engine: engineVersion(),
    },
    command: commandLine(),
  });
  console.log(
    `\njson-files-vs-duckdb: sluice ${result.value} rows/s vs duckdb ${result.baseline} rows/s -> ratio ${result.ratio} (naive loop: ${result.params.naiveRowsPerSec} rows/s)`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
