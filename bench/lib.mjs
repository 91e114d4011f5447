// Shared helpers of the benchmark suite: statistics, temp dirs, module resolution and result
// recording. Machines here are shared and noisy: benchmarks report medians and ratios against a
// baseline measured in the same run, never single absolute times.
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT_DIR = dirname(BENCH_DIR);
export const RESULTS_DIR = join(BENCH_DIR, 'results');
/** The summary: the latest figure of each result name, regenerated from the history at each record. */
export const RESULTS_MD = join(BENCH_DIR, 'RESULTS.md');
/** Every run's row, appended. */
export const HISTORY_MD = join(RESULTS_DIR, 'history.md');

/** mulberry32: a small seeded PRNG, so every run reads the same data. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Median of a list of numbers (the mean of the two middle values for an even count). */
export function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The p-th percentile (0..100), linear interpolation between closest ranks. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo] + (s[hi] - s[lo]) * (rank - lo);
}

/** Rounds to `digits` significant decimals for display and results. */
export function round(x, digits = 3) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A fresh temporary directory; `SLUICE_BENCH_TMP` chooses where (default: the OS temp dir). */
export function makeTempDir(prefix) {
  const base = process.env.SLUICE_BENCH_TMP || tmpdir();
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, `sluice-bench-${prefix}-`));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** Removes `dir` when the process ends, also on Ctrl-C or an uncaught error. */
export function cleanupOnExit(dir) {
  const clean = () => removeDir(dir);
  process.once('exit', clean);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      clean();
      process.exit(130);
    });
  }
}

/** `@sluice/driver`, loaded lazily so a missing build gives a clear message. */
export async function loadDriver() {
  try {
    return await import('@sluice/driver');
  } catch (e) {
    throw new Error(`cannot load @sluice/driver (${e.message}); run \`pnpm build\` first`);
  }
}

/** piscina, resolved through packages/driver (where it is a dependency). */
export async function loadPiscina() {
  const req = createRequire(join(ROOT_DIR, 'packages', 'driver', 'package.json'));
  const mod = await import(pathToFileURL(req.resolve('piscina')).href);
  return mod.Piscina ?? mod.default?.Piscina ?? mod.default;
}

/** Reads a positive integer from the environment, with a default. */
export function envInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

/**
 * The command that reproduces this run: `node bench/<file>`, prefixed by the `SLUICE_BENCH_*`
 * variables that were set (they change sizes and repetitions).
 */
export function commandLine() {
  const script = relative(ROOT_DIR, process.argv[1]);
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('SLUICE_BENCH_') && k !== 'SLUICE_BENCH_TMP')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v} `)
    .join('');
  return `${env}node ${script}`;
}

const HEADER = '| date | name | value | baseline | unit | ratio | params | command |\n|---|---|---|---|---|---|---|---|\n';

function cell(v) {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return String(s).replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** The cells of a history row (the separators escaped in a cell stay in it). */
function cellsOf(line) {
  return line
    .slice(2, -2)
    .split(/(?<!\\) \| /)
    .map((c) => c.replaceAll('\\|', '|'));
}

/**
 * Writes `bench/results/<name>.json` with exactly the keys name, unit, value, baseline, ratio,
 * params, command, appends one row to `bench/results/history.md` (creating its table header),
 * and regenerates the summary `bench/RESULTS.md` from the history: the latest row of each name.
 */
export function record({ name, unit, value, baseline, ratio, params, command }) {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`bad result name ${name}`);
  const result = { name, unit, value, baseline, ratio, params, command };
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  if (!existsSync(HISTORY_MD) || !readFileSync(HISTORY_MD, 'utf8').includes('| date | name |')) {
    appendFileSync(
      HISTORY_MD,
      `# Benchmark history\n\nOne row per run, appended by \`bench/lib.mjs\`; \`bench/RESULTS.md\` shows the latest of each name.\n\n${HEADER}`,
    );
  }
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const row = [date, name, value, baseline, unit, ratio, params, command].map(cell).join(' | ');
  appendFileSync(HISTORY_MD, `| ${row} |\n`);
  writeSummary();
  return result;
}

/** `bench/RESULTS.md`: per result name, its latest run in the history (date, figure, baseline, ratio, command). */
export function writeSummary() {
  const latest = new Map();
  for (const line of readFileSync(HISTORY_MD, 'utf8').split('\n')) {
    if (!line.startsWith('| 20')) continue;
    const [date, name, value, baseline, unit, ratio, , command] = cellsOf(line);
    const had = latest.get(name);
    if (!had || had.date <= date) latest.set(name, { date, name, value, baseline, unit, ratio, command });
  }
  const rows = [...latest.values()].sort((a, b) => a.name.localeCompare(b.name));
  const text =
    '# Benchmark results\n\n' +
    'The latest figure of each benchmark, beside its baseline measured in the same run (`ratio`: see bench/README.md for its direction), ' +
    'with the command that reproduces it. Every run, with its parameters, is in `bench/results/history.md`; the latest run of each in `bench/results/<name>.json`.\n\n' +
    '| benchmark | date | value | baseline | unit | ratio | command |\n|---|---|---|---|---|---|---|\n' +
    rows.map((r) => `| ${[r.name, r.date, r.value, r.baseline, r.unit, r.ratio, r.command].map(cell).join(' | ')} |`).join('\n') +
    '\n';
  writeFileSync(RESULTS_MD, text);
}

/**
 * The engine version a figure belongs to: the git commit and the uncommitted files under packages/
 * (a run on a working tree being edited is then recognisable in the results). Read-only git calls.
 */
export function engineVersion() {
  const git = (args) => {
    try {
      return execFileSync('git', args, { cwd: ROOT_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const dirty = git(['status', '--porcelain', '--', 'packages']).split('\n').filter(Boolean).length;
  return { commit: git(['rev-parse', '--short=12', 'HEAD']) || 'unknown', uncommittedPackageFiles: dirty };
}

/**
 * Where a figure was measured: the CPU, Node, the engine version, and the load average when the
 * run started (`loadAtStart`, loadavg()[0] read then) and now.
 */
export function machineFacts(loadAtStart) {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cpus: cpus().length,
    node: process.version,
    engine: engineVersion(),
    loadavg: [round(loadAtStart, 2), round(loadavg()[0], 2)],
  };
}

/**
 * Runs `query` until it has made `warmup + measured` data batches, stops it, and measures the
 * measured ones: input rows per second over their batchDuration, the no-data batches between them
 * counted in (they are part of the work), the median data batch time, and the last data batch.
 */
export async function measureDataBatches(q, warmup, measured) {
  const dataBatches = () => q.recentProgress.filter((p) => p.numInputRows > 0);
  while (dataBatches().length < warmup + measured) {
    if (q.exception) throw q.exception;
    await new Promise((r) => setTimeout(r, 5));
  }
  await q.stop();
  const data = dataBatches().slice(warmup, warmup + measured);
  const within = q.recentProgress.filter((p) => p.batchId >= data[0].batchId && p.batchId <= data.at(-1).batchId);
  const rows = within.reduce((n, p) => n + p.numInputRows, 0);
  const ms = within.reduce((n, p) => n + p.batchDuration, 0);
  return { rowsPerSec: (rows * 1000) / ms, medianBatchMs: median(data.map((p) => p.batchDuration)), last: data.at(-1) };
}
