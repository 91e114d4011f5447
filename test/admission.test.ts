/**
 * Admission control seen from a running query: the exact files of every batch, for each
 * combination of limits. Each input file holds one row naming itself.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Trigger, type OptionValue } from '@sluice/driver';
import { tempDir, useSession, writeInput } from './helpers.js';

const session = useSession();

const DAY = 24 * 3600;

/** A file of exactly `bytes` bytes holding {"name": name}. */
function writeNamed(dir: string, name: string, mtimeSec: number, bytes = 100): void {
  const base = JSON.stringify({ name, pad: '' });
  const line = JSON.stringify({ name, pad: 'x'.repeat(bytes - 1 - base.length) });
  writeInput(dir, `${name}.json`, [line], mtimeSec);
}

/** Runs the query with `trigger` over `dir` and returns the file names of each batch, in order. */
async function batchesOf(dir: string, options: Record<string, OptionValue>, trigger = Trigger.AvailableNow(), checkpoint = tempDir()): Promise<string[][]> {
  const batches: string[][] = [];
  const q = await session()
    .readStream.format('json')
    .schema('name STRING, pad STRING')
    .options(options)
    .load(dir)
    .writeStream.foreachBatch((rows, batchId) => {
      batches[batchId] = rows.map((r) => r.name as string).sort();
    })
    .option('checkpointLocation', checkpoint)
    .trigger(trigger)
    .start();
  await q.awaitTermination();
  return batches;
}

describe('file source admission control', () => {
  it('maxFilesPerTrigger caps the file count, oldest first', async () => {
    const dir = tempDir();
    for (let i = 0; i < 7; i++) writeNamed(dir, `f${i}`, 1_000 + i);
    expect(await batchesOf(dir, { maxFilesPerTrigger: 3 })).toEqual([['f0', 'f1', 'f2'], ['f3', 'f4', 'f5'], ['f6']]);
  });

  it('orders files of equal modification time by name', async () => {
    const dir = tempDir();
    for (const n of ['c', 'a', 'd', 'b']) writeNamed(dir, n, 5_000);
    expect(await batchesOf(dir, { maxFilesPerTrigger: 3 })).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('maxBytesPerTrigger is soft: a 10-unit limit over 3-unit files gives 4-file batches', async () => {
    const dir = tempDir();
    for (let i = 0; i < 10; i++) writeNamed(dir, `f${i}`, 1_000 + i, 300);
    expect(await batchesOf(dir, { maxBytesPerTrigger: 1000 })).toEqual([
      ['f0', 'f1', 'f2', 'f3'],
      ['f4', 'f5', 'f6', 'f7'],
      ['f8', 'f9'],
    ]);
  });

  it("maxBytesPerTrigger accepts Spark's byte strings, and a batch always takes one file", async () => {
    const dir = tempDir();
    for (let i = 0; i < 3; i++) writeNamed(dir, `f${i}`, 1_000 + i, 2048);
    expect(await batchesOf(dir, { maxBytesPerTrigger: '1k' })).toEqual([['f0'], ['f1'], ['f2']]);
  });

  it('with both limits a batch stops at whichever is reached first', async () => {
    const dir = tempDir();
    for (let i = 0; i < 10; i++) writeNamed(dir, `f${i}`, 1_000 + i, 300);
    // The file limit wins: 3 files are 900 bytes, under the 1000-byte limit.
    expect(await batchesOf(dir, { maxFilesPerTrigger: 3, maxBytesPerTrigger: 1000 })).toEqual([
      ['f0', 'f1', 'f2'],
      ['f3', 'f4', 'f5'],
      ['f6', 'f7', 'f8'],
      ['f9'],
    ]);
    // The byte limit wins: 4 files reach 1200 bytes before 5 files.
    expect(await batchesOf(dir, { maxFilesPerTrigger: 5, maxBytesPerTrigger: 1000 })).toEqual([
      ['f0', 'f1', 'f2', 'f3'],
      ['f4', 'f5', 'f6', 'f7'],
      ['f8', 'f9'],
    ]);
  });

  it('latestFirst takes the newest files first', async () => {
    const dir = tempDir();
    for (let i = 0; i < 5; i++) writeNamed(dir, `f${i}`, 1_000 + i);
    expect(await batchesOf(dir, { maxFilesPerTrigger: 2, latestFirst: true })).toEqual([['f3', 'f4'], ['f1', 'f2'], ['f0']]);
  });

  it('maxFileAge counts from the newest file; every file counts in the first batch', async () => {
    const dir = tempDir();
    const checkpoint = tempDir();
    const newest = 100 * DAY;
    writeNamed(dir, 'old', newest - 30 * DAY);
    writeNamed(dir, 'new', newest);
    expect(await batchesOf(dir, { maxFileAge: '7 days' }, Trigger.AvailableNow(), checkpoint)).toEqual([['new', 'old']]);
    // Later batches skip files older than the newest file minus maxFileAge.
    writeNamed(dir, 'late-but-old', newest - 8 * DAY);
    writeNamed(dir, 'late-and-recent', newest - 6 * DAY);
    const next = await batchesOf(dir, { maxFileAge: '7 days' }, Trigger.AvailableNow(), checkpoint);
    expect(next.filter(Boolean)).toEqual([['late-and-recent']]);
  });

  it('latestFirst with maxBytesPerTrigger ignores maxFileAge, so old files are read too (SPARK-46641)', async () => {
    const dir = tempDir();
    const newest = 100 * DAY;
    writeNamed(dir, 'old', newest - 30 * DAY);
    writeNamed(dir, 'older', newest - 60 * DAY);
    writeNamed(dir, 'new', newest);
    expect(await batchesOf(dir, { maxFileAge: '7 days', latestFirst: true, maxBytesPerTrigger: 100 })).toEqual([['new'], ['old'], ['older']]);
  });

  it('Trigger.Once ignores the limits and runs one batch', async () => {
    const dir = tempDir();
    for (let i = 0; i < 5; i++) writeNamed(dir, `f${i}`, 1_000 + i);
    expect(await batchesOf(dir, { maxFilesPerTrigger: 2 }, Trigger.Once())).toEqual([['f0', 'f1', 'f2', 'f3', 'f4']]);
  });

  it('cleanSource archive moves the files of committed batches, keeping their names', async () => {
    const dir = tempDir();
    const archive = tempDir();
    for (let i = 0; i < 4; i++) writeNamed(dir, `f${i}`, 1_000 + i);
    const batches = await batchesOf(dir, { maxFilesPerTrigger: 2, cleanSource: 'archive', sourceArchiveDir: archive });
    expect(batches).toEqual([
      ['f0', 'f1'],
      ['f2', 'f3'],
    ]);
    expect(readdirSync(dir)).toEqual([]);
    expect(readdirSync(archive).sort()).toEqual(['f0.json', 'f1.json', 'f2.json', 'f3.json']);
  });

  it('cleanSource archive of files logged under another load() path is SOURCE_PATH_CHANGED, naming both', async () => {
    const first = tempDir();
    const second = tempDir();
    const archive = tempDir();
    const checkpoint = tempDir();
    writeNamed(first, 'a', 1_000);
    const opts = { cleanSource: 'archive', sourceArchiveDir: archive };
    expect(await batchesOf(first, opts, Trigger.AvailableNow(), checkpoint)).toEqual([['a']]);
    // The same checkpoint, restarted on another directory.
    writeNamed(second, 'b', 2_000);
    const moved = join(first, 'a.json');
    writeNamed(first, 'a', 1_000); // the file is back where the log says it was taken from
    await expect(batchesOf(second, opts, Trigger.AvailableNow(), checkpoint)).rejects.toMatchObject({
      code: 'SOURCE_PATH_CHANGED',
      file: moved,
      message: expect.stringContaining(second),
    });
    expect(existsSync(moved)).toBe(true); // nothing was archived under a wrong name
  });

  it('cleanSource delete removes the files of committed batches', async () => {
    const dir = tempDir();
    for (let i = 0; i < 3; i++) writeNamed(dir, `f${i}`, 1_000 + i);
    await batchesOf(dir, { cleanSource: 'delete' });
    expect(existsSync(join(dir, 'f0.json'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});
