/**
 * The stateless shuffle (repartition): its partition count follows shuffle.partitions at every
 * restart (64, then 4, then auto) with the output exact throughout, each batch's offsets entry
 * records the count it used, and adaptive execution coalesces small partitions while leaving a
 * large one alone; a stateful query's shuffle is never coalesced.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, Trigger } from '@sluice/driver';
import { jsonLines, parseDoc, readSinkJson, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';
import { expectCompleted, runChild } from './killHarness.js';

afterAll(removeTempDirs);

describe('stateless shuffle', () => {
  it('runs at 64 partitions, then at 4 after a restart, then at auto; the output is exact and each offsets entry records its count', async () => {
    const input = tempDir();
    const out = tempDir();
    const ckpt = tempDir();
    let file = 0;
    const add = () => {
      const f = file++;
      writeInput(input, `f${f}.json`, jsonLines(Array.from({ length: 50 }, (_, i) => ({ k: `k${i % 7}`, v: f * 50 + i }))), 1_700_000_000 + f);
    };
    const run = async (partitions: number | string) => {
      const s = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': partitions } });
      try {
        const q = await s.readStream
          .format('json')
          .schema('k STRING, v LONG')
          .option('maxFilesPerTrigger', 1)
          .load(input)
          .repartition('k')
          .select(col('k'), col('v'), col('v').mod(2).alias('odd'))
          .writeStream.format('json')
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.AvailableNow())
          .start(out);
        await q.awaitTermination();
        return q.recentProgress.map((p) => p.shuffle?.numShufflePartitions);
      } finally {
        await s.close();
      }
    };
    add();
    add();
    expect(await run(64)).toEqual([64, 64]);
    add();
    expect(await run(4)).toEqual([4]);
    add();
    // auto: one partition per advisory size of input, at least one per slot.
    expect(await run('auto')).toEqual([2]);
    const rows = readSinkJson(out);
    expect(rows.map((r) => r.v as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, v) => v));
    expect(rows.every((r) => r.odd === (r.v as number) % 2)).toBe(true);
    const recorded = [0, 2, 3].map(
      (b) => (parseDoc(readFileSync(join(ckpt, 'offsets', String(b)), 'utf8')).conf as { shufflePartitions: number }).shufflePartitions,
    );
    expect(recorded).toEqual([64, 4, 2]);
  });

  it('a batch replayed after a crash keeps the partition count it was planned with, whatever the restart asks', async () => {
    const child = fileURLToPath(new URL('./fixtures/shuffle-child.mjs', import.meta.url));
    const dirs = { input: tempDir(), out: tempDir(), ckpt: tempDir() };
    for (let f = 0; f < 3; f++)
      writeInput(dirs.input, `f${f}.json`, jsonLines(Array.from({ length: 20 }, (_, i) => ({ k: `k${i % 5}`, v: f * 20 + i }))), 1_700_000_000 + f);
    const shuffles = (stdout: string) => [...stdout.matchAll(/^SHUFFLE (\d+) (\d+)$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    // Dies once batch 1's offsets are written, before it runs.
    const crashed = await runChild(child, [dirs.input, dirs.out, dirs.ckpt, '8'], { fault: 'after-offsets-write:2' });
    expect(crashed.signal).toBe('SIGKILL');
    const recorded = (id: number) =>
      (parseDoc(readFileSync(join(dirs.ckpt, 'offsets', String(id)), 'utf8')).conf as { shufflePartitions: number }).shufflePartitions;
    expect(recorded(1)).toBe(8);
    const again = await runChild(child, [dirs.input, dirs.out, dirs.ckpt, '3']);
    expectCompleted(again);
    // Batch 1 replays at its recorded 8; batch 2 is planned by this run, at 3.
    expect(shuffles(again.stdout)).toEqual([
      [1, 8],
      [2, 3],
    ]);
    expect(recorded(2)).toBe(3);
    expect(
      readSinkJson(dirs.out)
        .map((r) => r.v as number)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 60 }, (_, v) => v));
  });

  it('coalesces small partitions into fewer tasks and leaves a large one alone; off, every partition is a task', async () => {
    const shuffle = async (adaptive: boolean) =>
      withSession(
        {
          'sluice.executor.cores': 2,
          'sluice.sql.adaptive.streaming.stateless.enabled': adaptive,
          'sluice.sql.adaptive.advisoryPartitionSizeInBytes': 4096,
        },
        async (s) => {
          const input = s.memoryStream(`skewed_${adaptive}`, 'k STRING, v LONG');
          // One key holds most rows: its partition is over the advisory size, the others far under it.
          input.addData([...Array.from({ length: 3000 }, (_, v) => ({ k: 'big', v })), ...Array.from({ length: 40 }, (_, v) => ({ k: `small${v}`, v }))]);
          const q = await s.readStream
            .format('memory')
            .load(`skewed_${adaptive}`)
            .repartition(16, 'k')
            .writeStream.format('memory')
            .queryName(`skewed_out_${adaptive}`)
            .start();
          await q.processAllAvailable();
          const progress = q.lastProgress;
          const rows = await s.memoryTable(`skewed_out_${adaptive}`);
          await q.stop();
          return { shuffle: progress?.shuffle, rows: rows.length };
        },
      );
    const on = await shuffle(true);
    const off = await shuffle(false);
    expect(off).toEqual({ shuffle: { numShufflePartitions: 16, numCoalescedPartitions: 16 }, rows: 3040 });
    expect(on.rows).toBe(3040);
    expect(on.shuffle?.numShufflePartitions).toBe(16);
    // The big partition is a task of its own; the small ones around it merge.
    expect(on.shuffle?.numCoalescedPartitions).toBeGreaterThanOrEqual(2);
    expect(on.shuffle?.numCoalescedPartitions).toBeLessThan(16);
  });

  it('splits a round-robin partition over the advisory size at its blocks, but never one hashed by key', async () => {
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.adaptive.advisoryPartitionSizeInBytes': 4096 }, async (s) => {
      const run = async (name: string, by: string[]) => {
        const input = s.memoryStream(`${name}_in`, 'value LONG, pad STRING');
        input.addData(Array.from({ length: 8000 }, (_, value) => ({ value, pad: 'x'.repeat(20) })));
        const q = await s.readStream
          .format('memory')
          .load(`${name}_in`)
          .repartition(2, ...by)
          .writeStream.format('memory')
          .queryName(name)
          .start();
        await q.processAllAvailable();
        await q.stop();
        const values = (await s.memoryTable(name)).map((r) => Number(r.value));
        return { shuffle: q.lastProgress?.shuffle, exact: new Set(values).size === 8000 && values.length === 8000 };
      };
      // Each map task gives a block to each of the 2 partitions, far over 4 KB each.
      const robin = await run('robin', []);
      expect(robin.exact).toBe(true);
      expect(robin.shuffle?.numShufflePartitions).toBe(2);
      expect(robin.shuffle?.numCoalescedPartitions).toBeGreaterThan(2);
      const hashed = await run('hashed', ['value']);
      expect(hashed.exact).toBe(true);
      expect(hashed.shuffle).toEqual({ numShufflePartitions: 2, numCoalescedPartitions: 2 });
    });
  });

  it('a stateful shuffle is never coalesced, and repartition is refused where it cannot run', async () => {
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 16 }, async (s) => {
      const input = s.memoryStream('counted', 'k STRING');
      input.addData([{ k: 'a' }, { k: 'b' }]);
      const q = await s.readStream
        .format('memory')
        .load('counted')
        .groupBy('k')
        .count()
        .writeStream.format('memory')
        .queryName('counted_out')
        .outputMode('complete')
        .start();
      await q.processAllAvailable();
      expect(q.lastProgress?.shuffle).toBeUndefined();
      expect(q.lastProgress?.stateOperators[0]?.numShufflePartitions).toBe(16);
      await q.stop();
      const stream = s.readStream.format('memory').load('counted');
      expect(() => stream.repartition(0)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
      expect(() => stream.repartition('missing')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN' }));
      expect(() => stream.repartition(4).groupBy('k').count()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION' }));
    });
  });
});
