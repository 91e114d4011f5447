/**
 * Session windows end to end (docs/guides/stateful-operators.md, "Session windows"): the snippet as written, the
 * output modes and refusals, then the same query in a child process
 * (test/fixtures/session-window-child.mjs) SIGKILLed at random moments and at fault points, and
 * repartitioned mid-stream, restarted on its checkpoint each time. Whatever happens, the sink must
 * end up with exactly the sessions of an independent model: per user, events in time order, a
 * session running on while the next event comes within 5 minutes of the session's end. Spark's own
 * scenarios are in spark-session-window.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { col, count, session_window, when, window, window_time, type DataFrame, type OutputMode, type Session } from '@sluice/driver';
import { jsonLines, readSinkJson, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';
import {
  calibrate,
  committedRows,
  expectCompleted,
  expectKilled,
  killAndRestart,
  logState,
  mulberry32,
  planKills,
  runChild as runKillChild,
  type ChildDirs,
  type KillAt,
} from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/session-window-child.mjs', import.meta.url));
const SLUICE = fileURLToPath(new URL('../packages/driver/dist/cli/sluice.js', import.meta.url));

afterAll(removeTempDirs);

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();
const GAP = 5 * MIN;

interface Event {
  userId: string;
  t: number;
}
type OutRow = Record<string, unknown>;

/** A sink row as a comparable key: user, session start and end, count. */
const rowKey = (r: OutRow): string => {
  const w = r.session_window as { start: string; end: string };
  return JSON.stringify([r.userId, w.start, w.end, Number(r.count)]);
};

/** The model: each user's events in time order; a session goes on while the next event starts at or before its end. */
function sessionsOf(events: readonly Event[], gap = GAP): Array<{ userId: string; start: number; end: number; count: number }> {
  const byUser = new Map<string, number[]>();
  for (const e of events) byUser.set(e.userId, [...(byUser.get(e.userId) ?? []), e.t]);
  const out: Array<{ userId: string; start: number; end: number; count: number }> = [];
  for (const [userId, times] of byUser) {
    times.sort((a, b) => a - b);
    let cur: { userId: string; start: number; end: number; count: number } | undefined;
    for (const t of times) {
      if (cur !== undefined && t <= cur.end) {
        cur.end = Math.max(cur.end, t + gap);
        cur.count += 1;
        continue;
      }
      cur = { userId, start: t, end: t + gap, count: 1 };
      out.push(cur);
    }
  }
  return out;
}

const keysOf = (sessions: ReturnType<typeof sessionsOf>): string[] => sessions.map((s) => JSON.stringify([s.userId, iso(s.start), iso(s.end), s.count])).sort();

const at = (userId: string, minutes: number): { userId: string; timestamp: string } => ({ userId, timestamp: iso(T0 + minutes * MIN) });

describe('session windows', () => {
  it('runs the snippet as written: sessions merge across batches, and each comes out once the watermark passes its end', async () => {
    const dir = tempDir('sluice-session-in-');
    const out = tempDir('sluice-session-out-');
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (session) => {
      writeInput(dir, 'a.json', jsonLines([at('u1', 30), at('u1', 37), at('u2', 31)]), 1_700_000_000);
      const events = session.readStream.format('json').schema('userId STRING, timestamp TIMESTAMP').load(dir);
      const q = await events
        .withWatermark('timestamp', '10 minutes')
        .groupBy(session_window('timestamp', '5 minutes'), 'userId')
        .count()
        .writeStream.format('json')
        .option('checkpointLocation', tempDir('sluice-session-ckpt-'))
        .start(out);
      try {
        await q.processAllAvailable();
        expect(readSinkJson(out)).toEqual([]);
        // u1 at 33 bridges its two sessions [30, 35) and [37, 42) into one; 50 opens another. The
        // watermark becomes 40 and closes u2's [31, 36).
        writeInput(dir, 'b.json', jsonLines([at('u1', 33), at('u1', 50)]), 1_700_000_001);
        await q.processAllAvailable();
        expect(readSinkJson(out).map(rowKey)).toEqual([JSON.stringify(['u2', iso(T0 + 31 * MIN), iso(T0 + 36 * MIN), 1])]);
        const ops = q.lastProgress?.stateOperators ?? [];
        expect(ops.map((o) => [o.operatorName, o.numRowsTotal])).toEqual([['sessionWindowStateStoreSaveExec', 2]]);

        writeInput(dir, 'c.json', jsonLines([at('u3', 100)]), 1_700_000_002);
        await q.processAllAvailable();
        expect(readSinkJson(out).map(rowKey).sort()).toEqual(
          [
            ['u2', 31, 36, 1],
            ['u1', 30, 42, 3],
            ['u1', 50, 55, 1],
          ]
            .map(([u, s, e, n]) => JSON.stringify([u, iso(T0 + (s as number) * MIN), iso(T0 + (e as number) * MIN), n]))
            .sort(),
        );
        expect(q.lastProgress?.stateOperators[0]?.numRowsTotal).toBe(1);
      } finally {
        await q.stop();
      }
    });
  });

  it("complete mode gives every session each batch, the open ones too; a per-row gap sets each user's sessions", async () => {
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const m = s.memoryStream('session_complete', 'userId STRING, timestamp TIMESTAMP');
      const gap = when(col('userId').equalTo('u1'), '5 minutes').otherwise('20 minutes');
      const q = await s.readStream
        .format('memory')
        .load('session_complete')
        .groupBy(session_window(col('timestamp'), gap), col('userId'))
        .agg(count('*').alias('n'))
        .writeStream.format('memory')
        .queryName('session_complete_out')
        .outputMode('complete')
        .start();
      try {
        m.addData([at('u1', 0), at('u1', 6), at('u2', 0), at('u2', 15)]);
        await q.processAllAvailable();
        const rows = async () =>
          (await s.memoryTable('session_complete_out'))
            .map((r) => {
              const w = r.session_window as { start: Date; end: Date };
              return [r.userId, (w.start.getTime() - T0) / MIN, (w.end.getTime() - T0) / MIN, Number(r.n)];
            })
            .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
        expect(await rows()).toEqual([
          ['u1', 0, 5, 1],
          ['u1', 6, 11, 1],
          ['u2', 0, 35, 2],
        ]);
        m.addData([at('u1', 4)]);
        await q.processAllAvailable();
        expect(await rows()).toEqual([
          ['u1', 0, 11, 3],
          ['u2', 0, 35, 2],
        ]);
      } finally {
        await q.stop();
      }
    });
  });

  it('chains with other stateful operators in append mode: a deduplication before, an aggregation over window_time after, a window count before', async () => {
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (s) => {
      const m = s.memoryStream('session_chains', 'userId STRING, timestamp TIMESTAMP');
      const events = s.readStream.format('memory').load('session_chains').withWatermark('timestamp', '10 minutes');
      const perUser = (df: DataFrame) => df.groupBy(session_window('timestamp', '5 minutes'), 'userId');
      const queries: Array<[string, DataFrame]> = [
        ['dedup_then_session', perUser(events.dropDuplicates(['userId', 'timestamp'])).count()],
        [
          'session_then_hourly',
          perUser(events)
            .count()
            .groupBy(window(window_time('session_window'), '1 hour'))
            .agg(count('*').alias('sessions')),
        ],
        [
          'minutes_then_session',
          events
            .groupBy(window('timestamp', '1 minute'), 'userId')
            .count()
            .groupBy(session_window(window_time('window'), '5 minutes'), 'userId')
            .agg(count('*').alias('minutes')),
        ],
      ];
      const started = await Promise.all(queries.map(([name, df]) => df.writeStream.format('memory').queryName(name).outputMode('append').start()));
      try {
        m.addData([at('u1', 0), at('u1', 0), at('u1', 3), at('u2', 1)]);
        for (const q of started) await q.processAllAvailable();
        m.addData([at('u3', 200)]);
        for (const q of started) await q.processAllAvailable();
        const table = async (name: string) => JSON.parse(JSON.stringify(await s.memoryTable(name))) as OutRow[];
        const sessionKey = (r: OutRow, n: string) =>
          JSON.stringify([r.userId, (r.session_window as { start: string }).start, (r.session_window as { end: string }).end, Number(r[n])]);
        const k = (u: string, start: string, end: string, n: number) => JSON.stringify([u, `2026-01-01T00:${start}Z`, `2026-01-01T00:${end}Z`, n]);
        // The duplicate row at minute 0 counts once: u1's session [0, 8) has 2 rows.
        expect((await table('dedup_then_session')).map((r) => sessionKey(r, 'count')).sort()).toEqual([
          k('u1', '00:00.000', '08:00.000', 2),
          k('u2', '01:00.000', '06:00.000', 1),
        ]);
        // Two sessions closed in the first hour.
        expect(await table('session_then_hourly')).toEqual([{ window: { start: '2026-01-01T00:00:00.000Z', end: '2026-01-01T01:00:00.000Z' }, sessions: 2 }]);
        // u1's minutes 0 and 3 (window_time 0:00:59.999 and 0:03:59.999) are one session of 2 minutes.
        expect((await table('minutes_then_session')).map((r) => sessionKey(r, 'minutes')).sort()).toEqual([
          k('u1', '00:59.999', '08:59.999', 2),
          k('u2', '01:59.999', '06:59.999', 1),
        ]);
        expect(started[1]!.lastProgress?.stateOperators.map((o) => o.operatorName)).toEqual(['stateStoreSave', 'sessionWindowStateStoreSaveExec']);
      } finally {
        for (const q of started) await q.stop();
      }
    });
  });

  it('refuses what Spark refuses, with its code', async () => {
    await withSession({ 'sluice.executor.cores': 1 }, async (s: Session) => {
      s.memoryStream('session_refused', 'userId STRING, timestamp TIMESTAMP, label STRING');
      const events = s.readStream.format('memory').load('session_refused').withWatermark('timestamp', '10 minutes');
      const start = (df: DataFrame, mode: OutputMode, name: string) => df.writeStream.format('memory').queryName(name).outputMode(mode).start();
      const perUser = events.groupBy(session_window('timestamp', '5 minutes'), 'userId').count();
      await expect(start(perUser, 'update', 'sw_update')).rejects.toMatchObject({
        code: 'UNSUPPORTED_OUTPUT_MODE',
        message: expect.stringContaining('Update output mode not supported for session window'),
      });
      const global = events.groupBy(session_window('timestamp', '5 minutes')).count();
      await expect(start(global, 'append', 'sw_global')).rejects.toMatchObject({
        code: 'UNSUPPORTED_OPERATION',
        message: expect.stringContaining('Global aggregation with session window'),
      });
      expect(() => session_window('timestamp', '0 seconds')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
      expect(() => events.groupBy(session_window('label', '5 minutes'), 'userId').count()).toThrow(
        expect.objectContaining({ code: 'DATATYPE_MISMATCH', message: expect.stringContaining('must be TIMESTAMP') }),
      );
      expect(() => events.groupBy(session_window('timestamp', '5 minutes'), window('timestamp', '5 minutes'), 'userId').count()).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('at most one window or session window') }),
      );
    });
  });
});

// ---- through SIGKILL, fault points and a repartition ------------------------------------------

const NUM_FILES = 12;
const USERS = 8;

/**
 * Seeded input: file f covers 20 minutes of event time from T0 + f × 20 min, its events in no
 * order, users' gaps random (so sessions break and merge, within a file and across files). The
 * last file holds one event a day later, whose watermark closes every other session. Nothing is
 * late: an event is at most 20 minutes before the latest of the files before it, which the
 * watermark trails by 10.
 */
function makeInput(): Event[][] {
  const rand = mulberry32(0x5e55);
  const files: Event[][] = [];
  for (let f = 0; f < NUM_FILES; f++) {
    const file: Event[] = [];
    for (let i = 0; i < 16; i++) file.push({ userId: `u${Math.floor(rand() * USERS)}`, t: T0 + f * 20 * MIN + Math.floor(rand() * 20 * MIN) });
    files.push(file);
  }
  files.push([{ userId: 'final', t: T0 + 24 * 60 * MIN }]);
  return files;
}

const INPUT = makeInput();
const EXPECTED = keysOf(sessionsOf(INPUT.flat()).filter((s) => s.userId !== 'final'));
/** The data batches (one file each), then the no-data batch that the last file's watermark makes due. */
const NUM_BATCHES = NUM_FILES + 2;

function scenarioDirs(): ChildDirs {
  const input = tempDir('sluice-session-in-');
  // Files named and timed in order, so that each batch reads the same file on every run.
  INPUT.forEach((f, i) => {
    writeInput(input, `e${String(i).padStart(3, '0')}.json`, jsonLines(f.map((e) => ({ userId: e.userId, timestamp: iso(e.t) }))), 1_700_000_000 + i);
  });
  return { input, out: tempDir('sluice-session-out-'), ckpt: tempDir('sluice-session-ckpt-') };
}

const runChild = (dirs: ChildDirs, opts: { kill?: KillAt; fault?: string } = {}) => runKillChild(CHILD, dirs, opts);

function expectFinalOutput(out: string): void {
  expect(committedRows(out).map(rowKey).sort()).toEqual(EXPECTED);
}

function expectAllCommitted(dirs: ChildDirs): void {
  const all = Array.from({ length: NUM_BATCHES }, (_, i) => i);
  expect(logState(dirs.ckpt, dirs.out)).toEqual({ offsets: all, commits: all, manifests: all });
}

describe('session windows through SIGKILL, fault points and a repartition', () => {
  it('the model has sessions of one event and of several, merged across files', () => {
    const sessions = sessionsOf(INPUT.flat());
    expect(sessions.filter((s) => s.count === 1).length).toBeGreaterThan(10);
    expect(sessions.filter((s) => s.count >= 3).length).toBeGreaterThan(5);
    const acrossFiles = sessions.filter((s) => Math.floor((s.start - T0) / (20 * MIN)) !== Math.floor((s.end - GAP - T0) / (20 * MIN)));
    expect(acrossFiles.length).toBeGreaterThan(3);
  });

  it('10 kills at random moments, then a run to the end: every session exactly once', async () => {
    const dirs = scenarioDirs();
    const calDirs = { input: dirs.input, out: tempDir('sluice-session-out-'), ckpt: tempDir('sluice-session-ckpt-') };
    const calRun = await runChild(calDirs);
    expectCompleted(calRun);
    expectFinalOutput(calDirs.out);
    const cal = calibrate(calRun);
    expect(cal.numBatches).toBe(NUM_BATCHES);

    const plan = planKills(0x5e55, 10, cal, { startupShare: 0.2, batchPhases: 3 });
    const kills = await killAndRestart(CHILD, dirs, plan, (_run, state) => ({ manifests: state.manifests.length }));
    const final = await runChild(dirs);
    expectCompleted(final);
    expectFinalOutput(dirs.out);
    expectAllCommitted(dirs);
    const midRun = kills.filter((k) => k.ended === 'SIGKILL' && k.commits > k.commitsBefore && k.commits < NUM_BATCHES);
    expect(midRun.length, 'kills that landed mid-run').toBeGreaterThanOrEqual(3);
  });

  it.each(['after-state-commit:4', 'after-sink-commit:4', 'before-commit-log:4', `before-commit-log:${NUM_BATCHES - 1}`])(
    'dies at %s, and a restart completes exactly once',
    async (point) => {
      const dirs = scenarioDirs();
      expectKilled(await runChild(dirs, { fault: point }), `at ${point}`);
      const final = await runChild(dirs);
      expectCompleted(final);
      expectFinalOutput(dirs.out);
      expectAllCommitted(dirs);
    },
  );

  it('repartitioned between runs (8 partitions to 3 offline with the CLI, then to 5 at a start): sessions count as rows, and the output is exact', async () => {
    const dirs = scenarioDirs();
    const rest = tempDir('sluice-session-rest-');
    const moves = readdirSync(dirs.input)
      .sort()
      .slice(6)
      .map((f) => [join(dirs.input, f), join(rest, f)] as const);
    for (const [from, to] of moves) renameSync(from, to);
    expectCompleted(await runChild(dirs));
    const env = { ...process.env, SLUICE_TEST_PARTITIONS: '5' };
    const sluice = (...args: string[]) => {
      const r = spawnSync(process.execPath, [SLUICE, ...args], { env, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const inspect = () =>
      JSON.parse(sluice('checkpoint', 'inspect', dirs.ckpt, '--json')) as {
        state: { operator: string; layout: { partitions: number }; shards: Array<{ rows: number }> };
      };
    const rowsOf = (r: ReturnType<typeof inspect>) => r.state.shards.reduce((n, s) => n + s.rows, 0);
    const before = inspect();
    expect(before.state.operator).toBe('sessionWindowStateStoreSaveExec');
    // The state holds the sessions still open after the first 6 files: rows are sessions, not users.
    const firstFiles = INPUT.slice(0, 6).flat();
    const open = sessionsOf(firstFiles).filter((x) => x.end > Math.max(...firstFiles.map((e) => e.t)) - 10 * MIN);
    expect(rowsOf(before)).toBe(open.length);

    sluice('checkpoint', 'repartition', dirs.ckpt, '--partitions', '3');
    const after = inspect();
    expect(after.state.layout.partitions).toBe(3);
    expect(rowsOf(after)).toBe(rowsOf(before));

    for (const [from, to] of moves) renameSync(to, from);
    const run = await runKillChild(CHILD, dirs, {}, env);
    expectCompleted(run);
    expectFinalOutput(dirs.out);
    expect(inspect().state.layout.partitions).toBe(5);
  });
});
