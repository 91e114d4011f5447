/**
 * format('nexmark') as a user meets it: its options and their errors, batches capped by
 * maxOffsetsPerTrigger, a bounded stream whose end closes every window, the start time kept in the
 * checkpoint; and what the Nexmark suite needed besides: the noop sink, partitionBy on file sinks
 * (read back with the partition columns), drop(), join keys that are expressions, and SQL's GROUP
 * BY without an aggregate.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NexmarkGenerator } from '@sluice/executor';
import { col, count, expr, max, sum, Trigger, window, type StreamingQuery } from '@sluice/driver';
import { tempDir, useSession } from './helpers.js';

const session = useSession();

const START = Date.UTC(2026, 0, 1);

function bids(options: Record<string, string | number> = {}) {
  const reader = session().readStream.format('nexmark').option('table', 'bid').option('eventsPerSecond', 1000).option('startTimestamp', START);
  for (const [k, v] of Object.entries(options)) reader.option(k, v);
  return reader.load();
}

/** The bids of events [0, n), as the generator makes them (the model the queries must match). */
function modelBids(n: number, startTimestamp = START): Array<Record<string, number | string>> {
  return new NexmarkGenerator({ table: 'bid', seed: 0, eventsPerSecond: 1000, startTimestamp }).rows(0, n) as Array<Record<string, number | string>>;
}

async function runToEnd(q: Promise<StreamingQuery>): Promise<StreamingQuery> {
  const query = await q;
  await query.awaitTermination();
  return query;
}

describe('format nexmark', () => {
  it('refuses bad options with the option named', () => {
    const bad: Array<[string, unknown, string]> = [
      ['table', 'bids', 'table'],
      ['seed', 'x', 'seed'],
      ['eventsPerSecond', 0, 'eventsPerSecond'],
      ['maxEvents', -1, 'maxEvents'],
      ['maxOffsetsPerTrigger', 0.5, 'maxOffsetsPerTrigger'],
      ['rowsPerSecond', 10, 'rowsPerSecond'],
    ];
    for (const [key, value, option] of bad) {
      expect(
        () =>
          session()
            .readStream.format('nexmark')
            .option(key, value as string)
            .load(),
        key,
      ).toThrow(expect.objectContaining({ option }));
    }
    expect(() => session().readStream.format('nexmark').option('table', 'bids').load()).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it("has Flink's columns: each table's, or all three as structs with event_type", () => {
    expect(bids().columns).toEqual(['auction', 'bidder', 'price', 'channel', 'url', 'dateTime', 'extra']);
    expect(session().readStream.format('nexmark').load().columns).toEqual(['event_type', 'person', 'auction', 'bid', 'dateTime']);
  });

  it("caps a batch at maxOffsetsPerTrigger events and ends a bounded stream at maxEvents, with the generator's rows", async () => {
    const q = await runToEnd(
      bids({ maxEvents: 10_000, maxOffsetsPerTrigger: 3000 }).writeStream.format('memory').queryName('capped').trigger(Trigger.AvailableNow()).start(),
    );
    expect(q.recentProgress.map((p) => p.sources[0]!.endOffset)).toEqual([{ events: 3000 }, { events: 6000 }, { events: 9000 }, { events: 10_000 }]);
    expect(q.recentProgress.map((p) => p.numInputRows)).toEqual([2760, 2760, 2760, 920]);
    const rows = await session().memoryTable('capped');
    const model = modelBids(10_000);
    expect(rows.map((r) => ({ ...r, dateTime: (r.dateTime as Date).getTime() }))).toEqual(model);
  });

  it('ends event time with a bounded stream: the batch after its last event closes every window; an unbounded one keeps its last window', async () => {
    const perWindow = (df: ReturnType<typeof bids>) =>
      df
        .withWatermark('dateTime', '4 seconds')
        .groupBy(window(col('dateTime'), '10 seconds'))
        .agg(count('*').alias('n'), sum('price').alias('total'), max('price').alias('top'));
    const bounded = await runToEnd(
      perWindow(bids({ maxEvents: 50_000, maxOffsetsPerTrigger: 20_000 }))
        .writeStream.format('memory')
        .queryName('closed')
        .outputMode('append')
        .trigger(Trigger.AvailableNow())
        .start(),
    );
    const last = bounded.lastProgress!;
    expect(last.numInputRows).toBe(0);
    expect(last.eventTime.watermark).toBe('+275760-09-12T23:59:56.000Z');
    const model = new Map<number, { n: number; total: number; top: number }>();
    for (const b of modelBids(50_000)) {
      const w = Math.floor((b.dateTime as number) / 10_000) * 10_000;
      const m = model.get(w) ?? { n: 0, total: 0, top: 0 };
      model.set(w, { n: m.n + 1, total: m.total + (b.price as number), top: Math.max(m.top, b.price as number) });
    }
    const rows = await session().memoryTable('closed');
    expect(new Map(rows.map((r) => [(r.window as { start: Date }).start.getTime(), { n: r.n, total: r.total, top: r.top }]))).toEqual(model);
    expect(rows).toHaveLength(5);

    // The same 50,000 events of an unbounded stream: the last window is still open.
    const open = await runToEnd(
      perWindow(bids({ maxOffsetsPerTrigger: 50_000 }))
        .writeStream.format('memory')
        .queryName('open')
        .outputMode('append')
        .trigger(Trigger.AvailableNow())
        .start(),
    );
    expect(open.recentProgress[0]!.sources[0]!.endOffset).toEqual({ events: 50_000 });
    expect((await session().memoryTable('open')).length).toBeLessThan(5);
  });

  it('keeps the start time of its first run in the checkpoint when none is given', async () => {
    const ckpt = tempDir('sluice-nexmark-ckpt-');
    const run = () =>
      runToEnd(
        session()
          .readStream.format('nexmark')
          .option('table', 'bid')
          .option('eventsPerSecond', 1000)
          .option('maxOffsetsPerTrigger', 1000)
          .load()
          .writeStream.format('memory')
          .queryName('restarted')
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.AvailableNow())
          .start(),
      );
    await run();
    const first = await session().memoryTable('restarted');
    await new Promise((r) => setTimeout(r, 20));
    await run();
    const rows = await session().memoryTable('restarted');
    expect(rows).toHaveLength(2 * 920);
    const start = (first[0]!.dateTime as Date).getTime() - (modelBids(50)[0]!.dateTime as number) + START;
    expect(rows.map((r) => (r.dateTime as Date).getTime())).toEqual(modelBids(2000, start).map((b) => b.dateTime));
  });
});

describe('what the suite needed besides', () => {
  it('noop runs every task, counts the rows and keeps none', async () => {
    const q = await runToEnd(bids({ maxEvents: 5000 }).filter(col('price').gt(10_000)).writeStream.format('noop').trigger(Trigger.AvailableNow()).start());
    expect(q.lastProgress!.sink.description).toBe('NoopSink');
    expect(q.recentProgress.reduce((n, p) => n + p.sink.numOutputRows, 0)).toBe(modelBids(5000).filter((b) => (b.price as number) > 10_000).length);
  });

  it('partitionBy writes Hive directories (values escaped as Spark does) and session.read gives the columns back', async () => {
    const out = tempDir('sluice-partitioned-');
    const q = await runToEnd(
      bids({ maxEvents: 3000, maxOffsetsPerTrigger: 1000 })
        .select(col('auction'), col('price'), expr("date_format(dateTime, 'yyyy-MM-dd')").alias('dt'), expr("date_format(dateTime, 'HH:mm')").alias('hm'))
        .writeStream.format('json')
        .partitionBy('dt', 'hm')
        .option('checkpointLocation', tempDir('sluice-partitioned-ckpt-'))
        .trigger(Trigger.AvailableNow())
        .start(out),
    );
    expect(q.exception).toBeNull();
    expect(readdirSync(out).sort()).toEqual(['_sluice_metadata', 'dt=2026-01-01']);
    expect(readdirSync(join(out, 'dt=2026-01-01'))).toEqual(['hm=00%3A00']);
    const back = await session().read.format('json').load(out).collect();
    expect(
      session()
        .read.format('json')
        .load(out)
        .schema.map((f) => [f.name, f.type]),
    ).toEqual([
      ['auction', 'long'],
      ['price', 'long'],
      ['dt', 'date'],
      ['hm', 'string'],
    ]);
    expect(back).toHaveLength(2760);
    expect(new Set(back.map((r) => `${(r.dt as Date).toISOString()} ${r.hm}`))).toEqual(new Set(['2026-01-01T00:00:00.000Z 00:00']));
    const typed = await session().read.format('json').schema('auction LONG, price LONG, dt STRING, hm STRING').load(out).collect();
    expect(typed.map((r) => r.price).sort()).toEqual(
      modelBids(3000)
        .map((b) => b.price)
        .sort(),
    );
    expect(typed.every((r) => r.dt === '2026-01-01' && r.hm === '00:00')).toBe(true);
  });

  it('partitionBy refuses what cannot be a directory, and sinks that write none', async () => {
    const df = bids().select('auction', 'channel', 'dateTime');
    const start = (w: ReturnType<typeof df.writeStream.format>, dir?: string) => w.option('checkpointLocation', tempDir()).start(dir ?? tempDir());
    await expect(() => start(df.writeStream.format('json').partitionBy('nope'))).rejects.toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'nope' });
    await expect(() => start(df.writeStream.format('csv').partitionBy('auction', 'channel', 'dateTime'))).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(() => start(df.writeStream.format('memory').queryName('p').partitionBy('channel'))).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'partitionBy',
    });
  });

  it('drop() leaves out the columns named, ignoring names it does not have', () => {
    expect(bids().drop('extra', 'URL', 'nothing').columns).toEqual(['auction', 'bidder', 'price', 'channel', 'dateTime']);
  });

  it('joins on an equality of expressions, stream-static and stream-stream, as Spark plans them', async () => {
    const side = session().createDataFrame(
      Array.from({ length: 10 }, (_, k) => ({ key: k, label: `k${k}` })),
      'key LONG, label STRING',
    );
    await runToEnd(
      bids({ maxEvents: 2000 })
        .join(side, expr('mod(auction, 10) = key'), 'inner')
        .writeStream.format('memory')
        .queryName('exprKey')
        .trigger(Trigger.AvailableNow())
        .start(),
    );
    const joined = await session().memoryTable('exprKey');
    expect(joined).toHaveLength(1840);
    expect(joined.every((r) => r.label === `k${(r.auction as number) % 10}`)).toBe(true);
    expect(Object.keys(joined[0]!)).toEqual(['auction', 'bidder', 'price', 'channel', 'url', 'dateTime', 'extra', 'key', 'label']);

    const people = session()
      .readStream.format('nexmark')
      .option('table', 'person')
      .option('eventsPerSecond', 1000)
      .option('startTimestamp', START)
      .option('maxEvents', 2000)
      .load();
    const pairs = bids({ maxEvents: 2000 }).join(people.select(col('id'), col('name')), expr('bidder + 0 = id * 1'), 'inner');
    await runToEnd(pairs.writeStream.format('memory').queryName('exprStreams').trigger(Trigger.AvailableNow()).start());
    const persons = new Set(new NexmarkGenerator({ table: 'person', seed: 0, eventsPerSecond: 1000, startTimestamp: START }).rows(0, 2000).map((p) => p.id));
    expect((await session().memoryTable('exprStreams')).length).toBe(modelBids(2000).filter((b) => persons.has(b.bidder)).length);
  });

  it('SQL GROUP BY without an aggregate gives the distinct keys', async () => {
    bids({ maxEvents: 2000 }).createOrReplaceTempView('some_bids');
    await runToEnd(
      session()
        .sql('SELECT channel FROM some_bids GROUP BY channel')
        .writeStream.format('memory')
        .queryName('channels')
        .outputMode('complete')
        .trigger(Trigger.AvailableNow())
        .start(),
    );
    const got = (await session().memoryTable('channels')).map((r) => r.channel).sort();
    expect(got).toEqual([...new Set(modelBids(2000).map((b) => b.channel))].sort());
  });
});
