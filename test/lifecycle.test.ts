/**
 * Query and session lifecycle as a user sees it: session.close() lets the process exit by itself,
 * stop() and process death release the checkpoint lock while a live holder keeps it, the query
 * manager (active, get, awaitAnyTermination), status and awaitTermination, Trigger.Once and
 * Trigger.AvailableNow, and unique names of active queries.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { col, ManualClock, Session, Trigger, type StreamingQuery } from '@sluice/driver';
import { jsonLines, readSinkJson, sleep, tempDir, useSession, waitUntil, writeInput } from './helpers.js';

const CHILD = fileURLToPath(new URL('./fixtures/close-child.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));
const SCHEMA = 'id STRING, v LONG';

const session = useSession();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

interface Child {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal) when the child ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnChild(args: string[]): Child {
  const proc = spawn(process.execPath, [CHILD, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/** Waits until the child printed `line` on stdout; fails if it exits first or after `timeoutMs`. */
async function waitForLine(child: Child, line: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!child.stdout().split('\n').includes(line)) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`child exited before printing ${line}: stdout=${child.stdout()} stderr=${child.stderr()}`);
    }
    if (Date.now() > deadline) throw new Error(`child did not print ${line} in ${timeoutMs} ms: stderr=${child.stderr()}`);
    await sleep(20);
  }
}

function fileQuery(input: string, ckpt: string, s: Session = session()) {
  return s.readStream.format('json').schema(SCHEMA).load(input).writeStream.format('json').option('checkpointLocation', ckpt);
}

const byV = (rows: Array<Record<string, unknown>>) => [...rows].sort((a, b) => (a.v as number) - (b.v as number));

// ------------------------------------------------------------------------------------------------

describe('session.close()', () => {
  it('lets the process exit by itself after running queries', async () => {
    const child = spawnChild(['close']);
    const result = await Promise.race([child.exited, sleep(10_000).then(() => 'timeout' as const)]);
    if (result === 'timeout') {
      child.proc.kill('SIGKILL');
      throw new Error(`the child did not exit within 10 s of start: stdout=${child.stdout()} stderr=${child.stderr()}`);
    }
    expect(child.stderr()).not.toContain('FAILED');
    expect(result).toEqual({ code: 0, signal: null });
    const lines = child.stdout().split('\n');
    const rows = lines.find((l) => l.startsWith('ROWS '));
    expect(JSON.parse(rows?.slice(5) ?? 'null')).toEqual([
      { id: 'a', v: 1 },
      { id: 'b', v: 2 },
      { id: 'c', v: 3 },
    ]);
    expect(lines).toContain('BATCHES 2');
    // Both queries, the memory one and the timer-driven rate one, were stopped by close().
    expect(lines).toContain('CLOSED false false');
  });

  it('stops the active queries; the closed session refuses new work with SESSION_CLOSED', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 1 } });
    const q = await s.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', 1)
      .load()
      .writeStream.format('memory')
      .queryName('closing')
      .trigger(Trigger.ProcessingTime('20 milliseconds'))
      .start();
    await waitUntil(() => q.recentProgress.length >= 1, 'the first batch of the rate query');
    await s.close();
    expect(q.isActive).toBe(false);
    expect(q.exception).toBeNull();
    expect(s.streams.active).toEqual([]);
    expect(() => s.readStream).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }));
    await s.close(); // idempotent
  });
});

// ------------------------------------------------------------------------------------------------

describe('checkpoint lock', () => {
  it('stop() releases it: a restart in the same process at once works and continues', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    writeInput(input, 'a.json', jsonLines([{ id: 'a', v: 1 }]), 1_000);
    const q1 = await fileQuery(input, ckpt).start(out);
    await q1.processAllAvailable();
    await q1.stop();
    expect(existsSync(join(ckpt, '.lock'))).toBe(false);
    const q2 = await fileQuery(input, ckpt).start(out);
    expect(q2.id).toBe(q1.id);
    writeInput(input, 'b.json', jsonLines([{ id: 'b', v: 2 }]), 2_000);
    await q2.processAllAvailable();
    await q2.stop();
    expect(byV(readSinkJson(out))).toEqual([
      { id: 'a', v: 1 },
      { id: 'b', v: 2 },
    ]);
    // And a third time right away, with nothing new: no batch, no duplicate.
    const q3 = await fileQuery(input, ckpt).start(out);
    await q3.processAllAvailable();
    await q3.stop();
    expect(q3.lastProgress).toBeNull();
    expect(readSinkJson(out)).toHaveLength(2);
  });

  it('a query that failed releases it too', async () => {
    const input = tempDir();
    const ckpt = tempDir();
    writeInput(input, 'bad.json', ['not json'], 1_000);
    const start = (mode: string) =>
      session()
        .readStream.format('json')
        .schema(SCHEMA)
        .option('mode', mode)
        .load(input)
        .writeStream.format('json')
        .option('checkpointLocation', ckpt)
        .start(tempDir());
    const q1 = await start('FAILFAST');
    await expect(q1.awaitTermination()).rejects.toMatchObject({ code: 'MALFORMED_RECORD' });
    const q2 = await start('DROPMALFORMED'); // not refused with CHECKPOINT_LOCKED
    await q2.processAllAvailable();
    expect(q2.isActive).toBe(true);
    await q2.stop();
  });

  it('a live process holding it refuses a query here; after SIGKILL a new query starts and loses nothing', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    writeInput(
      input,
      'a.json',
      jsonLines([
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
      ]),
      1_000,
    );
    const child = spawnChild(['hold', input, out, ckpt]);
    await waitForLine(child, 'READY');

    await expect(fileQuery(input, ckpt).start(out)).rejects.toMatchObject({ code: 'CHECKPOINT_LOCKED', file: ckpt });
    expect(session().streams.active).toHaveLength(0);
    expect(child.proc.exitCode).toBeNull(); // the holder is untouched

    child.proc.kill('SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // The dead holder's lock is stale: never refused.
    const q = await fileQuery(input, ckpt).start(out);
    writeInput(input, 'b.json', jsonLines([{ id: 'c', v: 3 }]), 2_000);
    await q.processAllAvailable();
    expect(q.isActive).toBe(true);
    await q.stop();
    expect(byV(readSinkJson(out))).toEqual([
      { id: 'a', v: 1 },
      { id: 'b', v: 2 },
      { id: 'c', v: 3 },
    ]);
  });

  it('a second query on the same checkpoint in this process is refused while the first runs', async () => {
    const input = tempDir();
    const ckpt = tempDir();
    const q1 = await fileQuery(input, ckpt).start(tempDir());
    await expect(fileQuery(input, ckpt).start(tempDir())).rejects.toMatchObject({ code: 'CHECKPOINT_LOCKED', file: ckpt });
    expect(q1.isActive).toBe(true);
    expect(session().streams.active).toEqual([q1]);
  });
});

// ------------------------------------------------------------------------------------------------

describe('query manager, status and waiting', () => {
  it('streams.active and get(id) list the active queries only', async () => {
    const a = session().memoryStream('mgr_a', SCHEMA);
    const qa = await session().readStream.format('memory').load('mgr_a').writeStream.format('memory').queryName('mgr_a_out').start();
    const qb = await session().readStream.format('memory').load('mgr_a').writeStream.format('memory').queryName('mgr_b_out').start();
    expect(new Set(session().streams.active)).toEqual(new Set([qa, qb]));
    expect(session().streams.get(qa.id)).toBe(qa);
    expect(session().streams.get(qb.id)).toBe(qb);
    expect(session().streams.get('no-such-id')).toBeNull();
    expect(qa.id).not.toBe(qb.id);
    expect(qa.name).toBe('mgr_a_out');
    a.addData([{ id: 'x', v: 1 }]);
    await qa.processAllAvailable();
    await qa.stop();
    expect(session().streams.active).toEqual([qb]);
    expect(session().streams.get(qa.id)).toBeNull();
    expect(session().streams.get(qb.id)).toBe(qb);
    await qb.stop();
    expect(session().streams.active).toEqual([]);
  });

  it('awaitAnyTermination resolves when a Trigger.Once query ends, and rejects with the error of a failing one', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 1 } });
    try {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines([{ id: 'a', v: 1 }]), 1_000);
      const running = await s.readStream
        .format('rate-micro-batch')
        .option('rowsPerBatch', 1)
        .load()
        .writeStream.format('memory')
        .queryName('keeps_running')
        .trigger(Trigger.ProcessingTime('50 milliseconds'))
        .start();
      // Nothing has ended yet: a timed wait gives false.
      expect(await s.streams.awaitAnyTermination(100)).toBe(false);

      const once = await s.readStream
        .format('json')
        .schema(SCHEMA)
        .load(input)
        .writeStream.format('memory')
        .queryName('once_ends')
        .trigger(Trigger.Once())
        .start();
      await expect(s.streams.awaitAnyTermination()).resolves.toBe(true);
      expect(once.isActive).toBe(false);
      expect(running.isActive).toBe(true);
      expect(await s.memoryTable('once_ends')).toEqual([{ id: 'a', v: 1 }]);

      s.streams.resetTerminated();
      const badIn = tempDir();
      writeInput(badIn, 'bad.json', ['{"id":"a","v":1}', '[1,2]'], 1_000);
      const failing = await s.readStream
        .format('json')
        .schema(SCHEMA)
        .option('mode', 'FAILFAST')
        .load(badIn)
        .writeStream.format('memory')
        .queryName('fails')
        .start();
      await expect(s.streams.awaitAnyTermination()).rejects.toMatchObject({ code: 'MALFORMED_RECORD', line: 2 });
      expect(failing.isActive).toBe(false);
      expect(running.isActive).toBe(true); // a failure ends that query alone
      await running.stop();
    } finally {
      await s.close();
    }
  });

  it('status has the Spark shape; awaitTermination(timeoutMs) gives false while running, true after stop', async () => {
    const stream = session().memoryStream('status_in', SCHEMA);
    const q = await session().readStream.format('memory').load('status_in').writeStream.format('memory').queryName('status_out').start();
    stream.addData([{ id: 'a', v: 1 }]);
    await q.processAllAvailable();
    const st = q.status;
    expect(st).toEqual({ message: expect.any(String), isDataAvailable: expect.any(Boolean), isTriggerActive: expect.any(Boolean) });
    expect(Object.keys(st).sort()).toEqual(['isDataAvailable', 'isTriggerActive', 'message']);

    // awaitTermination(300) waits 300 ms of timer time, then gives false: timers faked for that wait.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let answer: boolean | undefined;
      const waiting = q.awaitTermination(300).then((b) => (answer = b));
      await vi.advanceTimersByTimeAsync(299);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
      expect(answer).toBe(false);
    } finally {
      vi.useRealTimers();
    }
    expect(q.isActive).toBe(true);

    await q.stop();
    expect(q.status).toMatchObject({ isDataAvailable: false, isTriggerActive: false });
    expect(await q.awaitTermination(300)).toBe(true);
    expect(await q.awaitTermination()).toBe(true);
    // processAllAvailable on a stopped query returns at once: before any timer or I/O callback could run.
    const first = await Promise.race([q.processAllAvailable().then(() => 'returned'), new Promise((r) => setImmediate(() => r('waited')))]);
    expect(first).toBe('returned');
    await q.stop(); // stopping twice is harmless
    expect(q.exception).toBeNull();
  });

  it('stop() while a slow batch runs ends the query after that batch, which is committed', async () => {
    const batches: number[] = [];
    const q = await session()
      .readStream.format('rate-micro-batch')
      .option('rowsPerBatch', 2)
      .load()
      .writeStream.foreachBatch(async (rows, id) => {
        await sleep(200);
        batches.push(id);
        expect(rows).toHaveLength(2);
      })
      .start();
    await waitUntil(() => q.status.isDataAvailable === true, 'a batch to be running (status.isDataAvailable)');
    await q.stop();
    expect(q.isActive).toBe(false);
    expect(q.exception).toBeNull();
    expect(batches.length).toBeGreaterThanOrEqual(1);
    expect(q.lastProgress?.batchId).toBe(batches.at(-1));
  });
});

// ------------------------------------------------------------------------------------------------

describe('triggers', () => {
  /** Files f0..f4, file i holding i+1 rows with v = 10*i + k, modified in order. */
  function fiveFiles(dir: string): void {
    for (let i = 0; i < 5; i++) {
      writeInput(dir, `f${i}.json`, jsonLines(Array.from({ length: i + 1 }, (_, k) => ({ id: `f${i}`, v: 10 * i + k }))), 1_000 + i);
    }
  }

  it('Trigger.Once runs one batch over everything available, ignoring maxFilesPerTrigger, then stops', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    fiveFiles(input);
    const q = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .option('maxFilesPerTrigger', 2)
      .load(input)
      .writeStream.format('json')
      .option('checkpointLocation', ckpt)
      .trigger(Trigger.Once())
      .start(out);
    expect(await q.awaitTermination(30_000)).toBe(true);
    expect(q.isActive).toBe(false);
    expect(q.exception).toBeNull();
    expect(session().streams.active).not.toContain(q);
    expect(q.recentProgress.map((p) => [p.batchId, p.numInputRows])).toEqual([[0, 15]]);
    expect(readSinkJson(out)).toHaveLength(15);
    expect(readdirSync(join(ckpt, 'offsets'))).toEqual(['0']);
    expect(readdirSync(join(ckpt, 'commits'))).toEqual(['0']);

    // Run Once again on the same checkpoint: only the new file, in one batch.
    writeInput(input, 'f5.json', jsonLines([{ id: 'f5', v: 50 }]), 2_000);
    const q2 = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .option('maxFilesPerTrigger', 2)
      .load(input)
      .writeStream.format('json')
      .option('checkpointLocation', ckpt)
      .trigger(Trigger.Once())
      .start(out);
    await q2.awaitTermination();
    expect(q2.recentProgress.map((p) => [p.batchId, p.numInputRows])).toEqual([[1, 1]]);
    expect(readSinkJson(out)).toHaveLength(16);
  });

  it('Trigger.AvailableNow with maxFilesPerTrigger 2 over 5 files runs batches of 2, 2 and 1 files, then stops', async () => {
    const input = tempDir();
    fiveFiles(input);
    const q = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .option('maxFilesPerTrigger', 2)
      .load(input)
      .writeStream.format('memory')
      .queryName('available_now')
      .trigger(Trigger.AvailableNow())
      .start();
    // A file that arrives after start is not part of this run.
    writeInput(input, 'late.json', jsonLines([{ id: 'late', v: 999 }]), 900); // oldest mtime: would be taken first
    writeInput(input, 'later.json', jsonLines([{ id: 'later', v: 998 }]), 5_000);
    expect(await q.awaitTermination(30_000)).toBe(true);
    expect(q.exception).toBeNull();
    expect(q.isActive).toBe(false);
    // Rows per batch identify the files: f0+f1 = 1+2, f2+f3 = 3+4, f4 = 5.
    expect(q.recentProgress.map((p) => [p.batchId, p.numInputRows])).toEqual([
      [0, 3],
      [1, 7],
      [2, 5],
    ]);
    const rows = await session().memoryTable('available_now');
    expect(rows.map((r) => r.id)).not.toContain('late');
    expect(rows.map((r) => r.id)).not.toContain('later');
    expect(byV(rows).map((r) => r.v)).toEqual([0, 10, 11, 20, 21, 22, 30, 31, 32, 33, 40, 41, 42, 43, 44]);
  });

  it('Trigger.ProcessingTime spaces batches by its interval; a bad interval fails at the call', async () => {
    expect(() => Trigger.ProcessingTime('soon')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    // On a manual clock, a batch runs when the clock reaches its trigger time, and only then.
    const clock = new ManualClock();
    const batches: number[] = [];
    const q = await session()
      .readStream.format('rate-micro-batch')
      .option('rowsPerBatch', 1)
      .load()
      .writeStream.foreachBatch((_rows, id) => void batches.push(id))
      .trigger(Trigger.ProcessingTime('150 milliseconds'), { clock })
      .start();
    await clock.allWaiting();
    expect(batches).toEqual([0]);
    await clock.advance(149);
    expect(batches, '149 ms after the first trigger').toEqual([0]);
    await clock.advance(1);
    expect(batches, '150 ms after the first trigger').toEqual([0, 1]);
    await clock.advance(149);
    expect(batches, '299 ms after the first trigger').toEqual([0, 1]);
    await clock.advance(1);
    expect(batches, '300 ms after the first trigger').toEqual([0, 1, 2]);
    await q.stop();
    expect(q.exception).toBeNull();
  });
});

// ------------------------------------------------------------------------------------------------

describe('query names', () => {
  it('a second active query with the same name is refused with QUERY_NAME_IN_USE; the name is free after stop', async () => {
    session().memoryStream('names_in', SCHEMA);
    const start = (): Promise<StreamingQuery> =>
      session().readStream.format('memory').load('names_in').select(col('id')).writeStream.format('memory').queryName('dup_name').start();
    const q1 = await start();
    await expect(start()).rejects.toMatchObject({ code: 'QUERY_NAME_IN_USE', option: 'queryName' });
    // Also with another sink: names are unique among all active queries.
    const input = tempDir();
    const ckpt = tempDir();
    await expect(fileQuery(input, ckpt).queryName('dup_name').start(tempDir())).rejects.toMatchObject({ code: 'QUERY_NAME_IN_USE' });
    expect(existsSync(join(ckpt, 'offsets'))).toBe(false);
    expect(session().streams.active).toEqual([q1]);
    await q1.stop();
    const q2 = await start();
    expect(q2.isActive).toBe(true);
    expect(q2.name).toBe('dup_name');
    await q2.stop();
  });
});
