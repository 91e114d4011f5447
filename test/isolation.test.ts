/**
 * One failing query leaves the others alone: a FAILFAST query meets a malformed line, a udf
 * throws, a checkpoint's disk fills up; each fails with its code, while the queries beside it in
 * the same session keep running and stay exact.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { col, lit, Session, Trigger, udf, window } from '@sluice/driver';
import { hasRoot, jsonLines, mountTmpfs, readSinkJson, removeTempDirs, tempDir, unmount, writeInput } from './helpers.js';

const UDFS = new URL('./fixtures/udfs.mjs', import.meta.url);

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
      const counts = Object.fromEntries(rows.map((r) => [`${(r.window as { start: Date }).start.toISOString()} ${r.id as string}`, r.count]));
      // 60 rows: ids k0..k2 in turn, minutes 0..9 in turn: each (5-minute window, id) holds 10 rows.
      expect(Object.values(counts)).toEqual(Array(6).fill(10));
      expect(failing.isActive).toBe(false);
    } finally {
      await s.close();
    }
  });

  it.skipIf(!hasRoot())(
    'a throwing udf and a full disk each end their own query with its code; a stateful and a file-sink query beside them stay exact',
    async () => {
      const disk = mountTmpfs(200);
      const s = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 } });
      try {
        const input = tempDir();
        const pad = 'x'.repeat(1000);
        for (let f = 0; f < 20; f++) {
          writeInput(
            input,
            `f${String(f).padStart(2, '0')}.json`,
            jsonLines(Array.from({ length: 10 }, (_, i) => ({ id: `k${(f * 10 + i) % 4}`, v: f * 10 + i, pad }))),
            1000 + f,
          );
        }
        const stream = () => s.readStream.format('json').schema('id STRING, v LONG, pad STRING').option('maxFilesPerTrigger', 2).load(input);
        const fail = udf(UDFS, 'fail', 'string');
        const throwing = await stream()
          .select(fail(col('id')).alias('id'))
          .writeStream.format('memory')
          .queryName('throwing')
          .start();
        // 200 KB cannot hold 200 rows of 1 KB: the sink's part files fill the disk.
        const full = await stream()
          .writeStream.format('json')
          .option('checkpointLocation', join(disk, 'ckpt'))
          .trigger(Trigger.AvailableNow())
          .start(join(disk, 'out'));
        const counting = await stream()
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName('healthy_counts')
          .outputMode('complete')
          .trigger(Trigger.AvailableNow())
          .start();
        const out = tempDir();
        const copying = await stream()
          .select(col('v'), lit(1).alias('one'))
          .writeStream.format('json')
          .option('checkpointLocation', tempDir())
          .trigger(Trigger.AvailableNow())
          .start(out);

        await expect(throwing.awaitTermination()).rejects.toMatchObject({ code: 'UDF_FAILED' });
        await expect(full.awaitTermination()).rejects.toMatchObject({ code: 'DISK_FULL' });
        await counting.awaitTermination();
        await copying.awaitTermination();
        expect([counting.exception, copying.exception]).toEqual([null, null]);
        const counts = Object.fromEntries((await s.memoryTable('healthy_counts')).map((r) => [r.id as string, Number(r.count)]));
        expect(counts).toEqual({ k0: 50, k1: 50, k2: 50, k3: 50 });
        expect(
          readSinkJson(out)
            .map((r) => r.v as number)
            .sort((a, b) => a - b),
        ).toEqual(Array.from({ length: 200 }, (_, v) => v));
        expect(throwing.exception?.code).toBe('UDF_FAILED');
      } finally {
        await s.close();
        unmount(disk);
      }
    },
  );
});
