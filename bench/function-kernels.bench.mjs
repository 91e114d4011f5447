// Column kernels of the common table functions against the row evaluator they replace. Each of
// split, regexp_extract, date_format, to_timestamp, from_json (on a declared schema) and hash
// runs over the same column batches: once through the column path (compileColumnExpr: a loop over
// the vector, once per distinct string of a string column's dictionary) and once as the column
// path ran a function before, the row evaluator over a reused row per value (the baseline).
// Batches are BATCH_ROWS rows of generated event data: a log line of ~1000 distinct texts, a
// timestamp, a JSON payload and a date text, each of ~1000 distinct texts. Rounds alternate the two sides; medians.
//
// Knobs (environment): SLUICE_BENCH_ROWS (1,000,000), SLUICE_BENCH_ROUNDS (5), SLUICE_BENCH_DISTINCT
// (1000: the distinct texts of each column; the number of rows makes every text distinct).
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { commandLine, envInt, median, record, round, ROOT_DIR } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS', 1_000_000);
const ROUNDS = envInt('SLUICE_BENCH_ROUNDS', 5);
const DISTINCT = envInt('SLUICE_BENCH_DISTINCT', 1000);
const dist = (p) => import(pathToFileURL(join(ROOT_DIR, 'packages/executor/dist', p)).href);
const { compileColumnExpr } = await dist('columns/columnExpr.js');
const { compileExpr } = await dist('expressions/compileExpr.js');
const { batchFromRows, valueAt, VectorBuilder } = await dist('columns/vectors.js');
const { BATCH_ROWS } = await dist('columns/columnSources.js');
const { exprType } = await dist('expressions/exprTypes.js');

const schema = [
  { name: 'line', type: 'string', nullable: true },
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'payload', type: 'string', nullable: true },
  { name: 'at', type: 'string', nullable: true },
];
const lit = (value, type) => ({ op: 'lit', value, type });
const col = (name) => ({ op: 'col', name });
const call = (fn, ...args) => ({ op: 'call', fn, args });
const EXPRS = {
  split: call('split', col('line'), lit(' ', 'string')),
  regexp_extract: call('regexp_extract', col('line'), lit('user-(\\d+)', 'string'), lit(1, 'int')),
  date_format: call('date_format', col('ts'), lit('yyyy-MM-dd HH:mm', 'string')),
  to_timestamp: call('to_timestamp', col('at'), lit('dd/MM/yyyy HH:mm:ss', 'string')),
  from_json: call('from_json', col('payload'), lit('item STRING, qty INT, tags ARRAY<STRING>', 'string')),
  hash: call('hash', col('line')),
};

const T0 = Date.UTC(2024, 0, 1);
const p2 = (n) => String(n).padStart(2, '0');
const dmy = (ms) => {
  const d = new Date(ms);
  return `${p2(d.getUTCDate())}/${p2(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
};
const batches = [];
for (let lo = 0; lo < ROWS; lo += BATCH_ROWS) {
  const rows = [];
  for (let i = lo; i < Math.min(ROWS, lo + BATCH_ROWS); i++) {
    const k = (i * 7919) % DISTINCT;
    rows.push({
      line: `user-${k} clicked /page/${k % 37}`,
      ts: T0 + i * 1000,
      payload: JSON.stringify({ item: `sku${k}`, qty: k % 9, tags: ['a', `t${k % 5}`] }),
      at: dmy(T0 + k * 1000),
    });
  }
  batches.push(batchFromRows(rows, schema));
}

/** The row evaluator over a reused row per value: the column path's fallback for calls before the kernels. */
function viaRows(expr) {
  const ev = compileExpr(expr, schema);
  const type = exprType(expr, schema);
  return (batch) => {
    const vectors = schema.map((f) => batch.columns.get(f.name));
    const row = {};
    const out = new VectorBuilder(type, batch.length);
    for (let i = 0; i < batch.length; i++) {
      for (let j = 0; j < schema.length; j++) row[schema[j].name] = valueAt(vectors[j], i);
      out.push(ev(row));
    }
    return out.build();
  };
}

const timed = (fn) => {
  const t0 = performance.now();
  let n = 0;
  for (const b of batches) n += fn(b).length;
  if (n !== ROWS) throw new Error(`expected ${ROWS} values, got ${n}`);
  return performance.now() - t0;
};

const perFunction = {};
const ratios = [];
for (const [name, expr] of Object.entries(EXPRS)) {
  const kernel = compileColumnExpr(expr, schema);
  const rows = viaRows(expr);
  // Both sides give the same values.
  const a = kernel(batches[0]);
  const b = rows(batches[0]);
  for (let i = 0; i < a.length; i++) if (JSON.stringify(valueAt(a, i)) !== JSON.stringify(valueAt(b, i))) throw new Error(`${name}: row ${i} differs`);
  const k = [];
  const r = [];
  for (let round_ = 0; round_ < ROUNDS; round_++) {
    k.push(timed(kernel));
    r.push(timed(rows));
  }
  const kernelRate = ROWS / (median(k) / 1000);
  const rowRate = ROWS / (median(r) / 1000);
  perFunction[name] = { kernelRowsPerSec: Math.round(kernelRate), rowEvaluatorRowsPerSec: Math.round(rowRate), ratio: round(kernelRate / rowRate, 2) };
  ratios.push(kernelRate / rowRate);
  console.log(`${name}: ${Math.round(kernelRate)} rows/s vs ${Math.round(rowRate)} rows/s on the row evaluator (x${round(kernelRate / rowRate, 2)})`);
}
const geo = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) / ratios.length);
record({
  name: DISTINCT >= ROWS ? 'function-kernels-distinct' : 'function-kernels',
  unit: 'ratio',
  value: round(geo, 2),
  baseline: 1,
  ratio: round(geo, 2),
  params: { rows: ROWS, rounds: ROUNDS, distinct: DISTINCT, batchRows: BATCH_ROWS, perFunction },
  command: commandLine(),
});
