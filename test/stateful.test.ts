/**
 * Stateful queries against an independent model of Spark's semantics: windowed counts with a
 * watermark in append, update and complete modes, sliding windows, late rows, aggregates, both
 * deduplications, output-mode errors and a core-count change between runs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { avg, col, count, max, min, Session, sum, window, type DataFrame, type OutputMode, type StreamingQuery } from '@sluice/driver';
import { tempDir, useSession, withSession } from './helpers.js';

const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1);
const at = (minute: number) => new Date(T0 + minute * MIN);
const iso = (ms: number) => new Date(ms).toISOString();

const session = useSession({ 'sluice.sql.shuffle.partitions': 8 });

type Event = { id: string; minute: number; v?: number | null };

/** Independent model: tumbling or sliding windows, Spark's late-row rule and watermark. */
function model(batches: Event[][], sizeMin: number, slideMin: number, delayMin: number) {
  let wm = 0; // ms; 0 before any data
  const counts = new Map<string, number>();
  const updates: Array<Map<string, number>> = [];
  let dropped = 0;
  for (const batch of batches) {
    const changed = new Map<string, number>();
    let maxT = -Infinity;
    const seenWindows = new Map<string, number>();
    for (const e of batch) {
      const t = T0 + e.minute * MIN;
      maxT = Math.max(maxT, t);
      const last = Math.floor(t / (slideMin * MIN)) * slideMin * MIN;
      for (let start = last; start > t - sizeMin * MIN; start -= slideMin * MIN) {
        const end = start + sizeMin * MIN;
        const key = `${start}|${end}|${e.id}`;
        seenWindows.set(key, (seenWindows.get(key) ?? 0) + 1);
      }
    }
    // Late rows are dropped at the stateful operator, after partial aggregation (one per key).
    for (const [key, n] of seenWindows) {
      const end = Number(key.split('|')[1]);
      if (end <= wm) {
        dropped += 1;
        continue;
      }
      counts.set(key, (counts.get(key) ?? 0) + n);
      changed.set(key, counts.get(key) as number);
    }
    updates.push(changed);
    if (maxT > -Infinity) wm = Math.max(wm, maxT - delayMin * MIN);
  }
  const rows = (m: Map<string, number>) =>
    [...m].map(([key, n]) => {
      const [start, end, id] = key.split('|');
      return { window: { start: iso(Number(start)), end: iso(Number(end)) }, id, count: n };
    });
  const closed = new Map([...counts].filter(([key]) => Number(key.split('|')[1]) <= wm));
  return { all: rows(counts), appended: rows(closed), updates: updates.map(rows), dropped, watermark: wm };
}

function byJson<T>(rows: T[]): T[] {
  return rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function normalize(rows: Array<Record<string, unknown>>) {
  return byJson(
    rows.map((r) => {
      const w = r.window as { start: Date; end: Date };
      return { window: { start: w.start.toISOString(), end: w.end.toISOString() }, id: r.id, count: r.count };
    }),
  );
}

let streamNo = 0;
function eventsStream() {
  const name = `events_${streamNo++}`;
  const stream = session().memoryStream(name, 'id STRING, ts TIMESTAMP, v LONG');
  const df = session().readStream.format('memory').load(name);
  const add = (events: Event[]) => stream.addData(events.map((e) => ({ id: e.id, ts: at(e.minute), v: e.v ?? null })));
  return { df, add };
}

async function runBatches(q: StreamingQuery, add: (e: Event[]) => void, batches: Event[][]) {
  for (const b of batches) {
    add(b);
    await q.processAllAvailable();
  }
}

const SEED_BATCHES: Event[][] = [
  [
    { id: 'a', minute: 1 },
    { id: 'a', minute: 2 },
    { id: 'b', minute: 4 },
    { id: 'a', minute: 7 },
  ],
  [
    { id: 'a', minute: 12 },
    { id: 'b', minute: 13 },
    { id: 'b', minute: 3 },
  ],
  [{ id: 'b', minute: 21 }],
  // Late: window [0, 5) ended at 5 <= watermark 11. On time: window [10, 15).
  [
    { id: 'a', minute: 3 },
    { id: 'a', minute: 14 },
    { id: 'c', minute: 9 },
  ],
  [{ id: 'z', minute: 100 }],
];

function seedQuery(df: DataFrame, mode: OutputMode, name: string) {
  return df
    .withWatermark('ts', '10 minutes')
    .groupBy(window('ts', '5 minutes'), 'id')
    .count()
    .writeStream.format('memory')
    .queryName(name)
    .outputMode(mode)
    .option('checkpointLocation', tempDir())
    .start();
}

describe('windowed aggregation with a watermark', () => {
  it('append mode emits each window once, after the watermark passes its end, and drops late rows', async () => {
    const { df, add } = eventsStream();
    const q = await seedQuery(df, 'append', 'seed_append');
    await runBatches(q, add, SEED_BATCHES);
    const expected = model(SEED_BATCHES, 5, 5, 10);
    expect(normalize(await session().memoryTable('seed_append'))).toEqual(byJson(expected.appended));
    const progress = q.recentProgress;
    const dropped = progress.reduce((s, p) => s + (p.stateOperators[0]?.numRowsDroppedByWatermark ?? 0), 0);
    expect(dropped).toBe(expected.dropped);
    const last = q.lastProgress;
    expect(last?.stateOperators[0]).toMatchObject({ operatorName: 'stateStoreSave', numShufflePartitions: 8, numStateStoreInstances: 2 });
    expect(last?.eventTime.watermark).toBe(iso(expected.watermark));
    // Only the window of the final event is left in state.
    expect(last?.stateOperators[0]?.numRowsTotal).toBe(1);
    await q.stop();
  });

  it('update mode emits the changed rows of each batch', async () => {
    const { df, add } = eventsStream();
    const q = await seedQuery(df, 'update', 'seed_update');
    const outputs: Array<Array<Record<string, unknown>>> = [];
    let seen = 0;
    for (const b of SEED_BATCHES) {
      add(b);
      await q.processAllAvailable();
      const rows = await session().memoryTable('seed_update');
      outputs.push(rows.slice(seen));
      seen = rows.length;
    }
    const expected = model(SEED_BATCHES, 5, 5, 10);
    expect(outputs.map(normalize)).toEqual(expected.updates.map(byJson));
    await q.stop();
  });

  it('complete mode emits the whole result each batch and neither evicts nor drops', async () => {
    const { df, add } = eventsStream();
    const q = await df.groupBy(window('ts', '5 minutes'), 'id').count().writeStream.format('memory').queryName('seed_complete').outputMode('complete').start();
    await runBatches(q, add, SEED_BATCHES);
    // Without eviction every row counts, the late ones too.
    const expected = model(SEED_BATCHES, 5, 5, 1e9);
    expect(normalize(await session().memoryTable('seed_complete'))).toEqual(byJson(expected.all));
    await q.stop();
  });

  it('sliding windows place each row in every window containing it', async () => {
    const { df, add } = eventsStream();
    const q = await df
      .withWatermark('ts', '10 minutes')
      .groupBy(window('ts', '10 minutes', '5 minutes'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName('sliding')
      .outputMode('append')
      .start();
    await runBatches(q, add, SEED_BATCHES);
    const expected = model(SEED_BATCHES, 10, 5, 10);
    expect(normalize(await session().memoryTable('sliding'))).toEqual(byJson(expected.appended));
    await q.stop();
  });
});

describe('aggregates', () => {
  it('count, sum, avg, min and max skip nulls; count(*) does not; null is a group key', async () => {
    const { df, add } = eventsStream();
    const q = await df
      .groupBy('id')
      .agg(count('*').alias('n'), count('v').alias('nv'), sum('v'), avg('v'), min('v'), max('v'))
      .writeStream.format('memory')
      .queryName('aggs')
      .outputMode('complete')
      .start();
    await runBatches(q, add, [
      [
        { id: 'a', minute: 1, v: 3 },
        { id: 'a', minute: 2, v: null },
        { id: 'b', minute: 3, v: null },
      ],
      [
        { id: 'a', minute: 4, v: 5 },
        { id: null as unknown as string, minute: 5, v: 7 },
      ],
    ]);
    const rows = (await session().memoryTable('aggs')).sort((x, y) => String(x.id).localeCompare(String(y.id)));
    expect(rows).toEqual([
      { id: 'a', n: 3, nv: 2, 'sum(v)': 8, 'avg(v)': 4, 'min(v)': 3, 'max(v)': 5 },
      { id: 'b', n: 1, nv: 0, 'sum(v)': null, 'avg(v)': null, 'min(v)': null, 'max(v)': null },
      { id: null, n: 1, nv: 1, 'sum(v)': 7, 'avg(v)': 7, 'min(v)': 7, 'max(v)': 7 },
    ]);
    await q.stop();
  });

  it('operators after the aggregation run on its output', async () => {
    const { df, add } = eventsStream();
    const q = await df
      .groupBy('id')
      .count()
      .filter(col('count').gt(1))
      .withColumn('double', col('count').multiply(2))
      .writeStream.format('memory')
      .queryName('post_ops')
      .outputMode('complete')
      .start();
    await runBatches(q, add, [
      [
        { id: 'a', minute: 1 },
        { id: 'a', minute: 2 },
        { id: 'b', minute: 3 },
      ],
    ]);
    expect(await session().memoryTable('post_ops')).toEqual([{ id: 'a', count: 2, double: 4 }]);
    await q.stop();
  });
});

describe('deduplication', () => {
  it('dropDuplicates without an event-time key keeps every key forever', async () => {
    const { df, add } = eventsStream();
    const q = await df.dropDuplicates(['id']).select('id', 'ts').writeStream.format('memory').queryName('dedup').start();
    await runBatches(q, add, [
      [
        { id: 'a', minute: 1 },
        { id: 'a', minute: 2 },
        { id: 'b', minute: 3 },
      ],
      [
        { id: 'a', minute: 500 },
        { id: 'c', minute: 4 },
      ],
    ]);
    const rows = await session().memoryTable('dedup');
    expect(rows.map((r) => r.id).sort()).toEqual(['a', 'b', 'c']);
    expect(q.lastProgress?.stateOperators[0]).toMatchObject({ operatorName: 'dedupe', numRowsTotal: 3 });
    await q.stop();
  });

  it('dropDuplicates with the watermarked column among the keys drops late rows and expires state', async () => {
    const { df, add } = eventsStream();
    const q = await df.withWatermark('ts', '10 minutes').dropDuplicates(['id', 'ts']).writeStream.format('memory').queryName('dedup_wm').start();
    await runBatches(q, add, [
      [
        { id: 'a', minute: 1 },
        { id: 'a', minute: 1 },
        { id: 'b', minute: 2 },
      ],
      [{ id: 'a', minute: 30 }],
      // Late: minute 1 <= watermark 20, dropped even though its state expired.
      [
        { id: 'a', minute: 1 },
        { id: 'c', minute: 25 },
      ],
    ]);
    const rows = (await session().memoryTable('dedup_wm')).map((r) => `${r.id}@${(r.ts as Date).toISOString().slice(11, 16)}`);
    expect(rows.sort()).toEqual(['a@00:01', 'a@00:30', 'b@00:02', 'c@00:25']);
    const dropped = q.recentProgress.reduce((s, p) => s + (p.stateOperators[0]?.numRowsDroppedByWatermark ?? 0), 0);
    expect(dropped).toBe(1);
    // Rows with event time <= watermark (20) were evicted: a@30 and c@25 remain.
    expect(q.lastProgress?.stateOperators[0]?.numRowsTotal).toBe(2);
    await q.stop();
  });

  it('dropDuplicatesWithinWatermark drops a key while it is within the delay, then lets it through again', async () => {
    const { df, add } = eventsStream();
    const q = await df.withWatermark('ts', '10 minutes').dropDuplicatesWithinWatermark(['id']).writeStream.format('memory').queryName('dedup_within').start();
    await runBatches(q, add, [
      [
        { id: 'a', minute: 1 },
        { id: 'a', minute: 5 },
      ],
      [
        { id: 'a', minute: 8 },
        { id: 'b', minute: 30 },
      ],
      // Watermark 20 now: a's state (expiring at 1 + 10 = 11) is gone, so a is new again.
      [{ id: 'a', minute: 31 }],
    ]);
    const rows = (await session().memoryTable('dedup_within')).map((r) => `${r.id}@${(r.ts as Date).toISOString().slice(11, 16)}`);
    expect(rows.sort()).toEqual(['a@00:01', 'a@00:31', 'b@00:30']);
    expect(q.lastProgress?.stateOperators[0]?.operatorName).toBe('dedupeWithinWatermark');
    await q.stop();
  });
});

describe('plans and restarts', () => {
  it('refuses output modes that Spark refuses', async () => {
    const { df } = eventsStream();
    await expect(df.groupBy('id').count().writeStream.format('memory').queryName('x1').outputMode('append').start()).rejects.toMatchObject({
      code: 'UNSUPPORTED_OUTPUT_MODE',
      option: 'outputMode',
    });
    await expect(df.dropDuplicates(['id']).writeStream.format('memory').queryName('x2').outputMode('complete').start()).rejects.toMatchObject({
      code: 'UNSUPPORTED_OUTPUT_MODE',
    });
    await expect(
      df.withWatermark('ts', '1 minute').groupBy('id').count().writeStream.format('memory').queryName('x3').outputMode('append').start(),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE' });
    // Two aggregations chain in append mode only, each grouped by event time (multi-stateful.test.ts).
    for (const mode of ['complete', 'update', 'append'] as const) {
      await expect(
        df.groupBy('id').count().groupBy('id').count().writeStream.format('memory').queryName(`x4${mode}`).outputMode(mode).start(),
      ).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE', option: 'outputMode' });
    }
    expect(() => df.groupBy('nope')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN', column: 'nope' }));
  });

  it('refuses state budgets too small for its shards before any batch runs', async () => {
    const tryBudget = async (conf: Record<string, unknown>) => {
      const s = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.sql.streaming.stateStore.shards': 2, ...conf } });
      const ckpt = tempDir();
      try {
        s.memoryStream('budget_in', 'id STRING, ts TIMESTAMP, v LONG');
        const start = s.readStream
          .format('memory')
          .load('budget_in')
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName('budget')
          .outputMode('complete')
          .option('checkpointLocation', ckpt)
          .start();
        return await start.then(
          async (q) => {
            await q.stop();
            return 'started';
          },
          (e: { code: string; option: string }) => {
            // Refused before anything was written: the checkpoint stays empty.
            expect(existsSync(join(ckpt, 'metadata'))).toBe(false);
            return { code: e.code, option: e.option };
          },
        );
      } finally {
        await s.close();
      }
    };
    // Under LevelDB's 74 handles a worker cannot keep even one shard open.
    expect(await tryBudget({ 'sluice.sql.streaming.stateStore.maxOpenFiles': 60 })).toEqual({
      code: 'STATE_FILE_BUDGET_TOO_SMALL',
      option: 'sluice.sql.streaming.stateStore.maxOpenFiles',
    });
    // One slot hosts both shards: 3 MB leaves each under 2 MB.
    expect(await tryBudget({ 'sluice.sql.streaming.stateStore.maxMemoryMB': 3 })).toEqual({
      code: 'STATE_MEMORY_BUDGET_TOO_SMALL',
      option: 'sluice.sql.streaming.stateStore.maxMemoryMB',
    });
    // 100 handles hold both shards: each is charged what LevelDB really holds, not 74.
    expect(await tryBudget({ 'sluice.sql.streaming.stateStore.maxOpenFiles': 100 })).toBe('started');
  });

  it("refuses shuffle.partitions 'auto' for a stateful query unless stateStore.partitions fixes them", async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': ' AUTO ' } });
    try {
      const stream = s.memoryStream('auto_in', 'id STRING');
      const start = () =>
        s.readStream
          .format('memory')
          .load('auto_in')
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName('auto_counts')
          .outputMode('complete')
          .option('checkpointLocation', tempDir())
          .start();
      await expect(start()).rejects.toMatchObject({
        code: 'INVALID_CONF',
        option: 'sluice.sql.shuffle.partitions',
        message: expect.stringContaining('stateStore.partitions'),
      });
      s.conf.set('sluice.sql.streaming.stateStore.partitions', 8);
      const q = await start();
      stream.addData([{ id: 'a' }, { id: 'b' }, { id: 'a' }]);
      await q.processAllAvailable();
      expect(q.lastProgress?.stateOperators[0]?.numShufflePartitions).toBe(8);
      expect((await s.memoryTable('auto_counts')).map((r) => [r.id, Number(r.count)]).sort()).toEqual([
        ['a', 2],
        ['b', 1],
      ]);
      await q.stop();
    } finally {
      await s.close();
    }
  });

  it("keeps many stateful queries inside one worker's file budget, closing idle shards and reopening them, with exact counts", async () => {
    const queries = 8;
    const s = await Session.create({
      conf: { 'sluice.executor.cores': 1, 'sluice.sql.streaming.stateStore.shards': 2, 'sluice.sql.streaming.stateStore.maxOpenFiles': 80 },
    });
    try {
      const started = [];
      for (let i = 0; i < queries; i++) {
        const stream = s.memoryStream(`budget_in${i}`, 'id STRING');
        stream.addData(Array.from({ length: 10 + i }, (_, k) => ({ id: `k${k % 3}` })));
        started.push(
          await s.readStream
            .format('memory')
            .load(`budget_in${i}`)
            .groupBy('id')
            .count()
            .writeStream.format('memory')
            .queryName(`budget_${i}`)
            .outputMode('complete')
            .option('checkpointLocation', tempDir())
            .start(),
        );
      }
      for (const q of started) await q.processAllAvailable();
      // A second batch for each: its shards were closed to make room and are reopened with their state.
      for (let i = 0; i < queries; i++) s.memoryStream(`budget_in${i}`).addData([{ id: 'k0' }, { id: 'new' }]);
      for (const q of started) await q.processAllAvailable();
      for (let i = 0; i < queries; i++) {
        const n = 10 + i;
        const expected = [0, 1, 2].map((r) => ({ id: `k${r}`, count: Math.floor(n / 3) + (r < n % 3 ? 1 : 0) + (r === 0 ? 1 : 0) }));
        const rows = (await s.memoryTable(`budget_${i}`)).map((r) => ({ id: r.id, count: Number(r.count) }));
        expect(rows.sort((x, y) => String(x.id).localeCompare(String(y.id)))).toEqual([...expected, { id: 'new', count: 1 }]);
      }
      const [usage] = s.metrics().executor.stateStores;
      expect(usage).toMatchObject({ maxOpenFiles: 80 });
      expect(usage?.fileHandles).toBeLessThanOrEqual(80);
      expect(usage?.openShards).toBeLessThan(2 * queries);
      expect(usage?.shardsClosedForBudget).toBeGreaterThan(0);
      for (const q of started) await q.stop();
    } finally {
      await s.close();
    }
  });

  it("refuses a stateful query whose share of a worker's memory would be too small beside the running ones, naming the numbers", async () => {
    const s = await Session.create({
      conf: { 'sluice.executor.cores': 1, 'sluice.sql.streaming.stateStore.shards': 2, 'sluice.sql.streaming.stateStore.maxMemoryMB': 6 },
    });
    try {
      s.memoryStream('shared_budget', 'id STRING, ts TIMESTAMP, v LONG');
      const start = (name: string) =>
        s.readStream
          .format('memory')
          .load('shared_budget')
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName(name)
          .outputMode('complete')
          .option('checkpointLocation', tempDir())
          .start();
      const first = await start('budget_a');
      // Its 2 shards take 3 MB each; 4 shards would get 1.5 MB.
      await expect(start('budget_b')).rejects.toMatchObject({
        code: 'STATE_MEMORY_BUDGET_TOO_SMALL',
        message: expect.stringContaining("each of the 4 state shards a worker would host (2 of them other queries') under 2 MB"),
      });
      await first.stop();
      const again = await start('budget_b');
      await again.stop();
    } finally {
      await s.close();
    }
  });

  it('a restart with another core count reopens the same shards; a changed shuffle.partitions alone is ignored', async () => {
    const ckpt = tempDir();
    const name = `restart_${streamNo}`;
    const batches = [SEED_BATCHES[0] as Event[], SEED_BATCHES[1] as Event[], SEED_BATCHES[2] as Event[]];
    const run = async (cores: number, conf: Record<string, unknown>, prefix: Event[][], part: Event[][]) => {
      const s = await Session.create({ conf: { 'sluice.executor.cores': cores, ...conf } });
      const stream = s.memoryStream(name, 'id STRING, ts TIMESTAMP, v LONG');
      // The memory stream lives in the session: replay all earlier batches so offsets line up.
      for (const b of prefix) stream.addData(b.map((e) => ({ id: e.id, ts: at(e.minute) })));
      const q = await s.readStream
        .format('memory')
        .load(name)
        .withWatermark('ts', '10 minutes')
        .groupBy(window('ts', '5 minutes'), 'id')
        .count()
        .writeStream.format('memory')
        .queryName('restart_out')
        .outputMode('update')
        .option('checkpointLocation', ckpt)
        .start();
      await q.processAllAvailable();
      for (const b of part) {
        stream.addData(b.map((e) => ({ id: e.id, ts: at(e.minute) })));
        await q.processAllAvailable();
      }
      const rows = await s.memoryTable('restart_out');
      const progress = q.lastProgress;
      await q.stop();
      await s.close();
      return { rows, progress };
    };
    await run(2, { 'sluice.sql.shuffle.partitions': 6 }, [], batches.slice(0, 2));
    const second = await run(1, { 'sluice.sql.shuffle.partitions': 50 }, batches.slice(0, 2), batches.slice(2));
    expect(second.progress?.stateOperators[0]).toMatchObject({ numShufflePartitions: 6, numStateStoreInstances: 2 });
    // b@21 joins window [20, 25) as a new row; earlier state was restored, not recounted.
    expect(normalize(second.rows)).toEqual([{ window: { start: iso(T0 + 20 * MIN), end: iso(T0 + 25 * MIN) }, id: 'b', count: 1 }]);
  });
});

describe('the watermark for late rows', () => {
  // Spark's WatermarkPropagator (3.4+): an operator drops late rows by the watermark it ran with in
  // the batch before, and evicts by this batch's. Two data batches in a row (no no-data batch
  // between them) tell the two apart.
  const conf = { 'sluice.executor.cores': 1, 'sluice.sql.streaming.noDataMicroBatches.enabled': false };
  const S = 1000;
  const steps = async (q: StreamingQuery, add: (t: number) => void) => {
    for (const t of [5, 25, 7]) {
      add(t);
      await q.processAllAvailable();
    }
    // Batch 2 ran with the watermark 25 (batch 1's maximum) and drops rows at or below 5 (batch 1's).
    expect(q.recentProgress.map((p) => p.eventTime.watermark)).toEqual([iso(0), iso(5 * S), iso(25 * S)]);
  };

  it('an aggregation takes a row for a window this batch closes, if the batch before had not passed it', async () => {
    await withSession(conf, async (s) => {
      const m = s.memoryStream('late_agg', 't TIMESTAMP');
      const q = await s.readStream
        .format('memory')
        .load('late_agg')
        .withWatermark('t', '0 seconds')
        .groupBy(window('t', '10 seconds'))
        .count()
        .writeStream.format('memory')
        .queryName('late_agg_out')
        .outputMode('append')
        .start();
      try {
        await steps(q, (t) => m.addData([{ t: new Date(t * S) }]));
        const rows = (await s.memoryTable('late_agg_out')).map((r) => [(r.window as { start: Date }).start.getTime() / S, Number(r.count)]);
        // [0, 10) closes in batch 2 with both its rows: 7 is not late (above 5).
        expect(rows).toEqual([[0, 2]]);
        expect(q.lastProgress?.stateOperators[0]?.numRowsDroppedByWatermark).toBe(0);
      } finally {
        await q.stop();
      }
    });
  });

  it("a deduplication keeps a row above the batch before's watermark, though this batch's has passed it", async () => {
    await withSession(conf, async (s) => {
      const m = s.memoryStream('late_dedup', 'id STRING, t TIMESTAMP');
      const q = await s.readStream
        .format('memory')
        .load('late_dedup')
        .withWatermark('t', '0 seconds')
        .dropDuplicates(['id', 't'])
        .writeStream.format('memory')
        .queryName('late_dedup_out')
        .outputMode('append')
        .start();
      try {
        await steps(q, (t) => m.addData([{ id: 'x', t: new Date(t * S) }]));
        expect((await s.memoryTable('late_dedup_out')).map((r) => (r.t as Date).getTime() / S)).toEqual([5, 25, 7]);
        // Past this batch's watermark, it is emitted and not kept; the watermark evicts the other two.
        expect(q.lastProgress?.stateOperators[0]).toMatchObject({ numRowsDroppedByWatermark: 0, numRowsTotal: 0 });
      } finally {
        await q.stop();
      }
    });
  });
});
