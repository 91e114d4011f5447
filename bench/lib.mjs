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
export const RESULTS_MD = join(BENCH_DIR, 'RESULTS.md');

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

/**
 * Writes `bench/results/<name>.json` with exactly the keys name, unit, value, baseline, ratio,
 * params, command, and appends one row to `bench/RESULTS.md` (creating its table header).
 */
export function record({ name, unit, value, baseline, ratio, params, command }) {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`bad result name ${name}`);
  const result = { name, unit, value, baseline, ratio, params, command };
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${name}.json`), JSON.stringify(result, null, 2) + '\n');

  const hasHeader = existsSync(RESULTS_MD) && readFileSync(RESULTS_MD, 'utf8').includes('| date | name |');
  if (!hasHeader) {
    const prefix = existsSync(RESULTS_MD) && readFileSync(RESULTS_MD, 'utf8').length > 0 ? '\n' : '# Benchmark results\n\nOne row per run, appended by `bench/lib.mjs`. `ratio` compares Sluice with the baseline measured in the same run (see bench/README.md for its direction per benchmark).\n\n';
    appendFileSync(RESULTS_MD, prefix + HEADER);
  }
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const row = [date, name, value, baseline, unit, ratio, params, command].map(cell).join(' | ');
  appendFileSync(RESULTS_MD, `| ${row} |\n`);
  return result;
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
