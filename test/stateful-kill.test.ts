/**
 * Crash tests of stateful queries (docs/guides/exactly-once-and-checkpoints.md and state-store.md): a child process runs a windowed count with a
 * watermark in append mode (test/fixtures/stateful-kill-child.mjs: 2 slots, 8 state partitions
 * in 2 LevelDB shards) and is SIGKILLed at random moments and at every fault point, the driver's
 * and the state store's (a worker's shard commit and rollback), then restarted on the same
 * checkpoint until it finishes. Whatever the moment of death, the sink must end up with exactly
 * the rows of an independent model of Spark's semantics: every closed (window, id) once, with its
 * count, late rows dropped. A state task that fails in-process (its worker crashes, or a udf
 * throws) is retried and must leave nothing of the failed attempt behind.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { col, lit, Session, Trigger, udf, window, type DataFrame, type StreamingQueryProgress } from '@sluice/driver';
import { jsonLines, parseDoc, removeTempDirs, tempDir, writeInput } from './helpers.js';
import {
  committedRows,
  expectCompleted,
  expectKilled,
  killScenario,
  logIds,
  logState,
  mulberry32,
  runChild as runKillChild,
  type ChildDirs,
  type ChildRun,
  type KillAt,
} from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/stateful-kill-child.mjs', import.meta.url));
const CRASHING = new URL('./fixtures/crashing-udfs.mjs', import.meta.url).href;

afterAll(() => removeTempDirs());

// ---- input ---------------------------------------------------------------------------------------

const SEC = 1000;
const MIN = 60 * SEC;
const T0 = Date.UTC(2024, 0, 1);
const DELAY = 10 * MIN; // withWatermark('event_time', '10 minutes')
const WINDOW = 5 * MIN; // window('event_time', '5 minutes')
const FILES_PER_BATCH = 3; // maxFilesPerTrigger
const NUM_IDS = 20;
/** Files of disordered events, then one file with a single event a day later that closes every window. */
const NUM_DATA_FILES = 60;
const ROWS_PER_FILE = 40;
/** File f holds events around T0 + f × 3 minutes: 3 hours of event time in all. */
const FILE_STEP = 3 * MIN;
/** Genuinely late rows: in these files, 2 events each, 40-100 minutes behind the file's time. */
const LATE_FILES = [17, 29, 41, 53];

interface Ev {
  id: string;
  t: number;
}

/**
 * Seeded input: in file f, events at T0 + f × 3 min + [-8, +2) min (out of order, but within the
 * 10-minute delay: rows are only dropped by the window rule at the edges), half on whole minutes
 * (on window boundaries now and then), plus the late rows, plus the final file.
 */
function makeInput(): Ev[][] {
  const rand = mulberry32(0x57a7e);
  const files: Ev[][] = [];
  for (let f = 0; f < NUM_DATA_FILES; f++) {
    const base = T0 + f * FILE_STEP;
    const events: Ev[] = [];
    for (let r = 0; r < ROWS_PER_FILE; r++) {
      const offsetSec = Math.floor((rand() * 10 - 8) * 60);
      const t = base + (rand() < 0.5 ? Math.floor(offsetSec / 60) * MIN : offsetSec * SEC);
      events.push({ id: `k${Math.floor(rand() * NUM_IDS)}`, t });
    }
    if (LATE_FILES.includes(f)) {
      for (let r = 0; r < 2; r++) events.splice(Math.floor(rand() * events.length), 0, { id: `k${r}`, t: base - (40 + Math.floor(rand() * 60)) * MIN });
    }
    files.push(events);
  }
  files.push([{ id: 'k0', t: T0 + NUM_DATA_FILES * FILE_STEP + 24 * 60 * MIN }]);
  return files;
}

const INPUT = makeInput();

/** Distinct mtimes one second apart, so the admission order (3 files a batch) is fixed. */
function writeAllInput(dir: string): void {
  INPUT.forEach((events, f) => {
    const rows = events.map((e) => ({ id: e.id, event_time: new Date(e.t).toISOString() }));
    writeInput(dir, `f${String(f).padStart(3, '0')}.json`, jsonLines(rows), 1_700_000_000 + f);
  });
}

// ---- independent model ---------------------------------------------------------------------------

interface OutRow {
  start: string;
  end: string;
  id: string;
  count: number;
}

const rowKey = (r: OutRow) => `${r.start}|${r.end}|${r.id}`;

interface Expected {
  /** Rows appended by each batch (data batches, then the trailing no-data batch). */
  perBatch: OutRow[][];
  /** The watermark each batch ran with. */
  watermarks: number[];
  /** Partials (one per (window, id) and batch) dropped as late, and the rows in them. */
  dropped: number;
  droppedRows: number;
  /** Late rows of LATE_FILES that were dropped. */
  lateRowsDropped: number;
  /** The distinct minutes of each appended (window, id)'s events, ascending: collect_set's value. */
  minutes: Map<string, number[]>;
}

/**
 * Spark's rules, with batches formed as the engine forms them (3 files a batch in mtime order):
 * batch k runs with the watermark max(event time of batches < k) - 10 min (0 before any data,
 * never decreasing); a (window, id) partial of batch k is dropped when the window's end <= that
 * watermark; after the batch's updates every (window, id) whose end <= the watermark is appended
 * once, with its count, and leaves the state. When the watermark has passed the one the last data
 * batch ran with, a trailing no-data batch runs with it (AvailableNow) and appends what it closes.
 */
function model(files: Ev[][]): Expected {
  const state = new Map<string, OutRow>();
  const stateMinutes = new Map<string, Set<number>>();
  const minutes = new Map<string, number[]>();
  const perBatch: OutRow[][] = [];
  const watermarks: number[] = [];
  let wm = 0;
  let dropped = 0;
  let droppedRows = 0;
  let lateRowsDropped = 0;
  const close = (batchWm: number) => {
    const out: OutRow[] = [];
    for (const [key, row] of state) {
      if (Date.parse(row.end) <= batchWm) {
        out.push(row);
        state.delete(key);
        minutes.set(
          rowKey(row),
          [...(stateMinutes.get(key) as Set<number>)].sort((a, b) => a - b),
        );
      }
    }
    perBatch.push(out);
    watermarks.push(batchWm);
  };
  for (let first = 0; first < files.length; first += FILES_PER_BATCH) {
    const batch = files.slice(first, first + FILES_PER_BATCH);
    const partials = new Map<string, OutRow>();
    const partialMinutes = new Map<string, Set<number>>();
    let maxT = -Infinity;
    batch.forEach((events, i) => {
      for (const e of events) {
        maxT = Math.max(maxT, e.t);
        const start = Math.floor(e.t / WINDOW) * WINDOW;
        const key = `${start}|${e.id}`;
        const p = partials.get(key) ?? { start: new Date(start).toISOString(), end: new Date(start + WINDOW).toISOString(), id: e.id, count: 0 };
        p.count += 1;
        partials.set(key, p);
        partialMinutes.set(key, (partialMinutes.get(key) ?? new Set<number>()).add(new Date(e.t).getUTCMinutes()));
        const late = LATE_FILES.includes(first + i) && e.t < T0 + (first + i) * FILE_STEP - 30 * MIN;
        if (late && start + WINDOW <= wm) lateRowsDropped += 1;
      }
    });
    for (const [key, p] of partials) {
      if (Date.parse(p.end) <= wm) {
        dropped += 1;
        droppedRows += p.count;
        continue;
      }
      const have = state.get(key);
      if (have) have.count += p.count;
      else state.set(key, p);
      const m = stateMinutes.get(key) ?? new Set<number>();
      for (const x of partialMinutes.get(key) as Set<number>) m.add(x);
      stateMinutes.set(key, m);
    }
    close(wm);
    wm = Math.max(wm, maxT - DELAY);
  }
  if (wm > (watermarks.at(-1) as number)) close(wm);
  return { perBatch, watermarks, dropped, droppedRows, lateRowsDropped, minutes };
}

const EXPECTED = model(INPUT);
const NUM_BATCHES = EXPECTED.perBatch.length;
const EXPECTED_ROWS = EXPECTED.perBatch.flat();

const sortRows = (rows: OutRow[]) => [...rows].sort((a, b) => rowKey(a).localeCompare(rowKey(b)));

/** The sink's rows, which must have the query's shape exactly: {window: {start, end}, id, count}. */
function sinkRows(out: string): OutRow[] {
  const rows = committedRows(out);
  const shape = (r: Record<string, unknown>) =>
    `${Object.keys(r).sort().join(',')}; window: ${Object.keys((r.window ?? {}) as object).join(',')}; ${typeof r.id}, ${Number.isInteger(r.count) ? 'integer' : typeof r.count}`;
  expect(
    [...new Set(rows.map(shape))].filter((x) => x !== 'count,id,window; window: start,end; string, integer'),
    'sink rows of another shape',
  ).toEqual([]);
  return rows.map((r) => {
    const w = r.window as { start: string; end: string };
    return { start: w.start, end: w.end, id: r.id as string, count: r.count as number };
  });
}

/**
 * The sink holds exactly `expected`: small, readable failures first (doubled, missing, foreign
 * windows, wrong counts), then the whole comparison.
 */
function expectRows(actual: OutRow[], expected: OutRow[], what: string): void {
  const seen = new Map<string, number>();
  for (const r of actual) seen.set(rowKey(r), (seen.get(rowKey(r)) ?? 0) + 1);
  const want = new Map(expected.map((r) => [rowKey(r), r.count]));
  expect(
    [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`),
    `${what}: duplicated windows`,
  ).toEqual([]);
  expect(
    [...want.keys()].filter((k) => !seen.has(k)),
    `${what}: missing windows`,
  ).toEqual([]);
  expect(
    [...seen.keys()].filter((k) => !want.has(k)),
    `${what}: unexpected windows`,
  ).toEqual([]);
  expect(
    actual.filter((r) => r.count !== want.get(rowKey(r))).map((r) => `${rowKey(r)}: ${r.count}, expected ${want.get(rowKey(r))}`),
    `${what}: wrong counts`,
  ).toEqual([]);
  expect(sortRows(actual), what).toEqual(sortRows(expected));
}

/** The whole expected output, after a completed run. */
function expectFinalOutput(out: string): void {
  expectRows(sinkRows(out), EXPECTED_ROWS, 'final output');
  expect(logIds(join(out, '_sluice_metadata'))).toEqual(Array.from({ length: NUM_BATCHES }, (_, i) => i));
}

/**
 * At any moment, the committed sink batches are 0..m and hold exactly what the model appends in
 * batches 0..m: a window is appended once, in the batch that closes it, never early or twice.
 */
function expectSinkConsistent(out: string, what: string): number[] {
  const manifests = logIds(join(out, '_sluice_metadata'));
  expect(manifests, `${what}: sink batches`).toEqual(Array.from({ length: manifests.length }, (_, i) => i));
  expectRows(sinkRows(out), EXPECTED.perBatch.slice(0, manifests.length).flat(), `${what}: sink after batches 0..${manifests.length - 1}`);
  return manifests;
}

// ---- the child process ---------------------------------------------------------------------------

const runChild = (dirs: ChildDirs, opts: { kill?: KillAt; fault?: string } = {}): Promise<ChildRun> => runKillChild(CHILD, dirs, opts);

function scenarioDirs(): ChildDirs {
  const dirs = { input: tempDir('sluice-skill-in-'), out: tempDir('sluice-skill-out-'), ckpt: tempDir('sluice-skill-ckpt-') };
  writeAllInput(dirs.input);
  return dirs;
}

/** A run to the end on a crashed checkpoint: exact output, every planned batch committed once. */
async function expectRestartCompletes(dirs: ChildDirs): Promise<void> {
  const restarted = await runChild(dirs);
  expectCompleted(restarted);
  expectFinalOutput(dirs.out);
  const end = logState(dirs.ckpt, dirs.out);
  const all = Array.from({ length: NUM_BATCHES }, (_, i) => i);
  expect(end).toEqual({ offsets: all, commits: all, manifests: all });
}

// ---- tests ---------------------------------------------------------------------------------------

describe('the model', () => {
  it('has closing windows in most batches, late rows dropped, and a trailing no-data batch', () => {
    // 61 files at 3 a batch make 21 data batches; the last file's watermark adds a no-data batch.
    expect(NUM_BATCHES).toBe(Math.ceil(INPUT.length / FILES_PER_BATCH) + 1);
    expect(EXPECTED.perBatch.filter((b) => b.length > 0).length).toBeGreaterThan(NUM_BATCHES * 0.8);
    expect((EXPECTED.perBatch.at(-1) as OutRow[]).length).toBeGreaterThan(20);
    // Every late row was dropped, and dropping it matters: its (window, id) was appended before.
    expect(EXPECTED.lateRowsDropped).toBe(LATE_FILES.length * 2);
    expect(EXPECTED.dropped).toBeGreaterThanOrEqual(LATE_FILES.length);
    // Each (window, id) is appended once; only the window of the final event stays open.
    expect(new Set(EXPECTED_ROWS.map(rowKey)).size).toBe(EXPECTED_ROWS.length);
    // Every input row is appended or dropped, but the final event (its window stays open).
    expect(EXPECTED_ROWS.reduce((s, r) => s + r.count, 0) + EXPECTED.droppedRows).toBe(INPUT.flat().length - 1);
  });
});

describe('SIGKILL and restart of a windowed aggregation on the same checkpoint', () => {
  it('15 kills at random moments, then a run to the end: every closed window once, with its count', async () => {
    const dirs = scenarioDirs();
    await killScenario({
      child: CHILD,
      dirs,
      // 1 in 4 during start-up (module load, workers, lock, recovery, shard opening), the others
      // during the first 3 batches of a run: each restart gets about one batch further, so the 15
      // kills spread over the 22 batches rather than bunching at the start.
      kills: { seed: 0x5ba7e, count: 15, startupShare: 0.25, batchPhases: 3 },
      batches: NUM_BATCHES,
      expectOutput: (d) => expectFinalOutput(d.out),
      inspect: (run, state) => {
        // Whatever the moment of death, the committed sink batches hold exactly what they should.
        const manifests = expectSinkConsistent(dirs.out, `after the run killed at ${run.ms} ms`);
        expect(
          state.commits.every((id) => manifests.includes(id)),
          'a committed batch has its sink batch',
        ).toBe(true);
        return { manifests: manifests.length, rows: committedRows(dirs.out).length };
      },
      atLeastMidRun: 5,
    });
  });

  // n = 8: batches 0-6 commit, batch 7 dies at the point (each worker commits its shard once a
  // batch: every batch has keys in both shards). n = 22: the trailing no-data batch (21) dies.
  const MID = 8;
  const LAST = NUM_BATCHES;
  describe.each([
    // Planned, nothing run: the restart re-runs the batch with the same offsets.
    { point: 'after-offsets-write', n: MID, manifestWritten: false },
    // One shard (or both) committed the batch, the sink not: the replay rolls it back first.
    { point: 'after-state-commit', n: MID, manifestWritten: false },
    // Both shards and the sink committed, the commit log not: state is rolled back and recomputed,
    // and the sink skips the batch.
    { point: 'after-sink-commit', n: MID, manifestWritten: true },
    { point: 'before-commit-log', n: MID, manifestWritten: true },
    // The same at the trailing no-data batch, which only evicts and appends.
    { point: 'after-offsets-write', n: LAST, manifestWritten: false },
    { point: 'before-commit-log', n: LAST, manifestWritten: true },
  ])('fault point $point:$n', ({ point, n, manifestWritten }) => {
    it('dies there by SIGKILL, leaves that checkpoint state, and a restart completes exactly once', async () => {
      const dirs = scenarioDirs();
      const crashedBatch = await crashAt(dirs, `${point}:${n}`, n - 1, manifestWritten);
      const offsetsFile = join(dirs.ckpt, 'offsets', String(crashedBatch));
      const manifestFile = join(dirs.out, '_sluice_metadata', String(crashedBatch));
      const plannedBatch = readFileSync(offsetsFile, 'utf8');
      const manifest = manifestWritten ? readFileSync(manifestFile, 'utf8') : undefined;

      await expectRestartCompletes(dirs);
      // The replay used the planned batch as written (same offsets, batch timestamp and
      // watermark), and an already committed sink batch was not written again.
      expect(readFileSync(offsetsFile, 'utf8')).toBe(plannedBatch);
      expect(parseDoc(plannedBatch).batchWatermarkMs).toBe(EXPECTED.watermarks[crashedBatch]);
      if (manifest !== undefined) expect(readFileSync(manifestFile, 'utf8')).toBe(manifest);
    });
  });

  it('a death after the last data batch, before the due no-data batch is planned: the restart runs it', async () => {
    // The offsets file is written temp-then-rename, so a death before the rename leaves no
    // offsets/21: the same checkpoint as a crash at after-offsets-write:22 minus that file.
    const dirs = scenarioDirs();
    const noDataBatch = NUM_BATCHES - 1;
    await crashAt(dirs, `after-offsets-write:${NUM_BATCHES}`, noDataBatch, false);
    rmSync(join(dirs.ckpt, 'offsets', String(noDataBatch)));
    // Decided from the checkpoint, not from memory (nextBatch.ts): the no-data batch is still due.
    await expectRestartCompletes(dirs);
    const planned = readFileSync(join(dirs.ckpt, 'offsets', String(noDataBatch)), 'utf8');
    expect(parseDoc(planned).batchWatermarkMs).toBe(EXPECTED.watermarks[noDataBatch]);
  });

  describe.each([
    // One shard committed batch 7 (maybe both); the replay rolls back the committed one(s).
    { first: 'after-state-commit', n: MID, manifestWritten: false, rollbackKills: 2 },
    // Both shards and the sink committed batch 7.
    { first: 'after-sink-commit', n: MID, manifestWritten: true, rollbackKills: 1 },
    // The no-data batch's commits hold only evictions: their rollback restores the evicted windows.
    { first: 'after-sink-commit', n: LAST, manifestWritten: true, rollbackKills: 1 },
  ])('fault point mid-rollback, after $first:$n', ({ first, n, manifestWritten, rollbackKills }) => {
    it(`dies ${rollbackKills === 1 ? 'once' : `${rollbackKills} times`} in the replay's rollback, then a restart completes exactly once`, async () => {
      const dirs = scenarioDirs();
      const crashedBatch = await crashAt(dirs, `${first}:${n}`, n - 1, manifestWritten);
      const before = logState(dirs.ckpt, dirs.out);
      for (let i = 0; i < rollbackKills; i++) {
        // The replay of the crashed batch finds a shard already at it and rolls it back first:
        // the process dies right before the rollback's write, whichever worker gets there first.
        const run = await runChild(dirs, { fault: 'mid-rollback:1' });
        expectKilled(run, `at mid-rollback (replay ${i + 1} of batch ${crashedBatch})`);
        expect(run.batchMs, 'batches committed before the rollback').toEqual([]);
        expect(logState(dirs.ckpt, dirs.out)).toEqual(before);
        expectSinkConsistent(dirs.out, `after mid-rollback kill ${i + 1}`);
      }
      await expectRestartCompletes(dirs);
    });
  });
});

/**
 * Runs a fresh checkpoint until `fault` kills it in batch `crashedBatch` and checks the logs show
 * exactly where: batches before it committed, it planned, its sink batch written or not.
 */
async function crashAt(dirs: ChildDirs, fault: string, crashedBatch: number, manifestWritten: boolean): Promise<number> {
  const crashed = await runChild(dirs, { fault });
  expectKilled(crashed, `at ${fault}`);
  const committed = Array.from({ length: crashedBatch }, (_, i) => i);
  expect(logState(dirs.ckpt, dirs.out)).toEqual({
    offsets: [...committed, crashedBatch],
    commits: committed,
    manifests: manifestWritten ? [...committed, crashedBatch] : committed,
  });
  expectSinkConsistent(dirs.out, `after ${fault}`);
  return crashedBatch;
}

/** The windowed count of the child, in this process, with `post` applied after the aggregation. */
/**
 * Runs the scenario's query in this process to its end. With `failsFirstWith`, the first run must
 * fail with that code, and the query is started again in the same session (the same workers).
 */
async function runInProcess(dirs: ChildDirs, post: (df: DataFrame) => DataFrame, failsFirstWith?: string): Promise<void> {
  const session = await Session.create({
    conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 8, 'sluice.sql.streaming.stateStore.shards': 2 },
  });
  try {
    const start = () => {
      const counts = session.readStream
        .format('json')
        .schema('id STRING, event_time TIMESTAMP')
        .option('maxFilesPerTrigger', FILES_PER_BATCH)
        .load(dirs.input)
        .withWatermark('event_time', '10 minutes')
        .groupBy(window('event_time', '5 minutes'), 'id')
        .count();
      return post(counts)
        .writeStream.format('json')
        .option('checkpointLocation', dirs.ckpt)
        .outputMode('append')
        .trigger(Trigger.AvailableNow())
        .start(dirs.out);
    };
    const progress: StreamingQueryProgress[] = [];
    let query = await start();
    if (failsFirstWith !== undefined) {
      await expect(query.awaitTermination()).rejects.toMatchObject({ code: failsFirstWith });
      progress.push(...query.recentProgress);
      query = await start();
    }
    await query.awaitTermination();
    expect(query.exception).toBeNull();
    expect(query.lastProgress?.batchId).toBe(NUM_BATCHES - 1);
    progress.push(...query.recentProgress);
    const dropped = progress.reduce((s, p) => s + (p.stateOperators[0]?.numRowsDroppedByWatermark ?? 0), 0);
    expect(dropped, 'partials dropped by the watermark').toBe(EXPECTED.dropped);
    await query.stop();
  } finally {
    await session.close();
  }
}

describe('generic aggregation buffers (collect_set) through the same crashes', () => {
  // SLUICE_TEST_MINUTES=1: the child also keeps collect_set(minute(event_time)), a buffer the
  // state codec stores as msgpack (tag 6), through undo records, rollback and replay.
  const withMinutes = async <T>(fn: () => Promise<T>): Promise<T> => {
    process.env.SLUICE_TEST_MINUTES = '1';
    try {
      return await fn();
    } finally {
      delete process.env.SLUICE_TEST_MINUTES;
    }
  };
  const minutesOut = (out: string): Map<string, number[]> =>
    new Map(
      committedRows(out).map((r) => {
        const w = r.window as { start: string; end: string };
        return [`${w.start}|${w.end}|${r.id as string}`, r.minutes as number[]];
      }),
    );

  it.each(['after-state-commit:8', 'before-commit-log:8'])(
    'dies at %s, and a restart gives every window its count and its distinct minutes once',
    async (fault) => {
      await withMinutes(async () => {
        const dirs = scenarioDirs();
        expectKilled(await runChild(dirs, { fault }), `at ${fault}`);
        expectCompleted(await runChild(dirs));
        const rows = committedRows(dirs.out);
        expect(rows).toHaveLength(EXPECTED_ROWS.length);
        expect(new Map(rows.map((r) => [`${(r.window as { start: string }).start}|${(r.window as { end: string }).end}|${r.id as string}`, r.count]))).toEqual(
          new Map(EXPECTED_ROWS.map((r) => [rowKey(r), r.count])),
        );
        expect(minutesOut(dirs.out)).toEqual(EXPECTED.minutes);
      });
    },
  );
});

describe('a failed state task attempt is rerun in the same process', () => {
  it('a udf that crashes its worker thread: the task reruns from the committed state, and the output is exact', async () => {
    const dirs = scenarioDirs();
    const marker = join(tempDir('sluice-skill-marker-'), 'crashed');
    // Runs after the aggregation, so in the state task, on each appended row: the first closing
    // window ends its worker thread (once, whichever worker meets it first).
    const crashOnce = udf(CRASHING, 'crashOnce', 'long');
    await runInProcess(dirs, (df) => df.select(col('window'), col('id'), crashOnce(col('count'), lit(marker)).alias('count')));
    expect(existsSync(marker), 'the udf crashed a worker').toBe(true);
    expectFinalOutput(dirs.out);
  });

  it('a udf that throws fails the query; restarted on the same workers, nothing of the failed attempt (its state cache) is kept', async () => {
    // A udf module of its own (udf() takes any module URL): throws once, the first time any
    // worker meets the marker missing. That fails the query with UDF_FAILED, but the worker
    // survives, so whatever the failed attempt held in memory (decoded state it updated but never
    // committed) must be dropped before the restart replays the batch.
    const dir = tempDir('sluice-skill-udf-');
    const module = join(dir, 'throw-once.mjs');
    writeFileSync(
      module,
      [
        "import { existsSync, writeFileSync } from 'node:fs';",
        'export function throwOnce(value, marker) {',
        '  if (existsSync(marker)) return value;',
        "  writeFileSync(marker, 'thrown');",
        "  throw new Error('udf failed once on purpose');",
        '}',
      ].join('\n'),
    );
    const marker = join(dir, 'thrown');
    const throwOnce = udf(pathToFileURL(module).href, 'throwOnce', 'long');
    const dirs = scenarioDirs();
    await runInProcess(dirs, (df) => df.select(col('window'), col('id'), throwOnce(col('count'), lit(marker)).alias('count')), 'UDF_FAILED');
    expect(existsSync(marker), 'the udf threw').toBe(true);
    expectFinalOutput(dirs.out);
  });
});
