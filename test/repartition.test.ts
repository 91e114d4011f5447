/**
 * On-demand state repartitioning, as a user does it: stop the seed query, set a new
 * stateStore.partitions (or stateStore.shards), start it again on the same checkpoint. After the
 * last planned batch, a REPARTITION control batch moves the state; every count stays right, and
 * the next progress event says how long the move took. Crashes at any moment of it are resumed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Session, type StreamingQueryProgress } from '@sluice/driver';
// @ts-expect-error: a plain JavaScript fixture module without types
import { IDS, ROWS_PER_BATCH, seedQuery } from './fixtures/repartition-query.mjs';
import { txnVersion } from './deltaLog.js';
import { readDoc, readSinkJson, removeTempDirs, tempDir, withSession } from './helpers.js';
import { logIds, mulberry32, runChild as runHarnessChild, type ChildRun } from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/repartition-child.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));
const MIN = 60_000;

afterAll(removeTempDirs);

interface Dirs {
  out: string;
  ckpt: string;
}

let seededBase: Dirs | undefined;

/**
 * Its own copy of a checkpoint and sink after 16 runs (one batch each) at 8 partitions on 2
 * shards, built once for the tests that start from there.
 */
async function seeded(): Promise<Dirs> {
  if (!seededBase) {
    const base = dirs();
    for (let i = 0; i < 16; i++) await runWith(base, 8, 2);
    seededBase = base;
  }
  const d = dirs();
  cpSync(seededBase.out, d.out, { recursive: true });
  cpSync(seededBase.ckpt, d.ckpt, { recursive: true });
  return d;
}

function dirs(): Dirs {
  const root = tempDir('sluice-repartition-');
  return { out: join(root, 'out'), ckpt: join(root, 'ckpt') };
}

/** One run in this process with the layout given (and the sink's format); returns its progress events. */
async function runWith(d: Dirs, partitions: number, shards?: number, format = 'json'): Promise<StreamingQueryProgress[]> {
  const conf = { 'sluice.sql.streaming.stateStore.partitions': partitions, ...(shards !== undefined && { 'sluice.sql.streaming.stateStore.shards': shards }) };
  return withSession(conf, async (session) => {
    const q = await seedQuery(session, d.out, d.ckpt, format);
    await q.awaitTermination();
    return q.recentProgress;
  });
}

/**
 * The sink against the independent count: batch k holds ROWS_PER_BATCH values stamped k minutes,
 * so each closed 5-minute window counts 5 × ROWS_PER_BATCH / IDS per id; a window is closed once
 * the committed watermark reached its end. Each must be there exactly once.
 */
function expectExactOutput(d: Dirs, sinkRows: Array<Record<string, unknown>> = readSinkJson(d.out)): number {
  const commits = join(d.ckpt, 'commits');
  const last = logIds(commits).at(-1) as number;
  const watermark = readDoc(join(commits, String(last))).nextBatchWatermarkMs as number;
  const expected: string[] = [];
  for (let start = 0; start + 5 * MIN <= watermark; start += 5 * MIN) {
    for (let id = 0; id < IDS; id++) expected.push(`${start}|${id}|${(5 * ROWS_PER_BATCH) / IDS}`);
  }
  const rows = sinkRows.map((r) => `${new Date((r.window as { start: string | Date }).start).getTime()}|${String(r.id)}|${String(r.count)}`);
  expect(rows.sort()).toEqual(expected.sort());
  return expected.length;
}

function layoutOf(d: Dirs): { partitions: number; shards: number; shardOfPartition: number[] } {
  return readDoc(join(d.ckpt, 'state', '0', 'layout')) as never;
}

describe('repartitioning the seed query at restart', () => {
  it('200 -> 100 -> 7 -> 64 partitions, then 2 -> 1 -> 3 shards: every count stays exact', async () => {
    const d = dirs();
    for (let i = 0; i < 18; i++) await runWith(d, 200, 2); // 18 minutes of data: windows closed, and open ones in state
    expect(expectExactOutput(d)).toBe(IDS);
    for (const [partitions, shards] of [
      [100, 2],
      [7, 2],
      [64, 2],
      [64, 1],
      [64, 3],
    ] as const) {
      const before = layoutOf(d);
      const progress = await runWith(d, partitions, shards);
      const first = progress[0] as StreamingQueryProgress;
      // The control batch has no progress event of its own: the first data batch after it says.
      expect(first.durationMs).toHaveProperty(['controlBatch.REPARTITION']);
      expect(first.stateOperators[0]).toMatchObject({ numShufflePartitions: partitions, numStateStoreInstances: shards });
      expect(Object.keys(first.stateOperators[0]?.customMetrics ?? {}).sort()).toEqual(['numBytesMoved', 'numKeyGroupsMoved', 'numRowsMoved']);
      if (before.shards === shards && partitions === 100) expect(first.stateOperators[0]?.customMetrics.numKeyGroupsMoved).toBe(0);
      expect(progress.slice(1).every((p) => p.durationMs['controlBatch.REPARTITION'] === undefined)).toBe(true);
      const layout = layoutOf(d);
      expect([layout.partitions, layout.shards]).toEqual([partitions, shards]);
      expectExactOutput(d);
      // The offset log holds the control batch, with both layouts.
      const control = readDoc(join(d.ckpt, 'offsets', String(first.batchId - 1)));
      expect(control).toMatchObject({ kind: 'control', control: { type: 'REPARTITION', from: { partitions: before.partitions }, to: { partitions } } });
    }
    // A start with the same layout runs no control batch.
    const again = await runWith(d, 64, 3);
    expect(again[0]?.durationMs['controlBatch.REPARTITION']).toBeUndefined();
    expect(expectExactOutput(d)).toBe(2 * IDS); // the windows of minutes 0-10 closed, across five moves
  });

  it("the seed page's snippet as written, into .format('delta'): 200 -> 100 partitions, the table exact, its txn the last batch", async () => {
    const d = dirs();
    for (let i = 0; i < 16; i++) await runWith(d, 200, 2, 'delta'); // 16 minutes of data: the window of minutes 0-5 closed
    const table = (): Promise<Array<Record<string, unknown>>> => withSession({}, (s) => s.read.format('delta').load(d.out).collect());
    expect(expectExactOutput(d, await table())).toBe(IDS);
    const progress = await runWith(d, 100, 2, 'delta');
    expect(progress[0]?.durationMs).toHaveProperty(['controlBatch.REPARTITION']);
    expect(layoutOf(d).partitions).toBe(100);
    for (let i = 0; i < 5; i++) await runWith(d, 100, 2, 'delta');
    expect(expectExactOutput(d, await table())).toBe(2 * IDS);
    const lastBatch = logIds(join(d.ckpt, 'commits')).at(-1);
    const { id } = JSON.parse(readFileSync(join(d.ckpt, 'metadata'), 'utf8').split('\n')[1]!) as { id: string };
    expect(txnVersion(d.out, id)).toBe(lastBatch);
  });

  it("shards 'auto' follow the slots; fewer shards than slots warn once; listeners see the move in the next progress event", async () => {
    const d = dirs();
    await runWith(d, 8, 1);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const session = await Session.create({
        conf: { 'sluice.executor.cores': 2, 'sluice.sql.streaming.stateStore.partitions': 8, 'sluice.sql.streaming.stateStore.shards': 'auto' },
      });
      const heard: StreamingQueryProgress[] = [];
      session.streams.addListener({ onQueryProgress: ({ progress }) => void heard.push(progress) });
      try {
        const q = await seedQuery(session, d.out, d.ckpt);
        await q.awaitTermination();
      } finally {
        await session.close();
      }
      expect(layoutOf(d).shards).toBe(2);
      expect(heard[0]?.durationMs).toHaveProperty(['controlBatch.REPARTITION']);
      expect(heard[0]?.stateOperators[0]?.numStateStoreInstances).toBe(2);
      await runWith(d, 8, 1); // back to one shard on two slots
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    const below = warnings.filter((w) => (w as { code?: string }).code === 'SLUICE_STATE_SHARDS_BELOW_SLOTS');
    expect(below).toHaveLength(1);
    expect(below[0]?.message).toMatch(/1 shard\(s\) on 2 slots.*stateStore\.shards to 2 \(or 'auto'\)/);
  });

  it('a partition count above the key groups is refused at start()', async () => {
    const d = dirs();
    await runWith(d, 8, 2);
    await expect(runWith(d, 5000, 2)).rejects.toMatchObject({ code: 'INVALID_CONF', option: 'sluice.sql.streaming.stateStore.partitions' });
  });
});

/** One run of the child with the layout given (killHarness.runChild: a hang fails the test). */
function runChild(d: Dirs, partitions: number, shards: number, opts: { killAfterMs?: number; fault?: string } = {}): Promise<ChildRun> {
  return runHarnessChild(CHILD, [d.out, d.ckpt, String(partitions), String(shards)], {
    ...(opts.fault !== undefined && { fault: opts.fault }),
    ...(opts.killAfterMs !== undefined && { kill: { from: 'spawn' as const, afterMs: opts.killAfterMs } }),
  });
}

describe('stopping around a repartition', () => {
  it('a stop asked for while the last planned batch is replayed commits that batch and leaves the move to the next start', async () => {
    const d = await seeded();
    expect((await runChild(d, 8, 2, { fault: 'after-offsets-write' })).signal).toBe('SIGKILL');
    const planned = logIds(join(d.ckpt, 'offsets')).at(-1) as number;
    const session = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.streaming.stateStore.partitions': 4 } });
    try {
      const q = await seedQuery(session, d.out, d.ckpt);
      await q.stop();
      expect(q.exception).toBeNull();
    } finally {
      await session.close();
    }
    // The replayed batch committed; no control batch was planned, and the layout is the old one.
    expect(logIds(join(d.ckpt, 'commits'))).toContain(planned);
    expect(logIds(join(d.ckpt, 'offsets'))).not.toContain(planned + 1);
    expect(layoutOf(d).partitions).toBe(8);
    const progress = await runWith(d, 4);
    expect(progress[0]?.durationMs).toHaveProperty(['controlBatch.REPARTITION']);
    expect(progress[0]?.stateOperators[0]).toMatchObject({ numShufflePartitions: 4 });
    expect(expectExactOutput(d)).toBeGreaterThan(0);
  });
});

describe('crashes during repartitioning', () => {
  it('20 layout changes, each with a SIGKILL at a random moment or a repartition fault point: the output stays exact', async () => {
    const d = dirs();
    for (let i = 0; i < 12; i++) expect((await runChild(d, 8, 2)).stdout).toContain('DONE');
    const layouts = [
      [100, 2],
      [7, 2],
      [64, 3],
      [16, 1],
      [200, 2],
    ] as const;
    const faults = ['repartition-mid-copy', 'repartition-after-layout-commit', 'repartition-mid-gc'];
    const seed = Number(process.env.SLUICE_KILL_SEED ?? 8);
    const rand = mulberry32(seed);
    console.log(`kill seed ${seed}`);
    const killedAt: string[] = [];
    for (let i = 0; i < 20; i++) {
      const [partitions, shards] = layouts[i % layouts.length] as readonly [number, number];
      const fault = i < 9 ? `${faults[i % 3]}:${1 + (i % 2)}` : undefined;
      const first = await runChild(d, partitions, shards, fault ? { fault } : { killAfterMs: 50 + Math.floor(rand() * 400) });
      killedAt.push(first.signal === 'SIGKILL' ? (fault ?? 'random') : `ended (${fault ?? 'random'})`);
      const finish = await runChild(d, partitions, shards);
      expect(finish.stdout, `restart ${i}: ${finish.stdout}`).toContain('DONE');
      expect([layoutOf(d).partitions, layoutOf(d).shards]).toEqual([partitions, shards]);
      expectExactOutput(d);
    }
    // Every repartition fault point was reached at least once.
    for (const f of faults) expect(killedAt.some((k) => k.startsWith(f))).toBe(true);
  }, 240_000);

  it('a start asking for a third count while a repartition is unfinished finishes it, then moves on to its own, each step exact under the fault points', async () => {
    const d = dirs();
    for (let i = 0; i < 12; i++) await runChild(d, 8, 2);
    const controls = () =>
      logIds(join(d.ckpt, 'offsets'))
        .map((id) => readDoc(join(d.ckpt, 'offsets', String(id))))
        .filter((e) => e.kind === 'control')
        .map((e) => (e.control as { to: { partitions: number; shards: number } }).to)
        .map((to) => `${to.partitions}/${to.shards}`);
    // 8 -> 7 partitions moves the key groups at the boundary of the two shards.
    expect((await runChild(d, 7, 2, { fault: 'repartition-mid-copy' })).signal).toBe('SIGKILL');
    // A start asking for 100: it finishes the move to 7 (the first layout commit), then is killed
    // at the second, in its own move to 100.
    expect((await runChild(d, 100, 2, { fault: 'repartition-after-layout-commit:2' })).signal).toBe('SIGKILL');
    expect(controls()).toEqual(['7/2', '100/2']);
    expect([layoutOf(d).partitions, layoutOf(d).shards]).toEqual([100, 2]);
    expect((await runChild(d, 100, 2)).stdout).toContain('DONE');
    expectExactOutput(d);
    // Killed while the move to 16 in 1 shard removed what it moved; the next start asks for 64 in
    // 3 and is killed copying, in its own move after finishing the clean-up of the first.
    expect((await runChild(d, 16, 1, { fault: 'repartition-mid-gc' })).signal).toBe('SIGKILL');
    expect((await runChild(d, 64, 3, { fault: 'repartition-mid-copy' })).signal).toBe('SIGKILL');
    expect(controls().slice(2)).toEqual(['16/1', '64/3']);
    expect([layoutOf(d).partitions, layoutOf(d).shards]).toEqual([16, 1]);
    const done = await runChild(d, 64, 3);
    expect(done.stdout).toContain('DONE');
    expect([layoutOf(d).partitions, layoutOf(d).shards]).toEqual([64, 3]);
    expect(controls().slice(2)).toEqual(['16/1', '64/3']);
    expectExactOutput(d);
  });

  it('two control batches before one data batch report their moves added up in its progress event', async () => {
    const d = await seeded();
    const next = (logIds(join(d.ckpt, 'offsets')).at(-1) as number) + 1;
    expect((await runChild(d, 7, 2, { fault: 'repartition-mid-copy' })).signal).toBe('SIGKILL');
    const progress = await runWith(d, 4, 1);
    const first = progress[0] as StreamingQueryProgress;
    const kinds = [next, next + 1, next + 2].map((id) => readDoc(join(d.ckpt, 'offsets', String(id))).kind);
    expect(kinds).toEqual(['control', 'control', 'data']);
    expect(first.batchId).toBe(next + 2);
    expect(first.durationMs).toHaveProperty(['controlBatch.REPARTITION']);
    // 8 -> 7 in 2 shards moves the boundary's key groups from shard 1 to shard 0; 7 in 2 -> 4 in 1
    // moves the rest of shard 1: together each of its 2048 key groups once.
    expect(first.stateOperators[0]?.customMetrics.numKeyGroupsMoved).toBe(2048);
    expect(first.stateOperators[0]).toMatchObject({ numShufflePartitions: 4, numStateStoreInstances: 1 });
    expectExactOutput(d);
  });
});

const SLUICE = fileURLToPath(new URL('../packages/driver/dist/cli/sluice.js', import.meta.url));
const LEGACY = fileURLToPath(new URL('./fixtures/legacy-checkpoints/stateful/checkpoint', import.meta.url));

function sluice(...args: string[]): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  return sluiceWithFault(undefined, ...args);
}

function sluiceWithFault(fault: string | undefined, ...args: string[]): ReturnType<typeof sluice> {
  const env = { ...process.env };
  delete env.SLUICE_FAULT;
  if (fault) env.SLUICE_FAULT = fault;
  const r = spawnSync(process.execPath, [SLUICE, ...args], { cwd: REPO, env, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
  // A CLI past the time limit is hung, never the SIGKILL a fault point sends.
  if (r.error) throw new Error(`sluice ${args.join(' ')}: ${r.error.message}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('the sluice CLI', () => {
  it('is on the path after the install: pnpm exec sluice --help', () => {
    const help = execFileSync('pnpm', ['exec', 'sluice', 'checkpoint', '--help'], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
    expect(help).toContain('inspect [options] <dir>');
    expect(help).toContain('repartition [options] <dir>');
  });

  it('checkpoint inspect --json describes a known checkpoint: id, last batch, pinned settings, layout, rows per shard and partition', () => {
    const ckpt = join(tempDir(), 'ckpt');
    cpSync(LEGACY, ckpt, { recursive: true });
    const meta = readDoc(join(ckpt, 'metadata'));
    const r = sluice('checkpoint', 'inspect', ckpt, '--json');
    expect(r.stderr).toBe('');
    interface Report {
      state: {
        shards: Array<{ shard: number; rows: number; bytes: number; partitions: number[] }>;
        partitions: Array<{ shard: number; rows: number; bytes: number }>;
      };
    }
    const report = JSON.parse(r.stdout) as Report;
    expect(report).toMatchObject({
      queryId: meta.id,
      lastBatch: { planned: 4, kind: 'data', committed: 3, uncommitted: true },
      pinned: { keyHash: 'murmur3-32', keyGroups: 4096 },
      state: { layout: { partitions: 4, shards: 2, shardOfPartition: [0, 0, 1, 1] } },
    });
    // Windows of minutes 1, 2 and 3, three ids each (minute 0 was evicted; 3 came with batch 4).
    const { shards, partitions: parts } = report.state;
    expect(shards.reduce((n, s) => n + s.rows, 0)).toBe(9);
    expect(shards.map((s) => s.partitions)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    for (const s of shards) {
      const mine = parts.filter((p) => p.shard === s.shard);
      expect(mine.reduce((n, p) => n + p.rows, 0)).toBe(s.rows);
      expect(mine.reduce((n, p) => n + p.bytes, 0)).toBe(s.bytes);
    }
    expect(sluice('checkpoint', 'inspect', ckpt).stdout).toContain(`query id    ${String(meta.id)}`);
  });

  it('checkpoint repartition moves the state offline; the restart with the new count runs no control batch and counts exactly', async () => {
    const d = await seeded();
    const r = sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '7', '--shards', '3');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/8 partitions in 2 shards -> 7 in 3; moved \d+ key groups, \d+ rows/);
    expect([layoutOf(d).partitions, layoutOf(d).shards]).toEqual([7, 3]);
    const progress = await runWith(d, 7, 3);
    expect(progress[0]?.durationMs['controlBatch.REPARTITION']).toBeUndefined();
    expect(progress[0]?.stateOperators[0]).toMatchObject({ numShufflePartitions: 7, numStateStoreInstances: 3 });
    expect(expectExactOutput(d)).toBeGreaterThan(0);
  });

  it('finishes a repartition killed mid-copy when run again with --shards left out, as a start with neither count set does', async () => {
    const d = await seeded();
    const killed = sluiceWithFault('repartition-mid-copy', 'checkpoint', 'repartition', d.ckpt, '--partitions', '8', '--shards', '1');
    expect(killed.signal).toBe('SIGKILL');
    expect(layoutOf(d).shards).toBe(2); // killed before the commit point
    const r = sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '8');
    expect(r.stderr).toBe('');
    expect([layoutOf(d).partitions, layoutOf(d).shards]).toEqual([8, 1]);
    // Asked for a third layout meanwhile, it finishes the unfinished move first, then runs its own.
    const other = await seeded();
    const next = (logIds(join(other.ckpt, 'offsets')).at(-1) as number) + 1;
    sluiceWithFault('repartition-mid-copy', 'checkpoint', 'repartition', other.ckpt, '--partitions', '8', '--shards', '1');
    const both = sluice('checkpoint', 'repartition', other.ckpt, '--partitions', '8', '--shards', '3');
    expect(both.stderr).toBe('');
    expect(both.status).toBe(0);
    expect(both.stdout.trim().split('\n')).toEqual([
      expect.stringContaining(` in control batch ${next}: 8 partitions in 2 shards -> 8 in 1; `),
      expect.stringContaining(` in control batch ${next + 1}: 8 partitions in 1 shards -> 8 in 3; `),
    ]);
    expect([layoutOf(other).partitions, layoutOf(other).shards]).toEqual([8, 3]);
    expect((await runWith(other, 8, 3))[0]?.durationMs['controlBatch.REPARTITION']).toBeUndefined();
    expect(expectExactOutput(other)).toBeGreaterThan(0);
    const progress = await runWith(d, 8, 1);
    expect(progress[0]?.durationMs['controlBatch.REPARTITION']).toBeUndefined();
    expect(expectExactOutput(d)).toBeGreaterThan(0);
  });

  it('finishes a repartition killed while it removed the directory of a shard the new layout drops, half removed', async () => {
    const d = await seeded();
    const killed = sluiceWithFault('repartition-mid-gc', 'checkpoint', 'repartition', d.ckpt, '--partitions', '8', '--shards', '1');
    expect(killed.signal).toBe('SIGKILL');
    expect(layoutOf(d).shards).toBe(1); // past the commit point
    // What a kill in the middle of the removal leaves: the dropped shard's directory without a table file.
    const dropped = join(d.ckpt, 'state', '0', 'shard-1');
    const table = readdirSync(dropped).find((f) => f.endsWith('.ldb'));
    expect(table).toBeDefined();
    rmSync(join(dropped, table as string));
    const r = sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '8', '--shards', '1');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(existsSync(dropped)).toBe(false);
    const progress = await runWith(d, 8, 1);
    expect(progress[0]?.durationMs['controlBatch.REPARTITION']).toBeUndefined();
    expect(progress[0]?.stateOperators[0]).toMatchObject({ numShufflePartitions: 8, numStateStoreInstances: 1 });
    expect(expectExactOutput(d)).toBeGreaterThan(0);
  });

  it('a repartition to the layout the state has already says so and exits 0, writing nothing', async () => {
    const d = await seeded();
    const before = logIds(join(d.ckpt, 'offsets'));
    const r = sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '8', '--shards', '2');
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${d.ckpt} already has 8 partitions in 2 shards: nothing to move\n`);
    expect(logIds(join(d.ckpt, 'offsets'))).toEqual(before);
    // --shards left out keeps the state's.
    expect(sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '8').status).toBe(0);
    expect(logIds(join(d.ckpt, 'offsets'))).toEqual(before);
  });

  it('purges the logs as the query does: --min-batches-to-retain entries kept', async () => {
    const d = await seeded();
    const control = (logIds(join(d.ckpt, 'offsets')).at(-1) as number) + 1;
    const r = sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '4', '--min-batches-to-retain', '3');
    expect(r.status).toBe(0);
    expect(logIds(join(d.ckpt, 'offsets'))).toEqual([control - 2, control - 1, control]);
    expect(logIds(join(d.ckpt, 'commits'))).toEqual([control - 2, control - 1, control]);
    await runWith(d, 4);
    expectExactOutput(d);
  });

  it('refuses a checkpoint in use, and a count it cannot have, with a coded message', async () => {
    const d = dirs();
    await runWith(d, 8, 2);
    const lockHeld = await Session.create({ conf: { 'sluice.executor.cores': 1 } });
    try {
      const q = await seedQuery(lockHeld, d.out, d.ckpt);
      const r = sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '4');
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^sluice: CHECKPOINT_LOCKED: /);
      await q.stop();
    } finally {
      await lockHeld.close();
    }
    expect(sluice('checkpoint', 'repartition', d.ckpt, '--partitions', '5000').stderr).toMatch(/^sluice: INVALID_OPTION: --partitions must be from 1 to 4096/);
    expect(sluice('checkpoint', 'repartition', d.ckpt, '--partitions', 'many').stderr).toMatch(/must be a positive integer/);
  });
});
