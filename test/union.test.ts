/**
 * union of streams: each input keeps its own offsets and watermark, and the query's watermark
 * combines them by sluice.sql.streaming.multipleWatermarkPolicy, as in Spark's "watermark with 2
 * streams" test (EventTimeWatermarkSuite): inputs watermarked 10 s and 5 s behind.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, sum, Trigger, window, type StreamingQuery } from '@sluice/driver';
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
          return q.lastProgress?.eventTime.watermark;
        };
        await q.processAllAvailable();
        const afterFirst = await watermarkNow();
        first.addData([at(30)]);
        await q.processAllAvailable();
        expect([afterFirst, await watermarkNow()]).toEqual(expected);
        // Each input has its own offsets in offsets/N.
        const offsets = parseDoc(readFileSync(join(ckpt, 'offsets', '0'), 'utf8')).offsets as unknown[];
        expect(offsets).toHaveLength(2);
        // Rows of both inputs are counted (late ones aside).
        const rows = await s.memoryTable(`union_${policy}`);
        const windows = new Set(rows.map((r) => (r.window as { start: Date }).start.getTime() / 1000));
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
        const df = (i: number) =>
          s.readStream
            .format('json')
            .schema('id STRING')
            .load(dirs[i] as string);
        const q = await df(0)
          .union(df(1), df(2))
          .groupBy('id')
          .count()
          .writeStream.format('memory')
          .queryName('u3')
          .outputMode('complete')
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.AvailableNow())
          .start();
        await q.awaitTermination();
        return Object.fromEntries((await s.memoryTable('u3')).map((r) => [r.id as string, Number(r.count)]));
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

  /**
   * Spark's EventTimeWatermarkSuite over a union of two memory streams of seconds (`value`, event
   * time `value` as a timestamp), each with its own delay. `after(first, second)` adds the data
   * (both before the next trigger, as Spark's MultiAddData), runs it, adds a 0 to the first input
   * as Spark's dummy batch, runs that, and gives the seconds that dummy batch ran with.
   */
  describe("watermarks of two streams across restarts (Spark's EventTimeWatermarkSuite)", () => {
    async function harness(s: Session, delays: [string, string], tag: string) {
      const first = s.memoryStream(`${tag}_1`, 'value LONG');
      const second = s.memoryStream(`${tag}_2`, 'value LONG');
      const input = (name: string, delay: string) =>
        s.readStream.format('memory').load(name).withColumn('eventTime', col('value').cast('timestamp')).withWatermark('eventTime', delay).select(col('value'));
      const ckpt = tempDir();
      let q: StreamingQuery | undefined;
      const start = async () => {
        q = await input(`${tag}_1`, delays[0])
          .union(input(`${tag}_2`, delays[1]))
          .groupBy()
          .agg(sum('value'))
          .writeStream.format('memory')
          .queryName(tag)
          .outputMode('complete')
          .option('checkpointLocation', ckpt)
          .start();
      };
      const ranWith = () => Date.parse(q?.lastProgress?.eventTime.watermark as string) / 1000;
      const after = async (a: number[] = [], b: number[] = []): Promise<number> => {
        if (a.length) first.addData(a.map((value) => ({ value })));
        if (b.length) second.addData(b.map((value) => ({ value })));
        await q?.processAllAvailable();
        first.addData([{ value: 0 }]);
        await q?.processAllAvailable();
        return ranWith();
      };
      /** The watermark the next batch of new data runs with (Spark's checkWatermark: it adds a 1). */
      const check = async (input: 1 | 2): Promise<number> => {
        (input === 1 ? first : second).addData([{ value: 1 }]);
        await q?.processAllAvailable();
        return ranWith();
      };
      await start();
      return {
        after,
        check,
        ranWith,
        restart: async () => {
          await q?.stop();
          await start();
        },
        stop: () => q?.stop(),
        query: () => q as StreamingQuery,
      };
    }

    it('watermark with 2 streams (min): steps, simultaneous data, and a restart that keeps the global watermark but not an input ahead of it', async () => {
      await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
        const h = await harness(s, ['10 seconds', '5 seconds'], 'two_min');
        try {
          const steps: Array<[number[], number[], number]> = [
            [[11], [], 0],
            [[], [6], 1],
            [[], [8], 1],
            [[21], [], 3],
            [[], [17, 28, 39], 11],
            [[31], [], 21],
            [[41], [], 31],
            [[51], [], 34],
            [[100], [100], 90],
            [[120], [110], 105],
            [[130], [125], 120],
            [[100], [100], 120],
            [[140], [100], 120],
            [[100], [135], 130],
            [[200], [190], 185],
          ];
          for (const [a, b, expected] of steps) expect(await h.after(a, b), `after ${a} and ${b}`).toBe(expected);
          await h.restart();
          expect(await h.after()).toBe(185);
          // The left side was ahead of 185 before the restart; after it, it counts only once seen again.
          expect(await h.after([], [200])).toBe(185);
          expect(await h.after([200])).toBe(190);
        } finally {
          await h.stop();
        }
      });
    });

    it.each([
      // Spark's two-stream steps reach 41 s under max, 34 s under min; then 61 s and 50 s after a restart.
      ['max', 41, 51],
      ['min', 34, 45],
    ] as const)(
      '%s: the first data batch after a restart runs with the recovered watermark (%i s), then the new one (%i s)',
      async (policy, before, afterRestart) => {
        await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.streaming.multipleWatermarkPolicy': policy }, async (s) => {
          const h = await harness(s, ['10 seconds', '5 seconds'], `restart_${policy}`);
          try {
            for (const [a, b] of [
              [[11], []],
              [[], [6]],
              [[], [8]],
              [[21], []],
              [[], [17, 28, 39]],
              [[31], []],
              [[41], []],
              [[51], []],
            ] as const)
              await h.after([...a], [...b]);
            expect(h.ranWith()).toBe(before);
            await h.restart();
            const seen: Array<{ rows: number; watermark: number }> = [];
            const q = h.query();
            expect(await h.after([61], [50])).toBe(afterRestart);
            for (const p of q.recentProgress) seen.push({ rows: p.numInputRows, watermark: Date.parse(p.eventTime.watermark as string) / 1000 });
            expect(seen).toEqual([
              { rows: 2, watermark: before },
              { rows: 1, watermark: afterRestart },
            ]);
          } finally {
            await h.stop();
          }
        });
      },
    );

    it.each([
      // max(20 - 10, 30 - 15) = 15; max(120 - 10, 130 - 15) = 115; 150 on the first alone advances it: 150 - 10.
      ['max', 1, [15, 15, 115, 140]],
      // min(20 - 10, 30 - 15) = 10; min(120 - 10, 130 - 15) = 110; 150 on the second alone moves nothing.
      ['min', 2, [10, 10, 110, 110]],
    ] as const)('MultipleWatermarkPolicy %s: the watermark and the policy are recovered at a restart', async (policy, last, expected) => {
      await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.streaming.multipleWatermarkPolicy': policy }, async (s) => {
        const h = await harness(s, ['10 seconds', '15 seconds'], `policy_${policy}`);
        try {
          const got: number[] = [];
          await h.after([20], [30]);
          got.push(await h.check(1));
          await h.restart();
          got.push(await h.check(1));
          await h.after([120], [130]);
          got.push(await h.check(last));
          await h.after(last === 1 ? [150] : [], last === 2 ? [150] : []);
          got.push(await h.check(last));
          expect(got).toEqual(expected);
        } finally {
          await h.stop();
        }
      });
    });

    it('recovery from a checkpoint ignores the session conf: a max checkpoint restarted under min keeps max, with a warning', async () => {
      const warnings: Error[] = [];
      const onWarning = (w: Error) => warnings.push(w);
      process.on('warning', onWarning);
      try {
        await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.streaming.multipleWatermarkPolicy': 'max' }, async (s) => {
          const h = await harness(s, ['10 seconds', '15 seconds'], 'policy_pinned');
          try {
            await h.after([20], [30]);
            expect(await h.check(1)).toBe(15);
            s.conf.set('sluice.sql.streaming.multipleWatermarkPolicy', 'min');
            await h.restart();
            expect(await h.check(1)).toBe(15);
            await h.after([120], [130]);
            expect(await h.check(1)).toBe(115);
            await h.after([150]);
            expect(await h.check(1)).toBe(140);
          } finally {
            await h.stop();
          }
        });
        await new Promise((r) => setImmediate(r));
      } finally {
        process.off('warning', onWarning);
      }
      const ignored = warnings.filter((w) => (w as { code?: string }).code === 'SLUICE_CONF_IGNORED');
      expect(ignored.map((w) => w.message)).toEqual([expect.stringContaining('multipleWatermarkPolicy=min is ignored: this checkpoint keeps the max policy')]);
    });
  });
});
