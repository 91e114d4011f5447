/**
 * Joins of two streams end to end (docs/guides/joins.md, "Stream-stream joins"): Spark's documented ad
 * impressions and clicks example as written, then the same query in a child process
 * (test/fixtures/stream-join-child.mjs) SIGKILLed at random moments and at fault points, and
 * repartitioned mid-stream, restarted on its checkpoint each time. Whatever happens, the sink must
 * end up with exactly the rows of an independent model: each impression with every click of its
 * ad within the hour after it, or once with no click when it has none. Spark's own join suites are
 * in spark-stream-join.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { expr, type OutputMode } from '@sluice/driver';
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

const CHILD = fileURLToPath(new URL('./fixtures/stream-join-child.mjs', import.meta.url));
const SLUICE = fileURLToPath(new URL('../packages/driver/dist/cli/sluice.js', import.meta.url));

afterAll(removeTempDirs);

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

describe("Spark's ad impressions and clicks example", () => {
  it('runs as written: a click within the hour joins its impression, an impression without one comes out once the watermark passes it', async () => {
    const dirA = tempDir();
    const dirB = tempDir();
    const ckpt = tempDir();
    const out = tempDir();
    writeInput(
      dirA,
      'a0.json',
      jsonLines([
        { impressionAdId: 'a1', impressionTime: iso(T0) },
        { impressionAdId: 'a2', impressionTime: iso(T0) },
        { impressionAdId: 'a3', impressionTime: iso(T0 + 10 * MIN) },
      ]),
    );
    writeInput(
      dirB,
      'b0.json',
      jsonLines([
        { clickAdId: 'a1', clickTime: iso(T0 + 30 * MIN) },
        // An hour and a minute after its impression: outside the condition's range.
        { clickAdId: 'a3', clickTime: iso(T0 + 71 * MIN) },
      ]),
    );
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (session) => {
      const impressions = session.readStream
        .format('json')
        .schema('impressionAdId STRING, impressionTime TIMESTAMP')
        .load(dirA)
        .withWatermark('impressionTime', '2 hours');
      const clicks = session.readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load(dirB).withWatermark('clickTime', '3 hours');
      const q = await impressions
        .join(
          clicks,
          expr(`clickAdId = impressionAdId AND clickTime >= impressionTime
        AND clickTime <= impressionTime + interval 1 hour`),
          'leftOuter',
        )
        .writeStream.format('json')
        .option('checkpointLocation', ckpt)
        .start(out);
      try {
        await q.processAllAvailable();
        expect(readSinkJson(out)).toEqual([{ impressionAdId: 'a1', impressionTime: iso(T0), clickAdId: 'a1', clickTime: iso(T0 + 30 * MIN) }]);
        // The data batch stored all five rows; the no-data batch its watermark made due kept them.
        expect(q.recentProgress.map((p) => p.stateOperators?.map((o) => [o.operatorName, o.numRowsTotal, o.numRowsUpdated, o.numRowsRemoved]))).toEqual([
          [['symmetricHashJoin', 5, 5, 0]],
          [['symmetricHashJoin', 5, 0, 0]],
        ]);

        // Ten hours on: the watermark is min(10h - 2h, 10h - 3h) = 7h; impressions before 6h and
        // clicks before 7h can match nothing any more. a2 and a3 never matched: they come out with nulls.
        writeInput(dirA, 'a1.json', jsonLines([{ impressionAdId: 'a9', impressionTime: iso(T0 + 10 * HOUR) }]));
        writeInput(dirB, 'b1.json', jsonLines([{ clickAdId: 'a8', clickTime: iso(T0 + 10 * HOUR) }]));
        await q.processAllAvailable();
        const rows = readSinkJson(out);
        expect(rows.slice(1).sort((x, y) => String(x.impressionAdId).localeCompare(String(y.impressionAdId)))).toEqual([
          { impressionAdId: 'a2', impressionTime: iso(T0) },
          { impressionAdId: 'a3', impressionTime: iso(T0 + 10 * MIN) },
        ]);
        expect(q.lastProgress?.eventTime.watermark).toBe(iso(T0 + 7 * HOUR));
        expect(q.lastProgress?.stateOperators?.[0]).toEqual(expect.objectContaining({ numRowsTotal: 2, numRowsRemoved: 5 }));
      } finally {
        await q.stop();
      }
    });
  });
});

describe('combined with union and stream-static joins', () => {
  it("a side that is a union of two streams, the other joined with a static table first: every pair once, with the table's column", async () => {
    const table = tempDir();
    writeInput(
      table,
      'names.json',
      jsonLines([
        { uid: 'u1', name: 'Ann' },
        { uid: 'u2', name: 'Bob' },
      ]),
    );
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 3 }, async (s) => {
      const webA = s.memoryStream('web_a', 'user STRING, page STRING');
      const webB = s.memoryStream('web_b', 'user STRING, page STRING');
      const buys = s.memoryStream('buys', 'uid STRING, item STRING');
      const views = s.readStream.format('memory').load('web_a').union(s.readStream.format('memory').load('web_b'));
      const named = s.readStream.format('memory').load('buys').join(s.read.format('json').schema('uid STRING, name STRING').load(table), 'uid');
      const q = await views.join(named, expr('user = uid')).writeStream.format('memory').queryName('combined').start();
      try {
        webA.addData([{ user: 'u1', page: 'home' }]);
        webB.addData([
          { user: 'u2', page: 'cart' },
          { user: 'u3', page: 'home' },
        ]);
        buys.addData([
          { uid: 'u1', item: 'book' },
          { uid: 'u2', item: 'pen' },
        ]);
        await q.processAllAvailable();
        // A later view of u1, from the second input, meets the stored purchase.
        webB.addData([{ user: 'u1', page: 'faq' }]);
        await q.processAllAvailable();
        const rows = (await s.memoryTable('combined')).map((r) => `${String(r.user)} ${String(r.page)} ${String(r.item)} ${String(r.name)}`).sort();
        expect(rows).toEqual(['u1 faq book Ann', 'u1 home book Ann', 'u2 cart pen Bob']);
        // Three sources: the union's two inputs, then the right side's.
        expect(q.lastProgress?.sources).toHaveLength(3);
        expect(q.lastProgress?.stateOperators?.[0]?.numRowsTotal).toBe(6);
      } finally {
        await q.stop();
      }
    });
  });

  it('refuses what Spark refuses, with its code', async () => {
    await withSession({ 'sluice.executor.cores': 1 }, async (s) => {
      s.memoryStream('l1', 'k STRING, t TIMESTAMP');
      s.memoryStream('r1', 'rk STRING, rt TIMESTAMP');
      const l = s.readStream.format('memory').load('l1').withWatermark('t', '1 minute');
      const r = s.readStream.format('memory').load('r1').withWatermark('rt', '1 minute');
      const start = (df: ReturnType<typeof l.join>, mode: OutputMode = 'append') =>
        df.writeStream.format('memory').queryName(`q${Math.random()}`).outputMode(mode).start();
      // No bound on the state of an outer join: Spark's rule.
      await expect(start(l.join(r, expr('k = rk'), 'left_outer'))).rejects.toMatchObject({ code: 'UNSUPPORTED_OPERATION' });
      await expect(start(l.join(r, expr('k = rk')), 'update')).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE', option: 'outputMode' });
      expect(() => l.join(r, expr('t > rt'))).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: 'Stream-stream join without equality predicate is not supported' }),
      );
      expect(() => l.join(r, expr('k = rk'), 'left_anti')).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', option: 'how' }));
      // An aggregation before or after the join chains: in append mode, grouped by event time.
      await expect(start(l.join(r, expr('k = rk')).groupBy('k').count())).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE' });
      await expect(start(l.groupBy('k').count().join(r, expr('k = rk')))).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE' });
    });
  });
});

// ---- the crash scenario ----------------------------------------------------------------------------

interface Impression {
  id: string;
  t: number;
}
interface Click {
  id: string;
  t: number;
}

const NUM_FILES = 16;
const PER_FILE = 12;
/** maxFilesPerTrigger of each source (the child's). */
const FILES_PER_BATCH = 2;

/**
 * Seeded input: file f of each side covers 10 minutes of event time from T0 + f × 10 min; each
 * impression gets 0, 1 or 2 clicks 0-70 minutes after it (those past the hour match nothing), and
 * a few clicks are of ads never shown. The last file of each side holds one impression and its
 * click a day later, whose watermark closes every other impression. Nothing is late: the clicks
 * lag their impressions by far less than the delays.
 */
function makeInput(): { impressions: Impression[][]; clicks: Click[][] } {
  const rand = mulberry32(0x10ad);
  const impressions: Impression[][] = [];
  const clicks: Click[][] = Array.from({ length: NUM_FILES + 1 }, () => []);
  let n = 0;
  for (let f = 0; f < NUM_FILES; f++) {
    const file: Impression[] = [];
    for (let r = 0; r < PER_FILE; r++) {
      const imp = { id: `ad${n++}`, t: T0 + f * 10 * MIN + Math.floor(rand() * 10 * MIN) };
      file.push(imp);
      const k = Math.floor(rand() * 3);
      for (let c = 0; c < k; c++) clicks[f]?.push({ id: imp.id, t: imp.t + Math.floor(rand() * 70 * MIN) });
      if (rand() < 0.1) clicks[f]?.push({ id: `unknown${n}`, t: imp.t });
    }
    impressions.push(file);
  }
  const last = T0 + 24 * HOUR;
  impressions.push([{ id: 'final', t: last }]);
  clicks[NUM_FILES] = [{ id: 'final', t: last + MIN }];
  return { impressions, clicks };
}

const INPUT = makeInput();

type OutRow = Record<string, unknown>;
const rowKey = (r: OutRow): string => JSON.stringify([r.impressionAdId, r.impressionTime, r.clickAdId ?? null, r.clickTime ?? null]);

/** The model: every impression with each click of its ad in [t, t + 1 hour], or alone. */
function expectedRows(): string[] {
  const clicks = INPUT.clicks.flat();
  const rows: OutRow[] = [];
  for (const imp of INPUT.impressions.flat()) {
    const matched = clicks.filter((c) => c.id === imp.id && c.t >= imp.t && c.t <= imp.t + HOUR);
    if (matched.length === 0) rows.push({ impressionAdId: imp.id, impressionTime: iso(imp.t) });
    for (const c of matched) rows.push({ impressionAdId: imp.id, impressionTime: iso(imp.t), clickAdId: c.id, clickTime: iso(c.t) });
  }
  return rows.map(rowKey).sort();
}

const EXPECTED = expectedRows();
/** The data batches, then the trailing no-data batch that the final watermark makes due. */
const NUM_BATCHES = Math.ceil((NUM_FILES + 1) / FILES_PER_BATCH) + 1;

function scenarioDirs(): ChildDirs {
  const input = tempDir('sluice-sjoin-in-');
  mkdirSync(join(input, 'impressions'));
  mkdirSync(join(input, 'clicks'));
  // Files named and timed in order, so that each batch reads the same files on every run.
  INPUT.impressions.forEach((f, i) => {
    writeInput(
      join(input, 'impressions'),
      `i${String(i).padStart(3, '0')}.json`,
      jsonLines(f.map((e) => ({ impressionAdId: e.id, impressionTime: iso(e.t) }))),
      1_700_000_000 + i,
    );
  });
  INPUT.clicks.forEach((f, i) => {
    writeInput(
      join(input, 'clicks'),
      `c${String(i).padStart(3, '0')}.json`,
      jsonLines(f.map((e) => ({ clickAdId: e.id, clickTime: iso(e.t) }))),
      1_700_000_000 + i,
    );
  });
  return { input, out: tempDir('sluice-sjoin-out-'), ckpt: tempDir('sluice-sjoin-ckpt-') };
}

const runChild = (dirs: ChildDirs, opts: { kill?: KillAt; fault?: string } = {}) => runKillChild(CHILD, dirs, opts);

function expectFinalOutput(out: string): void {
  expect(committedRows(out).map(rowKey).sort()).toEqual(EXPECTED);
}

function expectAllCommitted(dirs: ChildDirs): void {
  const all = Array.from({ length: NUM_BATCHES }, (_, i) => i);
  expect(logState(dirs.ckpt, dirs.out)).toEqual({ offsets: all, commits: all, manifests: all });
}

describe('a join of two streams through SIGKILL, fault points and a repartition', () => {
  it('the model has matched clicks, impressions without one, and clicks past the hour', () => {
    const alone = EXPECTED.filter((k) => k.endsWith(',null,null]')).length;
    expect(alone).toBeGreaterThan(20);
    expect(EXPECTED.length - alone).toBeGreaterThan(100);
    const late = INPUT.clicks.flat().filter((c) => {
      const imp = INPUT.impressions.flat().find((i) => i.id === c.id);
      return imp !== undefined && c.t > imp.t + HOUR;
    });
    expect(late.length).toBeGreaterThan(5);
  });

  it('10 kills at random moments, then a run to the end: every joined row and every unmatched impression exactly once', async () => {
    const dirs = scenarioDirs();
    const calDirs = { input: dirs.input, out: tempDir('sluice-sjoin-out-'), ckpt: tempDir('sluice-sjoin-ckpt-') };
    const calRun = await runChild(calDirs);
    expectCompleted(calRun);
    expectFinalOutput(calDirs.out);
    const cal = calibrate(calRun);
    expect(cal.numBatches).toBe(NUM_BATCHES);

    const plan = planKills(0x5101, 10, cal, { startupShare: 0.2, batchPhases: 3 });
    const kills = await killAndRestart(CHILD, dirs, plan, (_run, state) => ({ manifests: state.manifests.length }));
    const final = await runChild(dirs);
    expectCompleted(final);
    expectFinalOutput(dirs.out);
    expectAllCommitted(dirs);
    const midRun = kills.filter((k) => k.ended === 'SIGKILL' && k.commits > k.commitsBefore && k.commits < NUM_BATCHES);
    expect(midRun.length, 'kills that landed mid-run').toBeGreaterThanOrEqual(3);
  });

  it.each(['after-state-commit:4', 'after-sink-commit:4', 'before-commit-log:4', `before-commit-log:${NUM_BATCHES}`])(
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

  it('repartitioned between runs (8 partitions to 3 offline with the CLI, then to 5 at a start): the state moves, rows count as rows, and the output is exact', async () => {
    const dirs = scenarioDirs();
    // A first run over the first files only, to its end.
    const rest = tempDir('sluice-sjoin-rest-');
    const held = (side: string, from: number) =>
      readdirSync(join(dirs.input, side))
        .sort()
        .slice(from)
        .map((f) => [join(dirs.input, side, f), join(rest, f)] as const);
    const moves = [...held('impressions', 6), ...held('clicks', 6)];
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
    expect(before.state.operator).toBe('symmetricHashJoin');
    expect(rowsOf(before)).toBeGreaterThan(50);

    // The CLI moves the state offline; the rows of the join's values are counted through the move.
    sluice('checkpoint', 'repartition', dirs.ckpt, '--partitions', '3');
    const after = inspect();
    expect(after.state.layout.partitions).toBe(3);
    expect(rowsOf(after)).toBe(rowsOf(before));

    // The rest of the files, and a start asking for 5 partitions: the state moves again, then the query runs to the end.
    for (const [from, to] of moves) renameSync(to, from);
    const run = await runKillChild(CHILD, dirs, {}, env);
    expectCompleted(run);
    expectFinalOutput(dirs.out);
    expect(inspect().state.layout.partitions).toBe(5);
  });
});
