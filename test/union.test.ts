/**
 * union of streams: each input keeps its own offsets and watermark, and the query's watermark
 * combines them by sluice.sql.streaming.multipleWatermarkPolicy, as in Spark's "watermark with 2
 * streams" test (EventTimeWatermarkSuite): inputs watermarked 10 s and 5 s behind.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, Trigger, window } from '@sluice/driver';
import { jsonLines, parseDoc, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';

afterAll(removeTempDirs);

const at = (s: number) => ({ t: new Date(s * 1000) });
const iso = (s: number) => new Date(s * 1000).toISOString();

describe('union', () => {
  it.each([
    // first: max 10 s - 10 s = 0; second: 20 s - 5 s = 15 s. Then first sees 30 s: 20 s.
    ['min', [iso(0), iso(15)]],
    ['max', [iso(15), iso(20)]],
  ] as const)('the %s policy combines the watermarks of two inputs as Spark does', async (policy, expected) => {
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.streaming.multipleWatermarkPolicy': policy }, async (s) => {
      const first = s.memoryStream(`first_${policy}`, 't TIMESTAMP');
      const second = s.memoryStream(`second_${policy}`, 't TIMESTAMP');
      const input = (name: string, delay: string) => s.readStream.format('memory').load(name).withWatermark('t', delay);
      const ckpt = tempDir();
      // Both before the start, so that the first batch reads both (a batch reading only the
      // second would make the first's row late under the max policy, as it would in Spark).
      first.addData([at(10)]);
      second.addData([at(20)]);
      const q = await input(`first_${policy}`, '10 seconds')
        .union(input(`second_${policy}`, '5 seconds'))
        .groupBy(window(col('t'), '5 seconds'))
        .count()
        .writeStream.format('memory')
        .queryName(`union_${policy}`)
        .outputMode('update')
        .option('checkpointLocation', ckpt)
        .start();
      try {
        const watermarkNow = async (): Promise<string | undefined> => {
          // A late row moves no maximum: the batch it makes shows the watermark as it stands.
          first.addData([at(0)]);
          await q.processAllAvailable();
          return q.lastProgress?.eventTime['watermark'];
        };
        await q.processAllAvailable();
        const afterFirst = await watermarkNow();
        first.addData([at(30)]);
        await q.processAllAvailable();
        expect([afterFirst, await watermarkNow()]).toEqual(expected);
        // Each input has its own offsets in offsets/N.
        const offsets = parseDoc(readFileSync(join(ckpt, 'offsets', '0'), 'utf8'))['offsets'] as unknown[];
        expect(offsets).toHaveLength(2);
        // Rows of both inputs are counted (late ones aside).
        const rows = await s.memoryTable(`union_${policy}`);
        const windows = new Set(rows.map((r) => (r['window'] as { start: Date }).start.getTime() / 1000));
        // (Under min the first probe, at 0 s, is not late yet: its window counts too.)
        expect([...windows].filter((w) => w > 0).sort((a, b) => a - b)).toEqual([10, 20, 30]);
      } finally {
        await q.stop();
      }
    });
  });

  it('counts every row of three file inputs exactly once across a restart, each input with its own offsets and sources/i/ log', async () => {
    const ckpt = tempDir();
    const dirs = [tempDir(), tempDir(), tempDir()];
    let file = 0;
    const add = (input: number, n: number) =>
      writeInput(dirs[input] as string, `f${file++}.json`, jsonLines(Array.from({ length: n }, (_, k) => ({ id: `k${k % 2}` }))), 1_700_000_000 + file);
    const run = async () => {
      const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
      try {
        const df = (i: number) => s.readStream.format('json').schema('id STRING').load(dirs[i] as string);
        const q = await df(0).union(df(1), df(2)).groupBy('id').count().writeStream.format('memory').queryName('u3').outputMode('complete')
          .option('checkpointLocation', ckpt).trigger(Trigger.AvailableNow()).start();
        await q.awaitTermination();
        return Object.fromEntries((await s.memoryTable('u3')).map((r) => [r['id'] as string, Number(r['count'])]));
      } finally {
        await s.close();
      }
    };
    add(0, 3);
    add(1, 4);
    add(2, 5);
    expect(await run()).toEqual({ k0: 2 + 2 + 3, k1: 1 + 2 + 2 });
    add(1, 2);
    expect(await run()).toEqual({ k0: 7 + 1, k1: 5 + 1 });
    expect([0, 1, 2].map((i) => existsSync(join(ckpt, 'sources', String(i))))).toEqual([true, true, true]);
  });

  it('refuses inputs with other columns, naming the column, and a checkpoint of a query with another number of inputs', async () => {
    await withSession({}, async (s) => {
      s.memoryStream('a', 'id STRING, v LONG');
      s.memoryStream('b', 'id STRING, v DOUBLE');
      s.memoryStream('c', 'id STRING');
      const load = (n: string) => s.readStream.format('memory').load(n);
      expect(() => load('a').union(load('b'))).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA', column: 'v' }));
      expect(() => load('a').union(load('c'))).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA', column: 'v' }));
      const ckpt = tempDir();
      const one = await load('c').writeStream.format('memory').queryName('one').option('checkpointLocation', ckpt).start();
      s.memoryStream('c').addData([{ id: 'x' }]);
      await one.processAllAvailable();
      await one.stop();
      await expect(load('c').union(load('c')).writeStream.format('memory').queryName('two').option('checkpointLocation', ckpt).start()).rejects.toMatchObject({
        code: 'CHECKPOINT_INCOMPATIBLE',
      });
    });
  });
});
