import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStreamSource, type FileSourceConfig } from './FileStreamSource.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-fss-'));
  dirs.push(d);
  return d;
}

function setup(files: number, maxFilesPerTrigger = 2): { input: string; log: string; config: FileSourceConfig } {
  const input = dir();
  for (let i = 0; i < files; i++) {
    const p = join(input, `f${i}.json`);
    writeFileSync(p, `{"i":${i}}\n`);
    utimesSync(p, 1000 + i, 1000 + i);
  }
  const config: FileSourceConfig = {
    format: 'json',
    path: input,
    schema: [{ name: 'i', type: 'long', nullable: true }],
    read: { mode: 'PERMISSIVE', columnNameOfCorruptRecord: '_corrupt_record', header: false, sep: ',' },
    admission: { maxFilesPerTrigger, latestFirst: false, maxFileAgeMs: Number.POSITIVE_INFINITY },
    cleanSource: 'off',
  };
  return { input, log: join(dir(), 'sources', '0'), config };
}

const filesOf = (splits: ReturnType<FileStreamSource['planSplits']>) =>
  splits.flatMap((s) => (s.type === 'files' ? s.files.map((f) => f.slice(f.lastIndexOf('/') + 1)) : []));

describe('FileStreamSource', () => {
  it('plans (start, end] from its own log, so a replay reads the same files', async () => {
    const { log, config } = setup(5);
    const src = new FileStreamSource(config, log, 16 << 20, 10);
    const end0 = await src.latestOffset(null, { ignoreLimits: false });
    expect(end0).toEqual({ logOffset: 0 });
    const end1 = await src.latestOffset(end0, { ignoreLimits: false });
    expect(end1).toEqual({ logOffset: 1 });
    expect(filesOf(src.planSplits(end0, end1 as object, 2))).toEqual(['f2.json', 'f3.json']);
    const restarted = new FileStreamSource(config, log, 16 << 20, 10);
    expect(filesOf(restarted.planSplits(end0, end1 as object, 2))).toEqual(['f2.json', 'f3.json']);
    expect(filesOf(restarted.planSplits(null, end1 as object, 2))).toEqual(['f0.json', 'f1.json', 'f2.json', 'f3.json']);
  });

  it('after a crash between its log entry and the offset log, the next batch is that entry alone', async () => {
    const { log, config } = setup(6);
    const before = new FileStreamSource(config, log, 16 << 20, 10);
    await before.latestOffset(null, { ignoreLimits: false }); // entry 0 planned, the process then dies
    const after = new FileStreamSource(config, log, 16 << 20, 10);
    const end = await after.latestOffset(null, { ignoreLimits: false });
    expect(end).toEqual({ logOffset: 0 });
    expect(filesOf(after.planSplits(null, end as object, 2))).toEqual(['f0.json', 'f1.json']);
    expect(await after.latestOffset(end, { ignoreLimits: false })).toEqual({ logOffset: 1 });
  });

  it('splits a batch into contiguous tasks, one per file when adaptive sizing is off', async () => {
    const { log, config } = setup(6, 6);
    const src = new FileStreamSource(config, log, 0, 10);
    const end = await src.latestOffset(null, { ignoreLimits: false });
    const splits = src.planSplits(null, end as object, 1);
    expect(splits.map((s) => filesOf([s]))).toEqual([['f0.json'], ['f1.json'], ['f2.json'], ['f3.json'], ['f4.json'], ['f5.json']]);
    const sized = new FileStreamSource(config, join(dir(), 'other'), 16 << 20, 10);
    const end2 = await sized.latestOffset(null, { ignoreLimits: false });
    expect(sized.planSplits(null, end2 as object, 2).map((s) => filesOf([s]))).toEqual([
      ['f0.json', 'f1.json'],
      ['f2.json', 'f3.json'],
      ['f4.json'],
      ['f5.json'],
    ]);
  });
});

describe('the seen-file log', () => {
  it('is compacted every compactInterval entries: a restart after 1000 batches reads a bounded number of files', async () => {
    const input = dir();
    const log = join(dir(), 'sources', '0');
    const config: FileSourceConfig = {
      ...setup(0).config,
      path: input,
      admission: { maxFilesPerTrigger: 1, latestFirst: false, maxFileAgeMs: Number.POSITIVE_INFINITY },
    };
    const src = new FileStreamSource(config, log, 16 << 20, 10);
    let end: unknown = null;
    for (let i = 0; i < 1000; i++) {
      const p = join(input, `f${String(i).padStart(4, '0')}.json`);
      writeFileSync(p, `{"i":${i}}\n`);
      utimesSync(p, 1000 + i, 1000 + i);
      end = await src.latestOffset(end, { ignoreLimits: false });
    }
    expect(end).toEqual({ logOffset: 999 });
    // Entry 999 is a compaction point: one compact file holds everything, the rest was deleted.
    expect(readdirSync(log).filter((n) => !n.endsWith('.tmp'))).toEqual(['999.compact']);

    const restarted = new FileStreamSource(config, log, 16 << 20, 10);
    expect(restarted.logFilesRead).toBe(1);
    // Every batch still replays its own file, and nothing is admitted twice.
    for (const id of [0, 1, 500, 998, 999]) {
      const start = id === 0 ? null : { logOffset: id - 1 };
      expect(filesOf(restarted.planSplits(start, { logOffset: id }, 1))).toEqual([`f${String(id).padStart(4, '0')}.json`]);
    }
    expect(await restarted.latestOffset({ logOffset: 999 }, { ignoreLimits: false })).toEqual({ logOffset: 999 });

    // Five more entries are plain files after the compact one, and are read with it.
    for (let i = 1000; i < 1005; i++) {
      writeFileSync(join(input, `f${i}.json`), `{"i":${i}}\n`);
      end = await restarted.latestOffset(end, { ignoreLimits: false });
    }
    expect(new FileStreamSource(config, log, 16 << 20, 10).logFilesRead).toBe(6);
  });

  it('a missing entry between others is CHECKPOINT_CORRUPT, naming it: its files would be read again', async () => {
    const { log, config } = setup(5, 1);
    const src = new FileStreamSource(config, log, 16 << 20, 10);
    let end: unknown = null;
    for (let i = 0; i < 4; i++) end = await src.latestOffset(end, { ignoreLimits: false });
    rmSync(join(log, '1'));
    expect(() => new FileStreamSource(config, log, 16 << 20, 10)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: join(log, '1') }));
  });
});
