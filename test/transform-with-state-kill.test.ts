/**
 * transformWithState through SIGKILL and a repartition: a timer-heavy processor (RowsAndTimers in
 * fixtures/processors.mjs: a timer per row, value and list state per user) in a child process
 * (fixtures/tws-kill-child.mjs), killed at random moments and restarted on its checkpoint, then
 * repartitioned between runs. The sink must end up with exactly the rows of an independent model:
 * each user's running counts 1..n, and one row per timer the final watermark has passed; the state
 * must hold two rows per user (Spark counts a row per variable: the count and the list).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLines, removeTempDirs, tempDir, writeInput } from './helpers.js';
import { committedRows, expectCompleted, killScenario, mulberry32, runChild as runKillChild, type ChildDirs } from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/tws-kill-child.mjs', import.meta.url));
const SLUICE = fileURLToPath(new URL('../packages/driver/dist/cli/sluice.js', import.meta.url));

afterAll(removeTempDirs);

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const NUM_FILES = 14;
const PER_FILE = 40;
const USERS = 12;
const DELAY = 10 * MIN;
const TIMER = 5 * MIN;

interface Event {
  user: string;
  seq: number;
  t: number;
}

/** File f covers minutes [4f, 4f + 4) of event time; seq numbers grow with the files, so a user's rows come in seq order across batches. */
function makeInput(): Event[][] {
  const rand = mulberry32(0x7115);
  let seq = 0;
  return Array.from({ length: NUM_FILES }, (_, f) =>
    Array.from({ length: PER_FILE }, () => ({ user: `u${Math.floor(rand() * USERS)}`, seq: seq++, t: T0 + f * 4 * MIN + Math.floor(rand() * 4 * MIN) })),
  );
}

const INPUT = makeInput();

const rowKey = (r: Record<string, unknown>): string => JSON.stringify([r.user, r.kind, r.n]);

/** The model: per user, counts 1..n; a timer row for each distinct (user, t + 5 min) at or below the final watermark. */
function expectedRows(): string[] {
  const events = INPUT.flat();
  const watermark = Math.max(...events.map((e) => e.t)) - DELAY;
  const rows: string[] = [];
  const counts = new Map<string, number>();
  const timers = new Set<string>();
  for (const e of events) {
    const n = (counts.get(e.user) ?? 0) + 1;
    counts.set(e.user, n);
    rows.push(rowKey({ user: e.user, kind: 'row', n }));
    const at = e.t + TIMER;
    if (at <= watermark && !timers.has(`${e.user}:${at}`)) {
      timers.add(`${e.user}:${at}`);
      rows.push(rowKey({ user: e.user, kind: 'timer', n: at }));
    }
  }
  return rows.sort();
}

const EXPECTED = expectedRows();
const NUM_USERS = new Set(INPUT.flat().map((e) => e.user)).size;

function scenarioDirs(): ChildDirs {
  const input = tempDir('sluice-tws-in-');
  INPUT.forEach((f, i) => {
    writeInput(
      input,
      `e${String(i).padStart(3, '0')}.json`,
      jsonLines(f.map((e) => ({ user: e.user, seq: e.seq, t: new Date(e.t).toISOString() }))),
      1_700_000_000 + i,
    );
  });
  return { input, out: tempDir('sluice-tws-out-'), ckpt: tempDir('sluice-tws-ckpt-') };
}

const runChild = (dirs: ChildDirs, env?: NodeJS.ProcessEnv) => runKillChild(CHILD, dirs, {}, env);

function sluice(env: NodeJS.ProcessEnv, ...args: string[]): string {
  const r = spawnSync(process.execPath, [SLUICE, ...args], { env, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** Keys in the processor's state, per the CLI's inspect. */
function stateKeys(ckpt: string): { rows: number; partitions: number; operator: string } {
  const r = JSON.parse(sluice(process.env, 'checkpoint', 'inspect', ckpt, '--json')) as {
    state: { operator: string; layout: { partitions: number }; shards: Array<{ rows: number }> };
  };
  return { rows: r.state.shards.reduce((n, s) => n + s.rows, 0), partitions: r.state.layout.partitions, operator: r.state.operator };
}

describe('transformWithState through SIGKILL and a repartition', () => {
  it('the model has timers that fire and timers the final watermark leaves', () => {
    const fired = EXPECTED.filter((k) => k.includes('"timer"')).length;
    expect(fired).toBeGreaterThan(100);
    expect(new Set(INPUT.flat().map((e) => `${e.user}:${e.t + TIMER}`)).size).toBeGreaterThan(fired);
  });

  it('10 kills at random moments, then a run to the end: every row and every fired timer exactly once, two state rows per user', async () => {
    const dirs = scenarioDirs();
    await killScenario({
      child: CHILD,
      dirs,
      kills: { seed: 0x7116, count: 10, startupShare: 0.2, batchPhases: 3 },
      expectOutput: (d) => expect(committedRows(d.out).map(rowKey).sort()).toEqual(EXPECTED),
      inspect: (_run, state) => ({ manifests: state.manifests.length }),
      atLeastMidRun: 3,
    });
    const state = stateKeys(dirs.ckpt);
    expect(state.operator).toBe('transformWithStateExec');
    // Spark's rows: per user its count and its list of recent seqs.
    expect(state.rows).toBe(2 * NUM_USERS);
  });

  it('repartitioned between runs (6 partitions to 3 offline with the CLI, then to 5 at a start): timers and state move, and the output is exact', async () => {
    const dirs = scenarioDirs();
    const rest = tempDir('sluice-tws-rest-');
    const held = readdirSync(dirs.input)
      .sort()
      .slice(6)
      .map((f) => [join(dirs.input, f), join(rest, f)] as const);
    for (const [from, to] of held) renameSync(from, to);
    expectCompleted(await runChild(dirs));
    const before = stateKeys(dirs.ckpt);
    expect(before.rows).toBeGreaterThan(5);
    sluice(process.env, 'checkpoint', 'repartition', dirs.ckpt, '--partitions', '3');
    expect(stateKeys(dirs.ckpt)).toEqual({ ...before, partitions: 3 });
    for (const [from, to] of held) renameSync(to, from);
    expectCompleted(await runChild(dirs, { ...process.env, SLUICE_TEST_PARTITIONS: '5' }));
    expect(committedRows(dirs.out).map(rowKey).sort()).toEqual(EXPECTED);
    expect(stateKeys(dirs.ckpt)).toEqual({ rows: 2 * NUM_USERS, partitions: 5, operator: 'transformWithStateExec' });
  });
});
