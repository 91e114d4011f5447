/**
 * Scenarios from Spark's own streaming tests that Sluice once got wrong: watermark delays in
 * months and years, an aliased window grouped by its alias (SPARK-27340), maxFileAge with
 * latestFirst and maxBytesPerTrigger (SPARK-46641), and complete mode, which runs no no-data
 * batches.
 */
import { describe, expect, it } from 'vitest';
import { col, window } from '@sluice/driver';
import { tempDir, useSession } from './helpers.js';

const DAY = 24 * 3_600_000;
const MONTH = 31 * DAY;

const session = useSession({ 'sluice.sql.shuffle.partitions': 4 });

let streamNo = 0;
function events() {
  const name = `conformance_${streamNo++}`;
  const stream = session().memoryStream(name, 'id STRING, ts TIMESTAMP');
  return { df: session().readStream.format('memory').load(name), add: (rows: Array<{ id: string; ts: number }>) => stream.addData(rows) };
}

describe('withWatermark with months and years (a month is 31 days, as in Spark)', () => {
  it.each([
    ['1 month', MONTH],
    ['interval 1 month', MONTH],
    ['1 year', 12 * MONTH],
    ['2 years 5 months', 29 * MONTH],
  ])('%s: the next batch runs with max event time minus the delay', async (delay, delayMs) => {
    const { df, add } = events();
    const name = `months_${streamNo}`;
    const q = await df
      .withWatermark('ts', delay)
      .groupBy(window('ts', '1 day'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName(name)
      .outputMode('update')
      .option('checkpointLocation', tempDir())
      .start();
    try {
      const max = Date.UTC(2030, 0, 1);
      add([{ id: 'a', ts: max }]);
      await q.processAllAvailable();
      add([{ id: 'a', ts: max - 1 }]);
      await q.processAllAvailable();
      expect(q.lastProgress?.eventTime.watermark).toBe(new Date(max - delayMs).toISOString());
    } finally {
      await q.stop();
    }
  });

  it('windows and triggers still refuse months, which have no fixed length', () => {
    expect(() => window('ts', '1 month')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', option: 'windowDuration' }));
    expect(() => events().df.withWatermark('ts', '1 fortnight')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('complete mode', () => {
  it('runs no no-data batch when the watermark advances, and so never re-emits the table without new data', async () => {
    const { df, add } = events();
    const q = await df
      .withWatermark('ts', '1 minute')
      .groupBy(window('ts', '1 minute'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName('complete_no_data')
      .outputMode('complete')
      .option('checkpointLocation', tempDir())
      .start();
    try {
      const t0 = Date.UTC(2030, 0, 1);
      add([{ id: 'a', ts: t0 }]);
      await q.processAllAvailable();
      add([{ id: 'a', ts: t0 + 10 * 60_000 }]); // the watermark moves 10 minutes on
      await q.processAllAvailable();
      await q.processAllAvailable();
      // Spark: complete mode neither evicts nor drops, so no batch without data is due.
      expect(q.recentProgress.map((p) => p.numInputRows)).toEqual([1, 1]);
      expect((await session().memoryTable('complete_no_data')).map((r) => r.count)).toEqual([1, 1]);
    } finally {
      await q.stop();
    }
  });
});

describe('an aliased window grouped by its alias keeps the watermark (SPARK-27340)', () => {
  const SEC = 1000;
  const T0 = Date.UTC(2030, 0, 1);
  const batches = [
    [
      { id: 'a', ts: T0 + 1 * SEC },
      { id: 'a', ts: T0 + 2 * SEC },
      { id: 'b', ts: T0 + 3 * SEC },
    ],
    [{ id: 'a', ts: T0 + 21 * SEC }], // watermark -> 11 s: window [0, 5) closes
    [
      { id: 'a', ts: T0 + 4 * SEC },
      { id: 'b', ts: T0 + 22 * SEC },
    ], // 4 s is late: its window ended at 5 <= 11
    [{ id: 'z', ts: T0 + 60 * SEC }], // watermark -> 50 s: windows [20, 25) close
  ];
  const window0 = { start: new Date(T0).toISOString(), end: new Date(T0 + 5 * SEC).toISOString() };
  const window20 = { start: new Date(T0 + 20 * SEC).toISOString(), end: new Date(T0 + 25 * SEC).toISOString() };

  it.each([
    [
      'select(window(...).alias(w)), groupBy(w)',
      (df: ReturnType<typeof events>['df']) => df.withWatermark('ts', '10 seconds').select(window('ts', '5 seconds').alias('w'), col('id')).groupBy('w', 'id'),
    ],
    [
      'withColumn(w, window(...)), groupBy(w)',
      (df: ReturnType<typeof events>['df']) => df.withWatermark('ts', '10 seconds').withColumn('w', window('ts', '5 seconds')).groupBy('id', 'w'),
    ],
    [
      'select(ts.alias(t)), groupBy(window(t))',
      (df: ReturnType<typeof events>['df']) =>
        df.withWatermark('ts', '10 seconds').select(col('ts').alias('t'), col('id')).groupBy(window('t', '5 seconds').alias('w'), 'id'),
    ],
  ])('%s: append mode emits closed windows once and drops late rows', async (_name, group) => {
    const { df, add } = events();
    const name = `aliased_${streamNo}`;
    const q = await group(df).count().writeStream.format('memory').queryName(name).outputMode('append').option('checkpointLocation', tempDir()).start();
    try {
      for (const b of batches) {
        add(b);
        await q.processAllAvailable();
      }
      const rows = (await session().memoryTable(name)).map((r) => {
        const w = r.w as { start: Date; end: Date };
        return `${w.start.toISOString()}|${w.end.toISOString()}|${String(r.id)}|${String(r.count)}`;
      });
      expect(rows.sort()).toEqual(
        [
          `${window0.start}|${window0.end}|a|2`,
          `${window0.start}|${window0.end}|b|1`,
          `${window20.start}|${window20.end}|a|1`,
          `${window20.start}|${window20.end}|b|1`,
        ].sort(),
      );
      const dropped = q.recentProgress.reduce((n, p) => n + (p.stateOperators[0]?.numRowsDroppedByWatermark ?? 0), 0);
      expect(dropped).toBe(1);
    } finally {
      await q.stop();
    }
  });

  it('dropDuplicates on an alias of the watermarked column expires its keys', async () => {
    const { df, add } = events();
    const q = await df
      .withWatermark('ts', '10 seconds')
      .select(col('id'), col('ts').alias('t'))
      .dropDuplicates(['id', 't'])
      .writeStream.format('memory')
      .queryName('aliased_dedup')
      .outputMode('append')
      .option('checkpointLocation', tempDir())
      .start();
    try {
      for (const b of [[{ id: 'a', ts: T0 }], [{ id: 'a', ts: T0 + 30 * SEC }], [{ id: 'a', ts: T0 }]]) {
        add(b);
        await q.processAllAvailable();
      }
      // The third row is late (its time is at or below the 20 s watermark): dropped, not emitted.
      expect((await session().memoryTable('aliased_dedup')).map((r) => (r.t as Date).getTime() - T0)).toEqual([0, 30 * SEC]);
      expect(q.lastProgress?.stateOperators[0]?.numRowsDroppedByWatermark).toBe(1);
    } finally {
      await q.stop();
    }
  });
});
