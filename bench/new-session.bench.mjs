// What a new session costs before its first row: the time from `Session.create` to the row of a
// one-row query in the memory sink (then the session closes), and the time to import
// @sluice/driver in a fresh process. Baselines, in the same run and alternating with it:
//   - session-first-query: a bare piscina pool started and given one no-op task (a worker
//     thread's own start and one round trip, the floor of any session);
//   - driver-import: a fresh `node` that imports nothing (Node's own start).
//
// Knobs (environment): SLUICE_BENCH_SESSIONS (40 sessions, and as many baseline pools),
// SLUICE_BENCH_IMPORTS (15 child processes of each kind).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT_DIR, cleanupOnExit, commandLine, envInt, loadDriver, loadPiscina, makeTempDir, median, record, round } from './lib.mjs';

const SESSIONS = envInt('SLUICE_BENCH_SESSIONS', 40);
const IMPORTS = envInt('SLUICE_BENCH_IMPORTS', 15);
const WARMUP = 3;

const { Session } = await loadDriver();
const Piscina = await loadPiscina();
const tmp = makeTempDir('new-session');
cleanupOnExit(tmp);
const noop = join(tmp, 'noop.cjs');
writeFileSync(noop, 'module.exports = async (x) => x;\n');

/** ms from Session.create to the one row in the memory sink. */
async function firstQuery(i) {
  const t0 = performance.now();
  const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
  try {
    session.memoryStream('first', 'v LONG').addData([{ v: i }]);
    const q = await session.readStream.format('memory').load('first').writeStream.format('memory').queryName('first_out').start();
    await q.processAllAvailable();
    const rows = await session.memoryTable('first_out');
    if (rows.length !== 1 || rows[0].v !== i) throw new Error(`session ${i}: got ${JSON.stringify(rows)}`);
    return performance.now() - t0;
  } finally {
    await session.close();
  }
}

/** ms from a new one-thread pool to its first task's result. */
async function bareWorker(i) {
  const t0 = performance.now();
  const pool = new Piscina({ filename: noop, minThreads: 1, maxThreads: 1 });
  try {
    if ((await pool.run(i)) !== i) throw new Error('the no-op task answered wrong');
    return performance.now() - t0;
  } finally {
    await pool.destroy();
  }
}

/** ms a fresh node process takes to run `code` to its end. */
function child(code) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT_DIR, timeout: 60_000 });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return performance.now() - t0;
}

const sessions = [];
const pools = [];
for (let i = 0; i < WARMUP + SESSIONS; i++) {
  const s = await firstQuery(i);
  const p = await bareWorker(i);
  if (i >= WARMUP) {
    sessions.push(s);
    pools.push(p);
  }
}
const imports = [];
const bare = [];
for (let i = 0; i < IMPORTS; i++) {
  imports.push(child("await import('@sluice/driver');"));
  bare.push(child('0;'));
}

const command = commandLine();
const first = { s: median(sessions), p: median(pools) };
const imp = { d: median(imports), b: median(bare) };
const params = `sessions=${SESSIONS} imports=${IMPORTS} cores=2`;
record({ name: 'session-first-query', unit: 'ms', value: round(first.s, 1), baseline: round(first.p, 1), ratio: round(first.s / first.p, 2), params, command });
record({ name: 'driver-import', unit: 'ms', value: round(imp.d, 1), baseline: round(imp.b, 1), ratio: round(imp.d / imp.b, 2), params, command });
console.log(
  `new session, create to first row (median of ${SESSIONS}): ${round(first.s, 1)} ms; a bare worker's first task: ${round(first.p, 1)} ms (ratio ${round(first.s / first.p, 2)})`,
);
console.log(
  `node importing @sluice/driver (median of ${IMPORTS}): ${round(imp.d, 1)} ms; node alone: ${round(imp.b, 1)} ms (ratio ${round(imp.d / imp.b, 2)})`,
);
