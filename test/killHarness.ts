/**
 * Shared harness of the crash tests (kill, stateful-kill, transform-with-state-kill, nexmark-kill
 * and redis): runs a query in a child
 * process (a fixture script taking `<inputDir> <outputDir> <checkpointDir>` and printing `STARTED`,
 * `BATCH <id>` per committed batch and `DONE <lastBatchId>`), SIGKILLs it at a chosen moment or
 * lets SLUICE_FAULT kill it at a fault point, restarts it on the same checkpoint, and inspects the
 * checkpoint and sink logs it leaves behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { readSinkJson, sinkManifestFiles, tempDir } from './helpers.js';

/** A child that runs longer than this is hung (e.g. it did not exit after session.close()). */
export const CHILD_TIME_LIMIT_MS = 60_000;

export interface ChildDirs {
  input: string;
  out: string;
  ckpt: string;
}

// ---- checkpoint and sink inspection --------------------------------------------------------------

/** Batch ids of a log directory; temp files of an interrupted write are not entries. */
export function logIds(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
}

export interface LogState {
  offsets: number[];
  commits: number[];
  manifests: number[];
}

export function logState(ckpt: string, out: string): LogState {
  return {
    offsets: logIds(join(ckpt, 'offsets')),
    commits: logIds(join(ckpt, 'commits')),
    manifests: logIds(join(out, '_sluice_metadata')),
  };
}

/** Rows committed to a JSON sink so far, read through its manifests (none before the first). */
export function committedRows(out: string): Array<Record<string, unknown>> {
  return existsSync(join(out, '_sluice_metadata')) ? readSinkJson(out) : [];
}

/** How many rows a file sink's manifests list so far (any format). */
export function committedRowCount(out: string): number {
  return existsSync(join(out, '_sluice_metadata')) ? sinkManifestFiles(out).reduce((n, f) => n + f.rows, 0) : 0;
}

// ---- the child process ---------------------------------------------------------------------------

export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit, and to the STARTED line (the query is running) if it came. */
  ms: number;
  startedMs: number | undefined;
  /** From spawn to each `BATCH <id>` line (a committed batch). */
  batchMs: number[];
}

/**
 * When to SIGKILL a child: `afterMs` after the spawn, after its STARTED line (the query is
 * running), or after its n-th `BATCH` line (n batches committed by this run).
 */
export interface KillAt {
  from: 'spawn' | 'started' | `batch ${number}`;
  afterMs: number;
}

/**
 * Runs the fixture `child` once, with `<input> <out> <ckpt>` or the arguments given; `kill`
 * SIGKILLs it then, unless it ended first. `fault` sets SLUICE_FAULT; the variable is removed
 * otherwise, so a restart never inherits it. A child past CHILD_TIME_LIMIT_MS is hung: it rejects.
 */
export function runChild(
  child: string,
  dirs: ChildDirs | readonly string[],
  opts: { kill?: KillAt; fault?: string } = {},
  baseEnv: NodeJS.ProcessEnv = process.env,
): Promise<ChildRun> {
  const env: NodeJS.ProcessEnv = { ...baseEnv };
  delete env.SLUICE_FAULT;
  if (opts.fault) env.SLUICE_FAULT = opts.fault;
  const started = Date.now();
  const args = 'ckpt' in dirs ? [dirs.input, dirs.out, dirs.ckpt] : dirs;
  const proc = spawn(process.execPath, [child, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let killer: NodeJS.Timeout | undefined;
  let startedAt: number | undefined;
  const armKiller = (ms: number) => (killer = setTimeout(() => proc.kill('SIGKILL'), ms));
  if (opts.kill?.from === 'spawn') armKiller(opts.kill.afterMs);
  const batchMs: number[] = [];
  let partial = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('BATCH ')) {
        batchMs.push(Date.now() - started);
        if (opts.kill?.from === `batch ${batchMs.length}`) armKiller(opts.kill.afterMs);
      }
      if (line === 'STARTED' && startedAt === undefined) {
        startedAt = Date.now();
        if (opts.kill?.from === 'started') armKiller(opts.kill.afterMs);
      }
    }
  });
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let hung = false;
  const guard = setTimeout(() => {
    hung = true;
    proc.kill('SIGKILL');
  }, CHILD_TIME_LIMIT_MS);
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code, signal) => {
      clearTimeout(killer);
      clearTimeout(guard);
      if (hung) reject(new Error(`child ran over ${CHILD_TIME_LIMIT_MS} ms (hung?)\nstdout: ${stdout}\nstderr: ${stderr}`));
      else resolve({ code, signal, stdout, stderr, ms: Date.now() - started, startedMs: startedAt === undefined ? undefined : startedAt - started, batchMs });
    });
  });
}

/** A run that must finish: exit 0 by itself, `DONE <batchId>`, no error on stderr. */
export function expectCompleted(run: ChildRun): void {
  expect(run.stderr, 'stderr of the completing run').not.toMatch(/FAILED|CHECKPOINT_LOCKED/);
  expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
  expect(run.stdout).toMatch(/^DONE -?\d+$/m);
}

/** A run that a fault point (or the test) ended: SIGKILL, nothing failed before, never DONE. */
export function expectKilled(run: ChildRun, what: string): void {
  expect(run.stderr, `stderr of the run killed ${what}`).not.toMatch(/FAILED|CHECKPOINT_LOCKED/);
  expect({ code: run.code, signal: run.signal }, `end of the run killed ${what}`).toEqual({ code: null, signal: 'SIGKILL' });
  expect(run.stdout).not.toMatch(/DONE/);
}

// ---- kill timing ---------------------------------------------------------------------------------

/** Small seeded PRNG (mulberry32): the kill moments are the same on every run of the test. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Phases of a clean run, measured from its STARTED and BATCH lines. */
export interface Calibration {
  numBatches: number;
  /** Spawn to STARTED: module load, workers, lock, recovery. */
  startupMs: number;
  /** STARTED to the first commit (worker warm-up included). */
  firstBatchMs: number;
  /** Average time of a later batch. */
  msPerBatch: number;
}

/**
 * Measures a clean, completed run of the same query on the same input (own output and
 * checkpoint). A whole run takes about a second here, so fixed delays (say 50-1500 ms) would
 * mostly land after the end on a fast machine and in start-up on a loaded one; delays scaled to
 * the measured phases land where meant.
 */
export function calibrate(run: ChildRun): Calibration {
  const numBatches = run.batchMs.length;
  expect(numBatches, 'batches of the calibration run').toBeGreaterThanOrEqual(2);
  const startupMs = run.startedMs as number;
  const firstBatchMs = (run.batchMs[0] as number) - startupMs;
  const msPerBatch = ((run.batchMs.at(-1) as number) - (run.batchMs[0] as number)) / (numBatches - 1);
  console.log(`calibration: start-up ${startupMs} ms, first batch ${firstBatchMs} ms, then ${msPerBatch.toFixed(1)} ms a batch`);
  return { numBatches, startupMs, firstBatchMs, msPerBatch };
}

/**
 * `count` seeded kill moments tied to the run's own phases rather than to the clock alone, so that
 * on a fast or a loaded machine alike they land where meant and each restart gets only a few
 * batches further:
 * - a `startupShare` of them during start-up (spawn to STARTED);
 * - the others during one of the first `batchPhases` batches of the run (the first one is the
 *   replay of an uncommitted batch, when there is one): after STARTED or after the run's
 *   1st..(batchPhases-1)th commit, somewhere within one batch's time.
 * SLUICE_KILL_SEED replays another seed; the plan is logged.
 */
export function planKills(defaultSeed: number, count: number, cal: Calibration, shape: { startupShare: number; batchPhases: number }): KillAt[] {
  const seed = Number(process.env.SLUICE_KILL_SEED ?? defaultSeed);
  const rand = mulberry32(seed);
  const plan: KillAt[] = Array.from({ length: count }, () => {
    const phase = rand();
    const fraction = rand();
    if (phase < shape.startupShare) return { from: 'spawn', afterMs: Math.round(fraction * cal.startupMs) };
    const afterBatches = Math.floor(((phase - shape.startupShare) / (1 - shape.startupShare)) * shape.batchPhases);
    return afterBatches === 0
      ? { from: 'started', afterMs: Math.round(fraction * cal.firstBatchMs) }
      : { from: `batch ${afterBatches}`, afterMs: Math.round(fraction * cal.msPerBatch) };
  });
  console.log(`kill seed ${seed}: ${plan.map((k) => `${k.afterMs} ms after ${k.from}`).join(', ')}`);
  return plan;
}

export interface KillRecord extends KillAt {
  /** `SIGKILL`, or `exit <code>` when the run finished before the kill came. */
  ended: string;
  commitsBefore: number;
  commits: number;
  uncommitted: number;
}

/**
 * Runs the child once per planned kill on the same checkpoint. No run may be refused or fail:
 * the lock of a killed run died with it, and the checkpoint it left behind is always readable. A
 * run either dies by the SIGKILL or completes before it. `inspect` adds fields to each run's
 * record (and may assert on the state the run left); the records are printed as a table.
 */
export async function killAndRestart<T extends object>(
  child: string,
  dirs: ChildDirs,
  plan: KillAt[],
  inspect: (run: ChildRun, state: LogState) => T,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Array<KillRecord & T>> {
  const kills: Array<KillRecord & T> = [];
  for (const kill of plan) {
    const commitsBefore = logState(dirs.ckpt, dirs.out).commits.length;
    const run = await runChild(child, dirs, { kill }, env);
    expect(run.stderr, `stderr of the run killed ${kill.afterMs} ms after ${kill.from}`).not.toMatch(/FAILED|CHECKPOINT_LOCKED/);
    if (run.signal === null)
      expectCompleted(run); // it finished before the kill came
    else expect(run.signal).toBe('SIGKILL');
    const state = logState(dirs.ckpt, dirs.out);
    kills.push({
      ...kill,
      ended: run.signal ?? `exit ${run.code}`,
      commitsBefore,
      commits: state.commits.length,
      uncommitted: state.offsets.filter((id) => !state.commits.includes(id)).length,
      ...inspect(run, state),
    });
  }
  console.table(kills);
  return kills;
}

// ---- the random-kill scenario ----------------------------------------------------------------------

/** A query run to its end through seeded SIGKILLs at random moments: what `killScenario` needs. */
export interface KillScenario<T extends object> {
  /** The fixture script (see the top of this file). */
  child: string;
  /** The scenario's input (written) and its empty output and checkpoint. */
  dirs: ChildDirs;
  /** The child's environment (SLUICE_FAULT is never passed on). */
  env?: NodeJS.ProcessEnv;
  /** The default seed (SLUICE_KILL_SEED replays another), the number of kills and their spread: see planKills. */
  kills: { seed: number; count: number; startupShare: number; batchPhases: number };
  /** The batches a clean run makes, when the test knows them. */
  batches?: number;
  /** Whether the sink writes a manifest per batch (`_sluice_metadata`): then the end has one per batch. */
  manifests?: boolean;
  /** Asserts that the output in `dirs` is exactly what a completed run must leave. */
  expectOutput: (dirs: ChildDirs) => void | Promise<void>;
  /** Fields added to each kill's record; may assert on the state the killed run left. */
  inspect?: (run: ChildRun, state: LogState) => T;
  /**
   * How many kills must have landed mid-run (a SIGKILL after the run committed batches, before the
   * last one), so that the test is worth something; `midRun` narrows what counts as mid-run.
   */
  atLeastMidRun: number;
  midRun?: (kill: KillRecord & T) => boolean;
}

/**
 * The crash test of a query: a clean run of the same input (own output and checkpoint) must
 * complete with the exact output and measures the run's phases; then the seeded kills, each
 * followed by a restart on the same checkpoint (never refused, never failed: see killAndRestart);
 * then a run to the end, whose output must be exact, with every planned batch committed once (and
 * its sink manifest written). Enough kills must have landed mid-run. Returns the calibration, the
 * kills' records and the logs at the end.
 */
export async function killScenario<T extends object = Record<never, never>>(
  s: KillScenario<T>,
): Promise<{ cal: Calibration; kills: Array<KillRecord & T>; end: LogState }> {
  // Calibration: start-up (spawn to STARTED), the first batch (worker warm-up included) and the
  // time per later batch, so that the kill moments scale with this machine (see calibrate).
  const calDirs = { input: s.dirs.input, out: tempDir('sluice-kill-cal-out-'), ckpt: tempDir('sluice-kill-cal-ckpt-') };
  const calRun = await runChild(s.child, calDirs, {}, s.env);
  expectCompleted(calRun);
  await s.expectOutput(calDirs);
  const cal = calibrate(calRun);
  if (s.batches !== undefined) expect(cal.numBatches, 'batches of a clean run').toBe(s.batches);

  const plan = planKills(s.kills.seed, s.kills.count, cal, s.kills);
  const kills = await killAndRestart(s.child, s.dirs, plan, s.inspect ?? (() => ({}) as T), s.env);

  const final = await runChild(s.child, s.dirs, {}, s.env);
  expectCompleted(final);
  await s.expectOutput(s.dirs);
  // Nothing planned is left uncommitted, and no batch was planned twice.
  const end = logState(s.dirs.ckpt, s.dirs.out);
  const all = Array.from({ length: cal.numBatches }, (_, i) => i);
  expect(end.offsets, 'planned batches at the end').toEqual(all);
  expect(end.commits, 'committed batches at the end').toEqual(all);
  if (s.manifests ?? true) expect(end.manifests, 'sink manifests at the end').toEqual(all);

  // The test is only worth something if kills landed while batches were being committed: runs
  // that committed batches and were still killed before the end.
  const midRun = kills.filter((k) => k.ended === 'SIGKILL' && k.commits > k.commitsBefore && k.commits < cal.numBatches && (s.midRun?.(k) ?? true));
  expect(midRun.length, 'kills that landed mid-run').toBeGreaterThanOrEqual(s.atLeastMidRun);
  return { cal, kills, end };
}
