/**
 * Checkpoints written by the Sluice of commit 32a9167 (test/fixtures/checkpoints-32a9167, made by
 * its generate.mjs, the queries in its query.mjs): an aggregation whose state was repartitioned, a
 * deduplication feeding an aggregation, a stream-stream outer join, session windows and
 * transformWithState with event-time timers. Each was killed at a fault point with a batch in its
 * offset log and none in its commit log. The current Sluice resumes a copy of each: it runs that
 * batch again first, then the rest of the input, and the sink ends with exactly the rows of a
 * clean run of the same query over all the input (in a fresh checkpoint), batch by batch, which
 * are also the rows that release wrote in a clean run (`expected.json`).
 */
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import * as sluice from '@sluice/driver';
// @ts-expect-error: a plain JavaScript fixture module without types
import { RUNS, setInputTimes, startQuery } from './fixtures/checkpoints-32a9167/query.mjs';
import { readDoc, readSinkJson, removeTempDirs, tempDir, withSession } from './helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/checkpoints-32a9167/', import.meta.url));

afterAll(removeTempDirs);

type Scenario = 'repartition' | 'chain' | 'stream-join' | 'session-window' | 'transform-with-state';
type Row = Record<string, unknown>;

interface Fixture {
  release: string;
  /** Where the scenario was written: the file source's log names its input files under it. */
  root: string;
  unfinishedBatch: number;
}

const numbered = (dir: string): number[] =>
  readdirSync(dir)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));

/** A row as text with its keys sorted at every level, to compare rows whatever their key order. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon((v as Row)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

const sortedRows = (rows: Row[]): string[] => rows.map(canon).sort();

/** The rows of each batch of the JSON sink at `out` that wrote any, in batch order, each sorted. */
function batchesWithRows(out: string): string[][] {
  const batches: string[][] = [];
  for (const id of numbered(join(out, '_sluice_metadata'))) {
    const rows: Row[] = [];
    for (const f of (readDoc(join(out, '_sluice_metadata', String(id))) as { files: Array<{ name: string }> }).files) {
      for (const line of readFileSync(join(out, f.name), 'utf8').split('\n')) if (line) rows.push(JSON.parse(line) as Row);
    }
    if (rows.length > 0) batches.push(sortedRows(rows));
  }
  return batches;
}

/**
 * A copy of a fixture in a temp dir, so the test never writes into the repository. The file
 * source's log names each file it admitted by its absolute path, under the directory the fixture
 * was written in: those names are moved to the copy's input directory (the checkpoint's other
 * files are copied as they are). The input files get their fixed modification times back.
 */
function copyOf(scenario: Scenario): { root: string; fixture: Fixture } {
  const root = tempDir(`sluice-32a9167-${scenario}-`);
  cpSync(join(FIXTURES, scenario), root, { recursive: true });
  const fixture = JSON.parse(readFileSync(join(root, 'fixture.json'), 'utf8')) as Fixture;
  expect(fixture.release).toBe('32a9167');
  const logs = filesUnder(join(root, 'checkpoint', 'sources'));
  expect(logs.length).toBeGreaterThan(0);
  for (const path of logs) {
    const text = readFileSync(path, 'utf8');
    expect(text).toContain(`"${fixture.root}/input/`);
    writeFileSync(path, text.replaceAll(`"${fixture.root}/input/`, `"${root}/input/`));
  }
  setInputTimes(root);
  return { root, fixture };
}

interface Progress {
  batchId: number;
  stateOperators: Array<{ numRowsTotal: number }>;
}

/** Runs the scenario's query on `root` to its end (AvailableNow) with the current Sluice; returns its batch ids. */
async function run(scenario: Scenario, root: string, conf: Record<string, unknown>): Promise<number[]> {
  return (await runWithProgress(scenario, root, conf)).map((p) => p.batchId);
}

function runWithProgress(scenario: Scenario, root: string, conf: Record<string, unknown>): Promise<Progress[]> {
  return withSession(conf, async (session) => {
    const query = await startQuery(sluice, session, scenario, root);
    await query.awaitTermination();
    return query.recentProgress as Progress[];
  });
}

/** The same query over all the fixture's input, in a fresh checkpoint: the sink's rows batch by batch, and the run's progress. */
async function cleanRunWithProgress(scenario: Scenario, conf: Record<string, unknown>): Promise<{ batches: string[][]; progress: Progress[] }> {
  const root = tempDir(`sluice-32a9167-${scenario}-clean-`);
  cpSync(join(FIXTURES, scenario, 'input'), join(root, 'input'), { recursive: true });
  setInputTimes(root);
  const progress = await runWithProgress(scenario, root, conf);
  return { batches: batchesWithRows(join(root, 'out')), progress };
}

async function cleanRun(scenario: Scenario, conf: Record<string, unknown> = RUNS[scenario].resume): Promise<string[][]> {
  return (await cleanRunWithProgress(scenario, conf)).batches;
}

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const at = (minutes: number) => new Date(T0 + minutes * MIN).toISOString();
const windowOf = (from: number, to: number) => ({ start: at(from), end: at(to) });

/**
 * What each checkpoint holds, and rows of the end result written out here, so that the test does
 * not only compare the current Sluice with itself: the batch left unfinished, the number of rows
 * the sink had committed before it, and some rows due only after the resumed batch.
 */
const CASES: Array<{ scenario: Scenario; unfinished: number; rowsBefore: number; rows: number; some: Row[] }> = [
  {
    scenario: 'repartition',
    unfinished: 5,
    rowsBefore: 0,
    rows: 9,
    some: [
      { window: windowOf(0, 10), k: 'k0', n: 4, total: 30 },
      { window: windowOf(10, 20), k: 'k1', n: 4, total: 112 },
      { window: windowOf(20, 30), k: 'k2', n: 4, total: 188 },
    ],
  },
  {
    scenario: 'chain',
    unfinished: 3,
    rowsBefore: 0,
    rows: 9,
    some: [
      { window: windowOf(0, 10), word: 'b', count: 4 },
      { window: windowOf(10, 20), word: 'a', count: 4 },
      { window: windowOf(20, 30), word: 'c', count: 4 },
    ],
  },
  {
    scenario: 'stream-join',
    unfinished: 3,
    rowsBefore: 8,
    rows: 20,
    some: [
      // A click in the batch after its impression's, met in the join's state.
      { impressionAdId: 'ad3-2', impressionTime: at(34), clickAdId: 'ad3-2', clickTime: at(46) },
      // Never clicked: out with nulls once the watermark passed it.
      { impressionAdId: 'ad2-3', impressionTime: at(26) },
      { impressionAdId: 'ad5-1', impressionTime: at(52), clickAdId: 'ad5-1', clickTime: at(57) },
    ],
  },
  {
    scenario: 'session-window',
    unfinished: 3,
    rowsBefore: 0,
    rows: 7,
    some: [
      // Five events 4 minutes apart, in three files: one session.
      { session_window: windowOf(0, 21), userId: 'u0', count: 5 },
      { session_window: windowOf(14, 22), userId: 'u1', count: 2 },
      { session_window: windowOf(30, 35), userId: 'u2', count: 1 },
    ],
  },
  {
    scenario: 'transform-with-state',
    unfinished: 3,
    rowsBefore: 9,
    rows: 16,
    some: [
      // k1's timer ends it in a batch without its rows; file 6's rows start it over.
      { k: 'k1', n: 4, total: 242, closed: true },
      { k: 'k1', n: 2, total: 1221, closed: false },
      { k: 'k3', n: 4, total: 1042, closed: true },
      { k: 'k0', n: 14, total: 4207, closed: false },
    ],
  },
];

describe('checkpoints of Sluice 32a9167, each ending in a batch it did not commit', () => {
  for (const { scenario, unfinished, rowsBefore, rows, some } of CASES) {
    it(`${scenario}: batch ${unfinished} runs again first; the sink ends with exactly the rows of a clean run`, async () => {
      const { root, fixture } = copyOf(scenario);
      const ckpt = join(root, 'checkpoint');
      // As written: batch `unfinished` is in the offset log, not in the commit log.
      expect(fixture.unfinishedBatch).toBe(unfinished);
      expect(numbered(join(ckpt, 'offsets')).at(-1)).toBe(unfinished);
      expect(numbered(join(ckpt, 'commits')).at(-1)).toBe(unfinished - 1);
      expect(readSinkJson(join(root, 'out'))).toHaveLength(rowsBefore);

      const batches = await run(scenario, root, RUNS[scenario].resume);
      expect(batches[0]).toBe(unfinished);
      expect(existsSync(join(ckpt, 'commits', String(unfinished)))).toBe(true);
      expect(numbered(join(ckpt, 'commits')).at(-1)).toBe(batches.at(-1));
      expect(numbered(join(ckpt, 'offsets')).at(-1)).toBe(batches.at(-1));

      const resumed = batchesWithRows(join(root, 'out'));
      expect(resumed).toEqual(await cleanRun(scenario));
      const all = resumed.flat().sort();
      expect(all).toHaveLength(rows);
      const written = JSON.parse(readFileSync(join(FIXTURES, scenario, 'expected.json'), 'utf8')) as Row[];
      expect(all).toEqual(sortedRows(written));
      for (const row of some) expect(all).toContain(canon(row));
    });
  }

  it('repartition: the control batch of that release is in its offset log; a start on 2 partitions moves the state it left once more, every row exact', async () => {
    const { root } = copyOf('repartition');
    const ckpt = join(root, 'checkpoint');
    expect(readDoc(join(ckpt, 'offsets', '3'))).toMatchObject({
      kind: 'control',
      control: { type: 'REPARTITION', from: { partitions: 4, shards: 2 }, to: { partitions: 3, shards: 2 } },
    });
    expect(readDoc(join(ckpt, 'state', '0', 'layout'))).toMatchObject({ partitions: 3, shards: 2 });
    const conf = { ...RUNS.repartition.resume, 'sluice.sql.shuffle.partitions': 2, 'sluice.sql.streaming.stateStore.partitions': 2 };
    const batches = await run('repartition', root, conf);
    // The unfinished batch 5 first, on the layout it was planned with; then the control batch 6
    // (it has no progress event of its own) and the data batches after it.
    expect(batches.slice(0, 2)).toEqual([5, 7]);
    expect(readDoc(join(ckpt, 'offsets', '6'))).toMatchObject({ kind: 'control', control: { type: 'REPARTITION', to: { partitions: 2 } } });
    expect(readDoc(join(ckpt, 'state', '0', 'layout'))).toMatchObject({ partitions: 2, shards: 2 });
    expect(batchesWithRows(join(root, 'out')).flat().sort()).toEqual((await cleanRun('repartition', conf)).flat().sort());
  });

  // Their state values were written before the state value header: a repartition moves them by
  // what each kind knows of its old values (a join's and a session list's index time and rows).
  for (const scenario of ['chain', 'stream-join', 'session-window', 'transform-with-state'] as const) {
    it(`${scenario}: a start on 2 partitions moves the state values of that release; rows and row counts are a clean run's`, async () => {
      const { root } = copyOf(scenario);
      const conf = { ...RUNS[scenario].resume, 'sluice.sql.shuffle.partitions': 2, 'sluice.sql.streaming.stateStore.partitions': 2 };
      const progress = await runWithProgress(scenario, root, conf);
      const ckpt = join(root, 'checkpoint');
      expect(readDoc(join(ckpt, 'state', '0', 'layout'))).toMatchObject({ partitions: 2 });
      const all = batchesWithRows(join(root, 'out')).flat().sort();
      const written = JSON.parse(readFileSync(join(FIXTURES, scenario, 'expected.json'), 'utf8')) as Row[];
      expect(all).toEqual(sortedRows(written));

      const clean = (await cleanRunWithProgress(scenario, conf)).progress;
      const rowsTotal = (p: Progress[]) => (p.at(-1) as Progress).stateOperators.map((o) => o.numRowsTotal);
      expect(rowsTotal(progress)).toEqual(rowsTotal(clean));
    });
  }
});
