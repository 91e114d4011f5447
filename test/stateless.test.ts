import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { col, lit, Session, Trigger, udf, upper, when, type StreamingQueryListener } from '@sluice/driver';
import { jsonLines, readSinkJson, tempDir, useSession, waitUntil, writeInput } from './helpers.js';

const UDFS = new URL('./fixtures/udfs.mjs', import.meta.url).href;
const CRASHING = new URL('./fixtures/crashing-udfs.mjs', import.meta.url).href;
const SCHEMA = 'id STRING, v DOUBLE, ts TIMESTAMP';

const session = useSession();

function events(n: number, from = 0): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({
    id: `k${(from + i) % 5}`,
    v: from + i,
    ts: new Date(Date.UTC(2024, 0, 1, 0, 0, from + i)).toISOString(),
  }));
}

describe('file source to JSON sink', () => {
  it('filters and projects every input row exactly once, with Spark-shaped progress', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    for (let f = 0; f < 4; f++) writeInput(input, `f${f}.json`, jsonLines(events(10, f * 10)), 1_000 + f);

    const query = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .load(input)
      .filter(col('v').geq(5))
      .select(col('id'), col('v').multiply(2).alias('v2'), col('ts'))
      .writeStream.format('json')
      .option('checkpointLocation', ckpt)
      .start(out);
    await query.processAllAvailable();

    const rows = readSinkJson(out).sort((a, b) => (a.v2 as number) - (b.v2 as number));
    expect(rows).toHaveLength(35);
    expect(rows[0]).toEqual({ id: 'k0', v2: 10, ts: '2024-01-01T00:00:05.000Z' });
    expect(rows.map((r) => r.v2)).toEqual(Array.from({ length: 35 }, (_, i) => (i + 5) * 2));

    const p = query.lastProgress;
    expect(p).not.toBeNull();
    expect(p?.batchId).toBe(0);
    expect(p?.numInputRows).toBe(40);
    expect(p?.id).toBe(query.id);
    expect(p?.runId).toBe(query.runId);
    expect(p?.sources).toHaveLength(1);
    expect(p?.sources[0]).toMatchObject({ startOffset: null, endOffset: { logOffset: 0 }, numInputRows: 40 });
    expect(p?.sink.numOutputRows).toBe(35);
    expect(p?.sink.description).toContain(out);
    // Spark's phases, each a whole number of milliseconds (MicroBatchExecution.test.ts checks each is timed).
    expect(Object.keys(p?.durationMs ?? {}).sort()).toEqual([
      'addBatch',
      'commitOffsets',
      'getBatch',
      'latestOffset',
      'queryPlanning',
      'triggerExecution',
      'walCommit',
    ]);
    for (const ms of Object.values(p?.durationMs ?? {})) expect(Number.isInteger(ms)).toBe(true);
    expect(p?.processedRowsPerSecond).toBeGreaterThan(0);
    expect(existsSync(join(ckpt, 'offsets', '0'))).toBe(true);
    expect(existsSync(join(ckpt, 'commits', '0'))).toBe(true);

    // New files arrive: the next batch takes only them.
    writeInput(input, 'f9.json', jsonLines(events(3, 100)), 2_000);
    await query.processAllAvailable();
    expect(query.lastProgress?.batchId).toBe(1);
    expect(query.lastProgress?.sources[0]).toMatchObject({ startOffset: { logOffset: 0 }, endOffset: { logOffset: 1 } });
    expect(readSinkJson(out)).toHaveLength(38);
    await query.stop();
    expect(query.isActive).toBe(false);
  });

  it('restarts from its checkpoint with the same id and a new runId', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    writeInput(input, 'a.json', jsonLines(events(4)), 1_000);
    const start = () => session().readStream.format('json').schema(SCHEMA).load(input).writeStream.format('json').option('checkpointLocation', ckpt).start(out);
    const q1 = await start();
    await q1.processAllAvailable();
    await q1.stop();
    writeInput(input, 'b.json', jsonLines(events(4, 4)), 2_000);
    const q2 = await start();
    await q2.processAllAvailable();
    expect(q2.id).toBe(q1.id);
    expect(q2.runId).not.toBe(q1.runId);
    expect(q2.lastProgress?.batchId).toBe(1);
    expect(
      readSinkJson(out)
        .map((r) => r.v)
        .sort((a, b) => (a as number) - (b as number)),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await q2.stop();
  });

  it('refuses a second query on a checkpoint in use', async () => {
    const input = tempDir();
    const ckpt = tempDir();
    const start = () =>
      session().readStream.format('json').schema(SCHEMA).load(input).writeStream.format('json').option('checkpointLocation', ckpt).start(tempDir());
    const q1 = await start();
    await expect(start()).rejects.toMatchObject({ code: 'CHECKPOINT_LOCKED', file: ckpt });
    await q1.stop();
    const q3 = await start(); // released by stop(): a restart in the same process works at once
    await q3.stop();
  });

  it('reads a sink directory through its manifest, ignoring uncommitted part files', async () => {
    const input = tempDir();
    const out = tempDir();
    writeInput(input, 'a.json', jsonLines(events(6)), 1_000);
    const q = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .load(input)
      .writeStream.format('json')
      .option('checkpointLocation', tempDir())
      .start(out);
    await q.processAllAvailable();
    await q.stop();
    writeFileSync(join(out, 'part-99999-00000-stray.json'), '{"id":"stray","v":-1}\n');
    const rows = await session().read.format('json').schema(SCHEMA).load(out).collect();
    expect(rows).toHaveLength(6);
    expect(rows.map((r) => r.v).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(rows[0]?.ts).toBeInstanceOf(Date);
  });
});

describe('executors', () => {
  it('runs tasks in several worker threads', async () => {
    const input = tempDir();
    for (let f = 0; f < 8; f++) writeInput(input, `f${f}.json`, jsonLines(events(200, f * 200)), 1_000 + f);
    const threadId = udf(UDFS, 'threadId', 'long');
    const q = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .load(input)
      .select(threadId().alias('tid'))
      .writeStream.format('memory')
      .queryName('threads')
      .start();
    await q.processAllAvailable();
    const ids = new Set((await session().memoryTable('threads')).map((r) => r.tid));
    expect(ids.size).toBeGreaterThanOrEqual(2);
    expect([...ids].every((t) => typeof t === 'number' && t > 0)).toBe(true);
    await q.stop();
  });

  it('retries a task whose worker crashed, and the output is unchanged', async () => {
    const input = tempDir();
    const marker = join(tempDir(), 'crashed');
    writeInput(input, 'a.json', jsonLines(events(10)), 1_000);
    const crashOnce = udf(CRASHING, 'crashOnce', 'double');
    const q = await session()
      .readStream.format('json')
      .schema(SCHEMA)
      .load(input)
      .select(crashOnce(col('v'), lit(marker)).alias('v'))
      .writeStream.format('memory')
      .queryName('crash_once')
      .start();
    await q.processAllAvailable();
    expect(existsSync(marker)).toBe(true);
    expect((await session().memoryTable('crash_once')).map((r) => r.v).sort((a, b) => (a as number) - (b as number))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await q.stop();
  });

  it('fails the query with TASK_FAILED after sluice.task.maxFailures crashes', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.task.maxFailures': 2 } });
    try {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines(events(2)), 1_000);
      const crashAlways = udf(CRASHING, 'crashAlways', 'double');
      const terminated: Array<{ code: string | null }> = [];
      s.streams.addListener({ onQueryTerminated: (e) => void terminated.push({ code: e.errorClassOnException }) });
      const q = await s.readStream
        .format('json')
        .schema(SCHEMA)
        .load(input)
        .select(crashAlways())
        .writeStream.format('memory')
        .queryName('crash_always')
        .start();
      await expect(q.awaitTermination()).rejects.toMatchObject({ code: 'TASK_FAILED' });
      expect(q.exception?.code).toBe('TASK_FAILED');
      expect(q.isActive).toBe(false);
      await s.listenerBus.idle();
      expect(terminated).toEqual([{ code: 'TASK_FAILED' }]);
    } finally {
      await s.close();
    }
  });
});

describe('a worker out of heap', () => {
  it('fails the query with WORKER_OUT_OF_MEMORY naming sluice.executor.heapMB, and the next query runs on a fresh worker', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.executor.heapMB': 64 } });
    try {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines(events(2)), 1_000);
      const exhaust = udf(CRASHING, 'exhaustHeap', 'double');
      const q = await s.readStream
        .format('json')
        .schema(SCHEMA)
        .load(input)
        .select(exhaust(col('v')))
        .writeStream.format('memory')
        .queryName('oom')
        .start();
      await expect(q.awaitTermination()).rejects.toMatchObject({ code: 'WORKER_OUT_OF_MEMORY', option: 'sluice.executor.heapMB' });
      expect(q.exception?.message).toContain('64 MB');
      const ok = await s.readStream
        .format('json')
        .schema(SCHEMA)
        .load(input)
        .writeStream.format('memory')
        .queryName('after_oom')
        .trigger(Trigger.AvailableNow())
        .start();
      await ok.awaitTermination();
      expect(await s.memoryTable('after_oom')).toHaveLength(2);
    } finally {
      await s.close();
    }
  });
});

describe('memory, rate-micro-batch and foreachBatch', () => {
  it('memory stream to memory sink keeps batch order and SQL null semantics', async () => {
    const stream = session().memoryStream('mem_in', 'id STRING, v LONG');
    const q = await session()
      .readStream.format('memory')
      .load('mem_in')
      .withColumn('big', col('v').gt(10))
      .withColumn('label', when(col('v').isNull(), 'none').otherwise(upper(col('id'))))
      .writeStream.format('memory')
      .queryName('mem_out')
      .outputMode('append')
      .start();
    stream.addData([
      { id: 'a', v: 5 },
      { id: 'b', v: null },
    ]);
    await q.processAllAvailable();
    stream.addData([{ id: null, v: 20 }]);
    await q.processAllAvailable();
    expect(await session().memoryTable('mem_out')).toEqual([
      { id: 'a', v: 5, big: false, label: 'A' },
      { id: 'b', v: null, big: null, label: 'none' },
      { id: null, v: 20, big: true, label: null },
    ]);
    expect(q.recentProgress.map((p) => p.numInputRows)).toEqual([2, 1]);
    await q.stop();
  });

  it('rate-micro-batch gives rowsPerBatch rows per batch derived from offsets', async () => {
    const batches: Array<{ id: number; values: number[]; times: number[] }> = [];
    const q = await session()
      .readStream.format('rate-micro-batch')
      .option('rowsPerBatch', 5)
      .option('startTimestamp', 1_000_000)
      .option('advanceMillisPerBatch', 250)
      .load()
      .writeStream.foreachBatch((rows, id) => {
        batches.push({
          id,
          values: rows.map((r) => r.value as number).sort((a, b) => a - b),
          times: [...new Set(rows.map((r) => (r.timestamp as Date).getTime()))],
        });
      })
      .trigger(Trigger.ProcessingTime('10 milliseconds'))
      .start();
    await waitUntil(() => batches.length >= 3, 'three batches of the rate-micro-batch query');
    await q.stop();
    expect(batches.slice(0, 3)).toEqual([
      { id: 0, values: [0, 1, 2, 3, 4], times: [1_000_000] },
      { id: 1, values: [5, 6, 7, 8, 9], times: [1_000_250] },
      { id: 2, values: [10, 11, 12, 13, 14], times: [1_000_500] },
    ]);
  });

  it('rate source generates rowsPerSecond rows a second with increasing values', async () => {
    const q = await session().readStream.format('rate').option('rowsPerSecond', 100).load().writeStream.format('memory').queryName('rate_out').start();
    await new Promise((r) => setTimeout(r, 600));
    await q.processAllAvailable();
    await q.stop();
    const rows = await session().memoryTable('rate_out');
    const values = rows.map((r) => r.value as number).sort((a, b) => a - b);
    expect(values.length).toBeGreaterThanOrEqual(40);
    expect(values).toEqual(Array.from({ length: values.length }, (_, i) => i));
    const first = rows.find((r) => r.value === 0)?.timestamp as Date;
    const tenth = rows.find((r) => r.value === 10)?.timestamp as Date;
    expect(tenth.getTime() - first.getTime()).toBe(100);
  });
});

describe('listeners', () => {
  it('a throwing or slow listener never delays or kills a query; idle triggers emit onQueryIdle', async () => {
    const seen: string[] = [];
    // A listener stuck on its first event until released.
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let slowCalls = 0;
    const slow: StreamingQueryListener = {
      onQueryProgress: () => {
        slowCalls += 1;
        return gate;
      },
    };
    const throwing: StreamingQueryListener = {
      onQueryStarted: () => {
        throw new Error('listener bug');
      },
      onQueryProgress: () => {
        throw new Error('listener bug');
      },
    };
    const recorder: StreamingQueryListener = {
      onQueryStarted: () => void seen.push('started'),
      onQueryProgress: (e) => void seen.push(`progress:${e.progress.batchId}`),
      onQueryIdle: () => void seen.push('idle'),
      onQueryTerminated: (e) => void seen.push(`terminated:${e.exception}`),
    };
    const s = await Session.create({ conf: { 'sluice.executor.cores': 1 } });
    try {
      s.streams.addListener(throwing);
      s.streams.addListener(recorder);
      const stream = s.memoryStream('l_in', 'v LONG');
      const q = await s.readStream.format('memory').load('l_in').writeStream.format('memory').queryName('l_out').start();
      stream.addData([{ v: 1 }]);
      await q.processAllAvailable();
      s.streams.addListener(slow);
      for (let i = 2; i <= 4; i++) {
        stream.addData([{ v: i }]);
        await q.processAllAvailable();
      }
      // Three batches ran while the slow listener was still stuck on the first of their events.
      expect(q.isActive).toBe(true);
      expect(q.recentProgress).toHaveLength(4);
      expect(slowCalls).toBe(1);
      s.streams.removeListener(slow);
      release();
      await q.stop();
      await s.listenerBus.idle();
      expect(seen[0]).toBe('started');
      expect(seen).toContain('progress:0');
      expect(seen).toContain('idle');
      expect(seen.at(-1)).toBe('terminated:null');
      // Idle triggers do not repeat progress: one progress event per batch.
      expect(seen.filter((x) => x.startsWith('progress:'))).toEqual(['progress:0', 'progress:1', 'progress:2', 'progress:3']);
    } finally {
      await s.close();
    }
  });
});
