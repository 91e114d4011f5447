/**
 * Several stateful operators in one query (docs/guides/stateful-operators.md, "Several stateful operators"): the
 * chained aggregation as Spark's guide writes it, checked against a model of its semantics, across
 * SIGKILL at fault points and a restart; each operator's state under its own id and layout file,
 * and one progress entry per operator, nearest the sink first. Spark's own scenarios are in
 * spark-multi-stateful.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { col, expr, window, window_time, type MemoryStream } from '@sluice/driver';
import { addTuples, memoryStream, runSparkTest, SparkStreamTest } from './sparkStreamTest.js';
import { jsonLines, readDoc, readSinkJson, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';
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
} from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/chained-child.mjs', import.meta.url));
const JOINED_CHILD = fileURLToPath(new URL('./fixtures/aggregated-join-child.mjs', import.meta.url));
const SLUICE = fileURLToPath(new URL('../packages/driver/dist/cli/sluice.js', import.meta.url));

afterAll(removeTempDirs);

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

/** Files of words in time order: file f covers minutes [f × 20, f × 20 + 20) (3 hours in all), then one far later. */
function inputFiles(): Array<Array<{ word: string; t: number }>> {
  const files: Array<Array<{ word: string; t: number }>> = [];
  for (let f = 0; f < 9; f++) {
    const rows: Array<{ word: string; t: number }> = [];
    for (let i = 0; i < 12; i++) rows.push({ word: ['a', 'b', 'c'][(f + i) % 3] as string, t: T0 + (f * 20 + ((i * 7) % 20)) * MIN });
    files.push(rows);
  }
  files.push([{ word: 'z', t: T0 + 24 * 60 * MIN }]);
  return files;
}

const FILES = inputFiles();

/** The model: per hour, the number of (10-minute window, word) groups that had rows; every hour closed but the last file's. */
function expectedHours(): Array<{ start: string; count: number }> {
  const groups = new Set<string>();
  for (const { word, t } of FILES.slice(0, -1).flat()) groups.add(`${Math.floor(t / (10 * MIN))}|${word}`);
  const hours = new Map<number, number>();
  for (const g of groups) {
    const tenMinutes = Number(g.split('|')[0]);
    const hour = Math.floor((tenMinutes * 10 * MIN) / (60 * MIN)) * 60 * MIN;
    hours.set(hour, (hours.get(hour) ?? 0) + 1);
  }
  return [...hours].sort((a, b) => a[0] - b[0]).map(([h, count]) => ({ start: iso(h), count }));
}

const hoursOf = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => ({ start: (r.window as { start: string }).start, count: Number(r.count) })).sort((a, b) => a.start.localeCompare(b.start));

function scenarioDirs(): ChildDirs {
  const input = tempDir('sluice-chain-in-');
  FILES.forEach((rows, i) => {
    writeInput(input, `f${String(i).padStart(3, '0')}.json`, jsonLines(rows.map((r) => ({ word: r.word, timestamp: iso(r.t) }))), 1_700_000_000 + i);
  });
  return { input, out: tempDir('sluice-chain-out-'), ckpt: tempDir('sluice-chain-ckpt-') };
}

describe('an aggregation after an aggregation', () => {
  it("runs Spark's snippet as written: counts per 10 minutes and word, then those per hour, each hour once it closes", async () => {
    const dirs = scenarioDirs();
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (s) => {
      const words = s.readStream.format('json').schema('word STRING, timestamp TIMESTAMP').option('maxFilesPerTrigger', 1).load(dirs.input);
      const q = await words
        .withWatermark('timestamp', '10 minutes')
        .groupBy(window('timestamp', '10 minutes'), 'word')
        .count()
        .groupBy(window(window_time('window'), '1 hour'))
        .count()
        .writeStream.format('json')
        .option('checkpointLocation', dirs.ckpt)
        .start(dirs.out);
      try {
        await q.processAllAvailable();
        expect(hoursOf(readSinkJson(dirs.out))).toEqual(expectedHours());
        // One entry per operator, the second aggregation's (nearest the sink) first.
        const ops = q.lastProgress?.stateOperators ?? [];
        expect(ops.map((o) => o.operatorName)).toEqual(['stateStoreSave', 'stateStoreSave']);
        // Left in state: the last file's 10-minute group (first operator); nothing in the second.
        expect(ops.map((o) => o.numRowsTotal)).toEqual([0, 1]);
      } finally {
        await q.stop();
      }
    });
    // Each operator's state under its own id, with its own layout file.
    for (const id of [0, 1]) {
      expect(readDoc(join(dirs.ckpt, 'state', String(id), 'layout'))).toEqual(expect.objectContaining({ operator: 'stateStoreSave', partitions: 4 }));
      expect(existsSync(join(dirs.ckpt, 'state', String(id), 'shard-0'))).toBe(true);
    }
  });

  it('refuses update and complete output modes, as Spark does', async () => {
    await withSession({ 'sluice.executor.cores': 1 }, async (s) => {
      s.memoryStream('chain_modes', 'word STRING, timestamp TIMESTAMP');
      const df = s.readStream
        .format('memory')
        .load('chain_modes')
        .withWatermark('timestamp', '1 minute')
        .groupBy(window('timestamp', '1 minute'), 'word')
        .count()
        .groupBy(window(window_time('window'), '1 hour'))
        .count();
      for (const mode of ['update', 'complete'] as const) {
        await expect(df.writeStream.format('memory').queryName(`chain_${mode}`).outputMode(mode).start()).rejects.toMatchObject({
          code: 'UNSUPPORTED_OUTPUT_MODE',
        });
      }
    });
  });
});

describe('through SIGKILL at fault points', () => {
  it.each(['after-state-commit:3', 'after-state-commit:6', 'before-commit-log:4'])('dies at %s, and a restart gives every hour once', async (point) => {
    const dirs = scenarioDirs();
    expectKilled(await runKillChild(CHILD, dirs, { fault: point }), `at ${point}`);
    expectCompleted(await runKillChild(CHILD, dirs));
    expect(hoursOf(committedRows(dirs.out))).toEqual(expectedHours());
  });
});

interface OperatorReport {
  operatorId: number;
  operator: string;
  layout: { partitions: number; shards: number };
  shards: Array<{ rows: number }>;
}

/** Moves the input files from the `from`-th on into another directory, and back with the function it returns. */
function holdBack(dirs: ChildDirs, from: number): () => void {
  const rest = tempDir('sluice-chain-rest-');
  const moves = readdirSync(dirs.input)
    .sort()
    .slice(from)
    .map((f) => [join(dirs.input, f), join(rest, f)] as const);
  for (const [a, b] of moves) renameSync(a, b);
  return () => {
    for (const [a, b] of moves) renameSync(b, a);
  };
}

function inspectOperators(ckpt: string): OperatorReport[] {
  const r = spawnSync(process.execPath, [SLUICE, 'checkpoint', 'inspect', ckpt, '--json'], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { operators: OperatorReport[] }).operators;
}

describe('the state of both operators', () => {
  it("repartitioned between runs (4 partitions to 3 offline with the CLI, then to 5 at a start): each operator's state moves, its rows kept, and the output is exact", async () => {
    const dirs = scenarioDirs();
    const restore = holdBack(dirs, 5);
    expectCompleted(await runKillChild(CHILD, dirs));
    const env = { ...process.env, SLUICE_TEST_PARTITIONS: '5' };
    const sluice = (...args: string[]) => {
      const r = spawnSync(process.execPath, [SLUICE, ...args], { env, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const inspect = () => inspectOperators(dirs.ckpt);
    const rowsOf = (op: OperatorReport) => op.shards.reduce((n, s) => n + s.rows, 0);
    const before = inspect();
    expect(before.map((o) => [o.operatorId, o.operator, o.layout.partitions])).toEqual([
      [0, 'stateStoreSave', 4],
      [1, 'stateStoreSave', 4],
    ]);
    // Mid-stream: open 10-minute groups in the first operator, the open hour's counts in the second.
    expect(before.map(rowsOf).every((n) => n > 0)).toBe(true);

    // Offline with the CLI: one control batch per operator, the first operator's then the second's.
    const printed = sluice('checkpoint', 'repartition', dirs.ckpt, '--partitions', '3');
    expect(printed).toMatch(/in control batch \d+: 4 partitions in 2 shards -> 3 in 2/);
    expect(printed).toMatch(/\(stateful operator 1\) in control batch \d+: 4 partitions in 2 shards -> 3 in 2/);
    const after = inspect();
    expect(after.map((o) => o.layout.partitions)).toEqual([3, 3]);
    expect(after.map(rowsOf)).toEqual(before.map(rowsOf));
    expect(sluice('checkpoint', 'inspect', dirs.ckpt)).toMatch(/state 1 +stateStoreSave: 3 partitions in 2 shards/);

    // The rest of the files, and a start asking for 5 partitions: both move again, then the query runs to the end.
    restore();
    expectCompleted(await runKillChild(CHILD, dirs, {}, env));
    expect(hoursOf(committedRows(dirs.out))).toEqual(expectedHours());
    expect(inspect().map((o) => o.layout.partitions)).toEqual([5, 5]);
  });

  it("a restart with other counts moves each operator's state in its own control batch, and each progress entry shows what moved of its state", async () => {
    const dirs = scenarioDirs();
    const restore = holdBack(dirs, 5);
    const run = (conf: Record<string, unknown>) =>
      withSession({ 'sluice.sql.shuffle.partitions': 4, 'sluice.sql.streaming.stateStore.shards': 2, ...conf }, async (s) => {
        const q = await s.readStream
          .format('json')
          .schema('word STRING, timestamp TIMESTAMP')
          .option('maxFilesPerTrigger', 1)
          .load(dirs.input)
          .withWatermark('timestamp', '10 minutes')
          .groupBy(window('timestamp', '10 minutes'), 'word')
          .count()
          .groupBy(window(window_time('window'), '1 hour'))
          .count()
          .writeStream.format('json')
          .option('checkpointLocation', dirs.ckpt)
          .start(dirs.out);
        try {
          await q.processAllAvailable();
          return q.recentProgress;
        } finally {
          await q.stop();
        }
      });
    await run({});
    const held = inspectOperators(dirs.ckpt).map((o) => o.shards[1]?.rows ?? 0);
    expect(held.every((n) => n > 0)).toBe(true);
    restore();
    // 2 shards to 1: each operator's shard 1 moves whole into shard 0.
    const [first] = await run({ 'sluice.sql.streaming.stateStore.shards': 1 });
    expect(first?.stateOperators.map((o) => o.customMetrics?.numRowsMoved)).toEqual([...held].reverse());
    expect(first?.durationMs['controlBatch.REPARTITION']).toBeGreaterThanOrEqual(0);
    expect(inspectOperators(dirs.ckpt).map((o) => o.layout.shards)).toEqual([1, 1]);
    expect(hoursOf(readSinkJson(dirs.out))).toEqual(expectedHours());
  });

  it.each([
    ['a deleted', (shard: string) => rmSync(shard, { recursive: true })],
    [
      'an emptied',
      (shard: string) => {
        rmSync(shard, { recursive: true });
        mkdirSync(shard);
      },
    ],
  ])('%s shard of the second operator stops the restart with STATE_STORE_CORRUPT naming it, and nothing more is written', async (_how, damage) => {
    const dirs = scenarioDirs();
    const restore = holdBack(dirs, 5);
    expectCompleted(await runKillChild(CHILD, dirs));
    const written = committedRows(dirs.out);
    const shard = join(dirs.ckpt, 'state', '1', 'shard-1');
    expect(existsSync(shard)).toBe(true);
    damage(shard);
    restore();
    const run = await runKillChild(CHILD, dirs);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/FAILED STATE_STORE_CORRUPT/);
    expect(run.stderr).toContain(shard);
    expect(committedRows(dirs.out)).toEqual(written);
  });
});

// ---- a join of two aggregations -------------------------------------------------------------------

const JOIN_FILES = 12;

/**
 * Seeded input of the two sides: file f of each covers minutes [f × 10, f × 10 + 10), values 1-99;
 * side b has no rows in its files 4 and 9 (their windows join nothing), and the last file of each
 * side holds one row a day later, whose watermark closes every other window. Nothing is late.
 */
function joinInput(): { a: Array<Array<{ v: number; t: number }>>; b: Array<Array<{ v: number; t: number }>> } {
  const rand = mulberry32(0x5a95);
  const side = (skip: number[]) =>
    Array.from({ length: JOIN_FILES }, (_, f) =>
      skip.includes(f) ? [] : Array.from({ length: 8 }, () => ({ v: 1 + Math.floor(rand() * 99), t: T0 + f * 10 * MIN + Math.floor(rand() * 10 * MIN) })),
    ).concat([[{ v: 1, t: T0 + 24 * 60 * MIN }]]);
  return { a: side([]), b: side([4, 9]) };
}

const JOIN_INPUT = joinInput();

/** The model: per 10-minute window both sides have rows in (the last one's aside, still open), its end and each side's sum. */
function expectedJoin(): string[] {
  const sums = (files: Array<Array<{ v: number; t: number }>>) => {
    const m = new Map<number, number>();
    for (const { v, t } of files.slice(0, -1).flat()) {
      const end = (Math.floor(t / (10 * MIN)) + 1) * 10 * MIN;
      m.set(end, (m.get(end) ?? 0) + v);
    }
    return m;
  };
  const a = sums(JOIN_INPUT.a);
  const b = sums(JOIN_INPUT.b);
  return [...a]
    .filter(([end]) => b.has(end))
    .map(([end, sumA]) => JSON.stringify([iso(end), sumA, b.get(end)]))
    .sort();
}

const EXPECTED_JOIN = expectedJoin();
const joinedRows = (out: string) =>
  committedRows(out)
    .map((r) => JSON.stringify([r.end, Number(r.sumA), Number(r.sumB)]))
    .sort();

function joinDirs(): ChildDirs {
  const input = tempDir('sluice-aggjoin-in-');
  for (const name of ['a', 'b'] as const) {
    mkdirSync(join(input, name));
    JOIN_INPUT[name].forEach((rows, i) => {
      writeInput(join(input, name), `${name}${String(i).padStart(3, '0')}.json`, jsonLines(rows.map((r) => ({ v: r.v, t: iso(r.t) }))), 1_700_000_000 + i);
    });
  }
  return { input, out: tempDir('sluice-aggjoin-out-'), ckpt: tempDir('sluice-aggjoin-ckpt-') };
}

describe('a join of two aggregations through SIGKILL, fault points and a repartition', () => {
  it('the model joins most windows, and leaves out the ones side b lacks', () => {
    expect(EXPECTED_JOIN.length).toBe(JOIN_FILES - 2);
  });

  it('10 kills at random moments, then a run to the end: every joined window exactly once', async () => {
    const dirs = joinDirs();
    const calDirs = { input: dirs.input, out: tempDir('sluice-aggjoin-out-'), ckpt: tempDir('sluice-aggjoin-ckpt-') };
    const calRun = await runKillChild(JOINED_CHILD, calDirs);
    expectCompleted(calRun);
    expect(joinedRows(calDirs.out)).toEqual(EXPECTED_JOIN);
    const cal = calibrate(calRun);
    const plan = planKills(0x49829, 10, cal, { startupShare: 0.2, batchPhases: 3 });
    const kills = await killAndRestart(JOINED_CHILD, dirs, plan, (_run, state) => ({ manifests: state.manifests.length }));
    expectCompleted(await runKillChild(JOINED_CHILD, dirs));
    expect(joinedRows(dirs.out)).toEqual(EXPECTED_JOIN);
    const all = logState(calDirs.ckpt, calDirs.out).commits;
    expect(logState(dirs.ckpt, dirs.out)).toEqual({ offsets: all, commits: all, manifests: all });
    const midRun = kills.filter((k) => k.ended === 'SIGKILL' && k.commits > k.commitsBefore && k.commits < all.length);
    expect(midRun.length, 'kills that landed mid-run').toBeGreaterThanOrEqual(3);
  });

  it.each(['after-state-commit:3', 'after-sink-commit:5', 'before-commit-log:6'])('dies at %s, and a restart completes exactly once', async (point) => {
    const dirs = joinDirs();
    expectKilled(await runKillChild(JOINED_CHILD, dirs, { fault: point }), `at ${point}`);
    expectCompleted(await runKillChild(JOINED_CHILD, dirs));
    expect(joinedRows(dirs.out)).toEqual(EXPECTED_JOIN);
  });

  it("repartitioned mid-stream (4 partitions to 3 offline with the CLI, then to 5 at a start): the three operators' state moves, and the output is exact", async () => {
    const dirs = joinDirs();
    const rest = tempDir('sluice-aggjoin-rest-');
    const moves = (['a', 'b'] as const).flatMap((name) => {
      mkdirSync(join(rest, name));
      return readdirSync(join(dirs.input, name))
        .sort()
        .slice(6)
        .map((f) => [join(dirs.input, name, f), join(rest, name, f)] as const);
    });
    for (const [from, to] of moves) renameSync(from, to);
    expectCompleted(await runKillChild(JOINED_CHILD, dirs));
    const before = inspectOperators(dirs.ckpt);
    // Ids: side b's aggregation, side a's, then the join.
    expect(before.map((o) => o.operator)).toEqual(['stateStoreSave', 'stateStoreSave', 'symmetricHashJoin']);
    const rowsOf = (op: OperatorReport) => op.shards.reduce((n, sh) => n + sh.rows, 0);
    expect(
      before
        .slice(0, 2)
        .map(rowsOf)
        .every((n) => n > 0),
    ).toBe(true);
    const r = spawnSync(process.execPath, [SLUICE, 'checkpoint', 'repartition', dirs.ckpt, '--partitions', '3'], {
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(3);
    const after = inspectOperators(dirs.ckpt);
    expect(after.map((o) => o.layout.partitions)).toEqual([3, 3, 3]);
    expect(after.map(rowsOf)).toEqual(before.map(rowsOf));
    for (const [from, to] of moves) renameSync(to, from);
    expectCompleted(await runKillChild(JOINED_CHILD, dirs, {}, { ...process.env, SLUICE_TEST_PARTITIONS: '5' }));
    expect(joinedRows(dirs.out)).toEqual(EXPECTED_JOIN);
    expect(inspectOperators(dirs.ckpt).map((o) => o.layout.partitions)).toEqual([5, 5, 5]);
  });
});

describe('a deduplication before a join of two streams', () => {
  it('a side deduplicated within its watermark joins once per key: a later duplicate within the delay meets nothing', async () => {
    let left!: MemoryStream;
    let right!: MemoryStream;
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df),
      (s) => {
        const [l, ldf] = memoryStream(s, 'lid STRING, value INT');
        const [r, rdf] = memoryStream(s, 'rid STRING, value INT');
        [left, right] = [l, r];
        const views = ldf
          .select(col('lid'), expr('timestamp_seconds(value)').alias('lt'))
          .withWatermark('lt', '10 seconds')
          .dropDuplicatesWithinWatermark(['lid']);
        const clicks = rdf.select(col('rid'), expr('timestamp_seconds(value)').alias('rt')).withWatermark('rt', '10 seconds');
        return views
          .join(clicks, expr('lid = rid AND rt >= lt AND rt <= lt + interval 10 seconds'), 'inner')
          .select(col('lid'), col('lt').cast('long'), col('rt').cast('long'));
      },
      async (t) => {
        addTuples(left, ['lid', 'value'], ['a', 1], ['b', 3]);
        await t.checkNewAnswer();
        // a at 2 s is a duplicate of a at 1 s (kept until 11 s): it never reaches the join.
        addTuples(left, ['lid', 'value'], ['a', 2]);
        await t.checkNewAnswer();
        addTuples(right, ['rid', 'value'], ['a', 5], ['b', 6]);
        await t.checkNewAnswer(['a', 1, 5], ['b', 3, 6]);
        const ops = t.query.lastProgress?.stateOperators.map((o) => o.operatorName);
        expect(ops).toEqual(['symmetricHashJoin', 'dedupeWithinWatermark']);
      },
    );
  });
});
