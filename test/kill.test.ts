/**
 * Crash tests of the micro-batch protocol (docs/guides/exactly-once-and-checkpoints.md): a child process runs a file → JSON query,
 * or Parquet → Parquet (test/fixtures/kill-child.mjs) and is SIGKILLed, at random moments or at the contract's fault
 * points, then restarted on the same checkpoint until it finishes. Whatever the moment of death,
 * the sink must end up with every input row exactly once, and a restart must never be refused
 * because of the dead process's checkpoint lock.
 */
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSchema, writeParquet } from '@sluice/executor';
import { deltaRowCount, liveFiles, txnVersion } from './deltaLog.js';
import { openDuck, type Duck } from './duckdb.js';
import { jsonLines, removeTempDirs, sinkManifestFiles, tempDir, writeInput } from './helpers.js';
import {
  committedRowCount,
  committedRows,
  expectCompleted,
  expectKilled,
  killScenario,
  logState,
  runChild as runKillChild,
  type ChildDirs,
  type ChildRun,
  type KillAt,
} from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/kill-child.mjs', import.meta.url));
const NUM_FILES = 200;
const ROWS_PER_FILE = 10;
const TOTAL_ROWS = NUM_FILES * ROWS_PER_FILE;

afterAll(() => removeTempDirs());

// ---- input and expected output ------------------------------------------------------------------

const rowId = (file: number, row: number): string => `f${file}-r${row}`;
const rowValue = (file: number, row: number): number => file * ROWS_PER_FILE + row;

/** The sink's format; a Delta sink reads Parquet input. */
type Format = 'json' | 'parquet' | 'delta';
const inputFormat = (format: Format): 'json' | 'parquet' => (format === 'json' ? 'json' : 'parquet');

/** 200 files of 10 rows; distinct mtimes one second apart, so the admission order is fixed. */
function writeAllInput(dir: string, sinkFormat: Format): void {
  const format = inputFormat(sinkFormat);
  const base = 1_700_000_000;
  for (let f = 0; f < NUM_FILES; f++) {
    const rows = Array.from({ length: ROWS_PER_FILE }, (_, r) => ({ id: rowId(f, r), v: rowValue(f, r) }));
    const name = `f${String(f).padStart(3, '0')}.${format}`;
    if (format === 'json') writeInput(dir, name, jsonLines(rows), base + f);
    else {
      writeFileSync(join(dir, name), writeParquet(rows, parseSchema('id STRING, v LONG', 'schema'), 'snappy'));
      utimesSync(join(dir, name), base + f, base + f);
    }
  }
}

const EXPECTED_IDS = Array.from({ length: NUM_FILES }, (_, f) => Array.from({ length: ROWS_PER_FILE }, (_, r) => rowId(f, r)))
  .flat()
  .sort();
const EXPECTED_VALUE = new Map(
  Array.from({ length: NUM_FILES }, (_, f) => Array.from({ length: ROWS_PER_FILE }, (_, r) => [rowId(f, r), rowValue(f, r)] as const)).flat(),
);

/**
 * The sink, read through its manifests (a Parquet sink by DuckDB; a Delta table's live files, from
 * its log, by DuckDB), holds every input row exactly once, with its value.
 */
async function expectExactlyOnce(out: string, format: Format = 'json'): Promise<void> {
  const parquet = (files: string[]): Promise<Array<Record<string, unknown>>> =>
    duck().then((d) => d.rows(`SELECT id, v::DOUBLE AS v FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}])`));
  const rows = format === 'json' ? committedRows(out) : await parquet(format === 'parquet' ? sinkManifestFiles(out).map((f) => f.path) : liveFiles(out));
  const seen = new Map<string, number>();
  for (const r of rows) seen.set(r.id as string, (seen.get(r.id as string) ?? 0) + 1);
  // Small, readable failures first: which ids are doubled, missing or foreign.
  expect(
    [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`),
    'duplicated rows',
  ).toEqual([]);
  expect(
    EXPECTED_IDS.filter((id) => !seen.has(id)),
    'missing rows',
  ).toEqual([]);
  expect(
    [...seen.keys()].filter((id) => !EXPECTED_VALUE.has(id)),
    'unexpected rows',
  ).toEqual([]);
  expect(rows.map((r) => r.id as string).sort()).toEqual(EXPECTED_IDS);
  expect(
    rows.filter((r) => r.v !== EXPECTED_VALUE.get(r.id as string)),
    'rows with a wrong value',
  ).toEqual([]);
}

/** Runs kill-child.mjs once (see killHarness.ts). */
const runChild = (dirs: ChildDirs, opts: { kill?: KillAt; fault?: string } = {}, format: Format = 'json'): Promise<ChildRun> =>
  runKillChild(CHILD, dirs, opts, childEnv(format));

/** The child's environment: SLUICE_KILL_FORMAT picks its input and sink format. */
const childEnv = (format: Format): NodeJS.ProcessEnv => ({ ...process.env, SLUICE_KILL_FORMAT: format });

function scenarioDirs(format: Format = 'json'): { input: string; out: string; ckpt: string } {
  const dirs = { input: tempDir('sluice-kill-in-'), out: tempDir('sluice-kill-out-'), ckpt: tempDir('sluice-kill-ckpt-') };
  writeAllInput(dirs.input, format);
  return dirs;
}

/** The query id a checkpoint's metadata file records (its second line; the first is the format version). */
const queryId = (ckpt: string): string => (JSON.parse(readFileSync(join(ckpt, 'metadata'), 'utf8').split('\n')[1]!) as { id: string }).id;

let duckdb: Promise<Duck> | undefined;
const duck = (): Promise<Duck> => (duckdb ??= openDuck());

// ---- tests --------------------------------------------------------------------------------------

describe('SIGKILL and restart on the same checkpoint', () => {
  it.each(['json', 'parquet', 'delta'] as const)('10 kills at random moments, then a run to the end: every row exactly once (%s)', async (format) => {
    const dirs = scenarioDirs(format);
    const rowCount = (): number => (format === 'delta' ? deltaRowCount(dirs.out) : committedRowCount(dirs.out));
    const { end } = await killScenario({
      child: CHILD,
      dirs,
      env: childEnv(format),
      // 3 in 10 during start-up (module load, workers, lock, recovery), the others during one of
      // the first 4 batches of a run (the first one is the replay of an uncommitted batch, when
      // there is one), after STARTED or after the run's 1st-3rd commit.
      kills: { seed: 0x5111ce, count: 10, startupShare: 0.3, batchPhases: 4 },
      batches: Math.ceil(NUM_FILES / 7),
      // A Delta table's batches are in its log, not in manifests of the sink's own.
      manifests: format !== 'delta',
      expectOutput: (d) => expectExactlyOnce(d.out, format),
      inspect: () => ({ rows: rowCount() }),
      // Killed with rows still missing from the sink.
      atLeastMidRun: 3,
      midRun: (k) => k.rows < TOTAL_ROWS,
    });
    // A Delta table's txn for the query is the last batch the checkpoint committed.
    if (format === 'delta') expect(txnVersion(dirs.out, queryId(dirs.ckpt))).toBe(end.commits.at(-1));
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
      expectKilled(crashed, `at ${point}:${FAULT_N}`);

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
      await expectExactlyOnce(dirs.out);
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
