/**
 * Crash tests of the micro-batch protocol (DESIGN.md §4): a child process runs a file → JSON query
 * (test/fixtures/kill-child.mjs) and is SIGKILLed, at random moments or at the contract's fault
 * points, then restarted on the same checkpoint until it finishes. Whatever the moment of death,
 * the sink must end up with every input row exactly once, and a restart must never be refused
 * because of the dead process's checkpoint lock.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLines, readSinkJson, removeTempDirs, tempDir, writeInput } from './helpers.js';

const CHILD = fileURLToPath(new URL('./fixtures/kill-child.mjs', import.meta.url));
const NUM_FILES = 200;
const ROWS_PER_FILE = 10;
const TOTAL_ROWS = NUM_FILES * ROWS_PER_FILE;
/** A child that runs longer than this is hung (e.g. it did not exit after session.close()). */
const CHILD_TIME_LIMIT_MS = 60_000;

afterAll(() => removeTempDirs());

// ---- input and expected output ------------------------------------------------------------------

const rowId = (file: number, row: number): string => `f${file}-r${row}`;
const rowValue = (file: number, row: number): number => file * ROWS_PER_FILE + row;

/** 200 files of 10 rows; distinct mtimes one second apart, so the admission order is fixed. */
function writeAllInput(dir: string): void {
  const base = 1_700_000_000;
  for (let f = 0; f < NUM_FILES; f++) {
    const rows = Array.from({ length: ROWS_PER_FILE }, (_, r) => ({ id: rowId(f, r), v: rowValue(f, r) }));
    writeInput(dir, `f${String(f).padStart(3, '0')}.json`, jsonLines(rows), base + f);
  }
}

const EXPECTED_IDS = Array.from({ length: NUM_FILES }, (_, f) => Array.from({ length: ROWS_PER_FILE }, (_, r) => rowId(f, r)))
  .flat()
  .sort();
const EXPECTED_VALUE = new Map(
  Array.from({ length: NUM_FILES }, (_, f) => Array.from({ length: ROWS_PER_FILE }, (_, r) => [rowId(f, r), rowValue(f, r)] as const)).flat(),
);

/** Rows committed to the sink so far (0 before the first manifest). */
function committedRows(out: string): Array<Record<string, unknown>> {
  return existsSync(join(out, '_sluice_metadata')) ? readSinkJson(out) : [];
}

/** The sink, read through its manifests, holds every input row exactly once, with its value. */
function expectExactlyOnce(out: string): void {
  const rows = committedRows(out);
  const seen = new Map<string, number>();
  for (const r of rows) seen.set(r['id'] as string, (seen.get(r['id'] as string) ?? 0) + 1);
  // Small, readable failures first: which ids are doubled, missing or foreign.
  expect([...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`), 'duplicated rows').toEqual([]);
  expect(EXPECTED_IDS.filter((id) => !seen.has(id)), 'missing rows').toEqual([]);
  expect([...seen.keys()].filter((id) => !EXPECTED_VALUE.has(id)), 'unexpected rows').toEqual([]);
  expect(rows.map((r) => r['id'] as string).sort()).toEqual(EXPECTED_IDS);
  expect(rows.filter((r) => r['v'] !== EXPECTED_VALUE.get(r['id'] as string)), 'rows with a wrong value').toEqual([]);
}

// ---- checkpoint inspection ----------------------------------------------------------------------

/** Batch ids of a log directory; temp files of an interrupted write are not entries. */
function logIds(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
}

function logState(ckpt: string, out: string): { offsets: number[]; commits: number[]; manifests: number[] } {
  return {
    offsets: logIds(join(ckpt, 'offsets')),
    commits: logIds(join(ckpt, 'commits')),
    manifests: logIds(join(out, '_sluice_metadata')),
  };
}

// ---- the child process --------------------------------------------------------------------------

interface ChildRun {
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
interface KillAt {
  from: 'spawn' | 'started' | `batch ${number}`;
  afterMs: number;
}

/**
 * Runs kill-child.mjs once; `kill` SIGKILLs it then, unless it ended first. `fault` sets
 * SLUICE_FAULT; the variable is removed otherwise, so a restart never inherits it.
 */
function runChild(
  dirs: { input: string; out: string; ckpt: string },
  opts: { kill?: KillAt; fault?: string } = {},
): Promise<ChildRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['SLUICE_FAULT'];
  if (opts.fault) env['SLUICE_FAULT'] = opts.fault;
  const started = Date.now();
  const child = spawn(process.execPath, [CHILD, dirs.input, dirs.out, dirs.ckpt], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let killer: NodeJS.Timeout | undefined;
  let startedAt: number | undefined;
  const armKiller = (ms: number) => (killer = setTimeout(() => child.kill('SIGKILL'), ms));
  if (opts.kill?.from === 'spawn') armKiller(opts.kill.afterMs);
  const batchMs: number[] = [];
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
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
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let hung = false;
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, CHILD_TIME_LIMIT_MS);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      clearTimeout(guard);
      if (hung) reject(new Error(`child ran over ${CHILD_TIME_LIMIT_MS} ms (hung?)\nstdout: ${stdout}\nstderr: ${stderr}`));
      else resolve({ code, signal, stdout, stderr, ms: Date.now() - started, startedMs: startedAt === undefined ? undefined : startedAt - started, batchMs });
    });
  });
}

/** A run that must finish: exit 0 by itself, `DONE <batchId>`, no error on stderr. */
function expectCompleted(run: ChildRun): void {
  expect(run.stderr, 'stderr of the completing run').not.toMatch(/FAILED|CHECKPOINT_LOCKED/);
  expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
  expect(run.stdout).toMatch(/^DONE -?\d+$/m);
}

/** Small seeded PRNG (mulberry32): the kill moments are the same on every run of the test. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function scenarioDirs(): { input: string; out: string; ckpt: string } {
  const dirs = { input: tempDir('sluice-kill-in-'), out: tempDir('sluice-kill-out-'), ckpt: tempDir('sluice-kill-ckpt-') };
  writeAllInput(dirs.input);
  return dirs;
}

// ---- tests --------------------------------------------------------------------------------------

describe('SIGKILL and restart on the same checkpoint', () => {
  it('10 kills at random moments, then a run to the end: every row exactly once', async () => {
    const dirs = scenarioDirs();

    // Calibration: a clean run of the same input (own output and checkpoint) measures start-up
    // (spawn to STARTED), the first batch (worker warm-up included) and the time per later batch.
    // A whole run takes about a second here, so fixed delays (say 50-1500 ms) would mostly land
    // after the end on a fast machine and in start-up on a loaded one; scaled ones land where meant.
    const calDirs = { input: dirs.input, out: tempDir('sluice-kill-out-'), ckpt: tempDir('sluice-kill-ckpt-') };
    const cal = await runChild(calDirs);
    expectCompleted(cal);
    expectExactlyOnce(calDirs.out);
    const numBatches = cal.batchMs.length;
    expect(numBatches).toBe(Math.ceil(NUM_FILES / 7));
    const startupMs = cal.startedMs as number;
    const firstBatchMs = (cal.batchMs[0] as number) - startupMs;
    const msPerBatch = ((cal.batchMs.at(-1) as number) - (cal.batchMs[0] as number)) / (numBatches - 1);
    console.log(`calibration: start-up ${startupMs} ms, first batch ${firstBatchMs} ms, then ${msPerBatch.toFixed(1)} ms a batch`);

    // The kill moments are seeded (SLUICE_KILL_SEED replays another seed) and tied to the run's
    // own phases rather than to the clock alone, so that on a fast or a loaded machine alike they
    // land where meant and each restart gets only a few batches further:
    // - 3 in 10 during start-up: module load, workers, lock, recovery (spawn to STARTED);
    // - the others during one of the first 4 batches of the run (the first one is the replay of an
    //   uncommitted batch, when there is one): after STARTED or after the run's 1st-3rd commit,
    //   somewhere within one batch's time.
    const seed = Number(process.env['SLUICE_KILL_SEED'] ?? 0x5111ce);
    const rand = mulberry32(seed);
    const plan: KillAt[] = Array.from({ length: 10 }, () => {
      const phase = rand();
      const fraction = rand();
      if (phase < 0.3) return { from: 'spawn', afterMs: Math.round(fraction * startupMs) };
      const afterBatches = Math.floor(((phase - 0.3) / 0.7) * 4); // 0..3
      return afterBatches === 0
        ? { from: 'started', afterMs: Math.round(fraction * firstBatchMs) }
        : { from: `batch ${afterBatches}`, afterMs: Math.round(fraction * msPerBatch) };
    });
    console.log(`kill seed ${seed}: ${plan.map((k) => `${k.afterMs} ms after ${k.from}`).join(', ')}`);

    const kills: Array<KillAt & { ended: string; commitsBefore: number; commits: number; uncommitted: number; rows: number }> = [];
    for (const kill of plan) {
      const commitsBefore = logState(dirs.ckpt, dirs.out).commits.length;
      const run = await runChild(dirs, { kill });
      // Never refused, never failed: the lock of the killed run died with it, and the
      // checkpoint it left behind is always readable.
      expect(run.stderr, `stderr of the run killed ${kill.afterMs} ms after ${kill.from}`).not.toMatch(/FAILED|CHECKPOINT_LOCKED/);
      if (run.signal === null) expectCompleted(run); // it finished before the kill came
      else expect(run.signal).toBe('SIGKILL');
      const state = logState(dirs.ckpt, dirs.out);
      kills.push({
        ...kill,
        ended: run.signal ?? `exit ${run.code}`,
        commitsBefore,
        commits: state.commits.length,
        uncommitted: state.offsets.filter((id) => !state.commits.includes(id)).length,
        rows: committedRows(dirs.out).length,
      });
    }
    console.table(kills);

    const final = await runChild(dirs);
    expectCompleted(final);
    expectExactlyOnce(dirs.out);
    // Nothing planned is left uncommitted.
    const end = logState(dirs.ckpt, dirs.out);
    expect(end.commits).toEqual(end.offsets);

    // The test is only worth something if kills landed while batches were being committed:
    // some runs must have committed batches and still been killed before the end.
    const midStream = kills.filter((k) => k.ended === 'SIGKILL' && k.commits > k.commitsBefore && k.rows < TOTAL_ROWS);
    expect(midStream.length, 'kills that landed mid-stream').toBeGreaterThanOrEqual(3);
  });

  // n = 3: batches 0 and 1 commit, batch 2 dies at the point (29 batches in all).
  const FAULT_N = 3;
  const CRASHED_BATCH = FAULT_N - 1;
  describe.each([
    // Planned but nothing written: the restart must re-run batch 2 with the same offsets.
    { point: 'after-offsets-write', manifestWritten: false },
    // Sink committed, commit log not: the restart re-runs batch 2 and the sink must skip it.
    { point: 'after-sink-commit', manifestWritten: true },
    { point: 'before-commit-log', manifestWritten: true },
  ])('fault point $point', ({ point, manifestWritten }) => {
    it('dies there by SIGKILL, leaves that checkpoint state, and a restart completes exactly once', async () => {
      const dirs = scenarioDirs();
      const crashed = await runChild(dirs, { fault: `${point}:${FAULT_N}` });
      expect(crashed.stderr).not.toMatch(/FAILED/);
      expect({ code: crashed.code, signal: crashed.signal }).toEqual({ code: null, signal: 'SIGKILL' });
      expect(crashed.stdout).not.toMatch(/DONE/);

      // The checkpoint shows exactly where it died.
      const state = logState(dirs.ckpt, dirs.out);
      const committed = Array.from({ length: CRASHED_BATCH }, (_, i) => i);
      expect(state.offsets).toEqual([...committed, CRASHED_BATCH]);
      expect(state.commits).toEqual(committed);
      expect(state.manifests).toEqual(manifestWritten ? [...committed, CRASHED_BATCH] : committed);
      const offsetsFile = join(dirs.ckpt, 'offsets', String(CRASHED_BATCH));
      const manifestFile = join(dirs.out, '_sluice_metadata', String(CRASHED_BATCH));
      const plannedBatch = readFileSync(offsetsFile, 'utf8');
      const manifest = manifestWritten ? readFileSync(manifestFile, 'utf8') : undefined;
      // 7 files of 10 rows a batch, the crashed one included when its manifest was written.
      expect(committedRows(dirs.out)).toHaveLength((manifestWritten ? FAULT_N : CRASHED_BATCH) * 7 * ROWS_PER_FILE);

      const restarted = await runChild(dirs);
      expectCompleted(restarted);
      expectExactlyOnce(dirs.out);
      // The replay used the planned batch as written (same offsets and batch timestamp), and an
      // already committed sink batch was not written again.
      expect(readFileSync(offsetsFile, 'utf8')).toBe(plannedBatch);
      if (manifest !== undefined) expect(readFileSync(manifestFile, 'utf8')).toBe(manifest);
      const end = logState(dirs.ckpt, dirs.out);
      expect(end.commits).toEqual(end.offsets);
      expect(end.manifests).toEqual(end.commits);
    });
  });
});
