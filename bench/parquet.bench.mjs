// Parquet: a scan against DuckDB's read_parquet, and the Parquet sink against the JSON sink, in the
// same run on the same data.
//
//   Input: 2M rows (id BIGINT, name VARCHAR of 1,000 values, value DOUBLE, ts TIMESTAMP, flag
//   BOOLEAN) in one snappy Parquet file written by DuckDB (row groups of 122,880 rows).
//   parquet-scan: Sluice readStream.format('parquet') -> noop sink, Trigger.AvailableNow(),
//     sluice.executor.cores = CORES (the file is read in row-group pieces by every slot), against
//     DuckDB (threads = CORES) materializing every column: CREATE TEMP TABLE AS SELECT * FROM
//     read_parquet(file). Ratio: Sluice rows/s / DuckDB rows/s.
//   parquet-sink: the same stream into the Parquet sink (snappy) and into the JSON sink, both one
//     file per task; ratio: Parquet rows/s / JSON rows/s. DuckDB reads the Parquet output back
//     and must count every row.
// Three runs of each, alternating; medians.
//
// Knobs (environment): SLUICE_BENCH_ROWS (2000000), SLUICE_BENCH_REPS (3), SLUICE_BENCH_CORES (2),
// SLUICE_BENCH_TMP.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, median, record, removeDir, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS', 2_000_000);
const REPS = envInt('SLUICE_BENCH_REPS', 3);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const LOAD_AT_START = loadavg()[0];

const { DuckDBInstance } = await import('@duckdb/node-api');
const { Session, Trigger } = await loadDriver();
const work = makeTempDir('parquet');
cleanupOnExit(work);
const input = join(work, 'in');
mkdirSync(input);
const file = join(input, 'data.parquet');

const duck = await (await DuckDBInstance.create(':memory:', { threads: String(CORES) })).connect();
console.log(`writing ${ROWS} rows to ${file} with DuckDB ...`);
await duck.run(
  `COPY (SELECT i::BIGINT AS id, 'name-' || (i % 1000) AS name, (i * 0.5)::DOUBLE AS value,
          make_timestamp(1700000000000000 + i * 10000) AS ts, i % 3 = 0 AS flag FROM range(${ROWS}) t(i))
   TO '${file}' (FORMAT parquet, COMPRESSION snappy)`,
);

async function duckScan() {
  const t0 = performance.now();
  await duck.run(`CREATE OR REPLACE TEMP TABLE scanned AS SELECT * FROM read_parquet('${file}')`);
  const ms = performance.now() - t0;
  const rows = Number((await duck.runAndReadAll('SELECT count(*) FROM scanned')).getRows()[0][0]);
  if (rows !== ROWS) throw new Error(`DuckDB scanned ${rows} rows`);
  return ms;
}

const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
const schema = session.read.parquet(input).schema;

/** Runs the Parquet stream into `format` (noop, parquet or json); returns ms and the rows read. */
async function sluice(format, rep) {
  const ckpt = join(work, `ckpt-${format}-${rep}`);
  const out = join(work, `out-${format}-${rep}`);
  const t0 = performance.now();
  const q = await session.readStream
    .schema(schema)
    .parquet(input)
    .writeStream.format(format)
    .option('checkpointLocation', ckpt)
    .trigger(Trigger.AvailableNow())
    .start(format === 'noop' ? undefined : out);
  await q.awaitTermination();
  const ms = performance.now() - t0;
  const rows = q.recentProgress.reduce((s, p) => s + p.numInputRows, 0);
  if (rows !== ROWS) throw new Error(`Sluice read ${rows} rows into ${format}`);
  if (format === 'parquet') {
    const back = Number((await duck.runAndReadAll(`SELECT count(*) FROM read_parquet('${out}/*.parquet')`)).getRows()[0][0]);
    if (back !== ROWS) throw new Error(`DuckDB reads ${back} rows from the Parquet sink`);
  }
  removeDir(ckpt);
  removeDir(out);
  return { ms, tasks: q.recentProgress[0]?.sources?.[0]?.numTasks };
}

const runs = { duck: [], scan: [], parquet: [], json: [] };
try {
  await sluice('noop', 'warm-up');
  for (let rep = 0; rep < REPS; rep++) {
    runs.duck.push(await duckScan());
    runs.scan.push((await sluice('noop', rep)).ms);
    runs.parquet.push((await sluice('parquet', rep)).ms);
    runs.json.push((await sluice('json', rep)).ms);
    console.log(
      `  rep ${rep + 1}/${REPS}: DuckDB scan ${runs.duck.at(-1).toFixed(0)} ms, Sluice scan ${runs.scan.at(-1).toFixed(0)} ms, ` +
        `Parquet sink ${runs.parquet.at(-1).toFixed(0)} ms, JSON sink ${runs.json.at(-1).toFixed(0)} ms`,
    );
  }
} finally {
  await session.close();
}

const rate = (ms) => Math.round(ROWS / (median(ms) / 1000));
const common = {
  rows: ROWS,
  cores: CORES,
  reps: REPS,
  file: 'one snappy file by DuckDB: id BIGINT, name VARCHAR (1,000 values), value DOUBLE, ts TIMESTAMP, flag BOOLEAN',
  ...machineFacts(LOAD_AT_START),
};
const scan = record({
  name: 'parquet-scan-vs-duckdb',
  unit: 'rows/s',
  value: rate(runs.scan),
  baseline: rate(runs.duck),
  ratio: round(rate(runs.scan) / rate(runs.duck), 3),
  params: {
    ratioIs: `Sluice ${CORES} slots (readStream parquet -> noop, AvailableNow) / DuckDB ${CORES} threads (CREATE TEMP TABLE AS SELECT * FROM read_parquet), rows/s, medians`,
    sluiceMs: runs.scan.map((m) => Math.round(m)),
    duckdbMs: runs.duck.map((m) => Math.round(m)),
    ...common,
  },
  command: commandLine(),
});
const sink = record({
  name: 'parquet-sink-vs-json-sink',
  unit: 'rows/s',
  value: rate(runs.parquet),
  baseline: rate(runs.json),
  ratio: round(rate(runs.parquet) / rate(runs.json), 3),
  params: {
    ratioIs: 'Parquet sink (snappy) / JSON sink, rows/s of the same Parquet stream, medians',
    parquetMs: runs.parquet.map((m) => Math.round(m)),
    jsonMs: runs.json.map((m) => Math.round(m)),
    ...common,
  },
  command: commandLine(),
});
console.log(`\nparquet-scan-vs-duckdb: ${scan.value} vs ${scan.baseline} rows/s -> ${scan.ratio}`);
console.log(`parquet-sink-vs-json-sink: ${sink.value} vs ${sink.baseline} rows/s -> ${sink.ratio}`);
