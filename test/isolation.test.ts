/**
 * One failing query leaves the others alone: a FAILFAST query meets a malformed line and fails
 * with its code, while a stateful query in the same session keeps running and stays exact.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, Trigger, window } from '@sluice/driver';
import { jsonLines, removeTempDirs, tempDir, writeInput } from './helpers.js';

afterAll(removeTempDirs);

describe('isolation between queries', () => {
  it('a query failing on bad input terminates alone; a stateful query beside it finishes with exact counts', async () => {
    const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
    try {
      const good = tempDir();
      const bad = tempDir();
      const minute = (m: number) => new Date(Date.UTC(2024, 0, 1, 0, m)).toISOString();
      writeInput(good, 'a.json', jsonLines(Array.from({ length: 60 }, (_, i) => ({ id: `k${i % 3}`, ts: minute(i % 10) }))));
      writeInput(bad, 'a.json', ['{"id": "x", "ts": "2024-01-01T00:00:00Z"}', '{not json']);
      const failing = await s.readStream
        .format('json')
        .schema('id STRING, ts TIMESTAMP')
        .option('mode', 'FAILFAST')
        .load(bad)
        .writeStream.format('memory')
        .queryName('failing')
        .start();
      const counting = await s.readStream
        .format('json')
        .schema('id STRING, ts TIMESTAMP')
        .load(good)
        .groupBy(window(col('ts'), '5 minutes'), 'id')
        .count()
        .writeStream.format('memory')
        .queryName('counting')
        .outputMode('complete')
        .trigger(Trigger.AvailableNow())
        .start();
      await expect(failing.awaitTermination()).rejects.toMatchObject({ code: 'MALFORMED_RECORD' });
      await counting.awaitTermination();
      expect(counting.exception).toBeNull();
      const rows = await s.memoryTable('counting');
      const counts = Object.fromEntries(rows.map((r) => [`${(r['window'] as { start: Date }).start.toISOString()} ${r['id'] as string}`, r['count']]));
      // 60 rows: ids k0..k2 in turn, minutes 0..9 in turn: each (5-minute window, id) holds 10 rows.
      expect(Object.values(counts)).toEqual(Array(6).fill(10));
      expect(failing.isActive).toBe(false);
    } finally {
      await s.close();
    }
  });
});
