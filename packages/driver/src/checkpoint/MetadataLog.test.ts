import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitLog } from './CommitLog.js';
import { MetadataLog } from './MetadataLog.js';
import { readVersioned, writeVersioned, writeVersionedAsync } from './versionedFile.js';

const dirs: string[] = [];
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-log-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('MetadataLog', () => {
  it('adds an entry once: a second add of the same batch returns false and keeps the first', () => {
    const log = new MetadataLog<{ v: number }>(join(dir(), 'log'));
    expect(log.add(0, { v: 1 })).toBe(true);
    expect(log.add(0, { v: 2 })).toBe(false);
    expect(log.get(0)).toEqual({ v: 1 });
    expect(log.get(1)).toBeUndefined();
  });

  it('append writes an entry once, making its directory, and returns false for one already there', async () => {
    const log = new MetadataLog<{ v: number }>(join(dir(), 'a', 'log'));
    expect(await log.append(0, { v: 1 })).toBe(true);
    expect(await log.append(0, { v: 2 })).toBe(false);
    expect(log.get(0)).toEqual({ v: 1 });
    expect(readdirSync(log.dir)).toEqual(['0']);
  });

  it('lists ids numerically, ignoring temp files, and purges below a threshold idempotently', async () => {
    const d = join(dir(), 'log');
    const log = new MetadataLog<number>(d);
    for (const id of [0, 1, 2, 10, 11]) log.add(id, id * 10);
    writeFileSync(join(d, '12.123.abc.tmp'), 'partial');
    expect(log.ids()).toEqual([0, 1, 2, 10, 11]);
    expect(log.getLatest()).toEqual({ batchId: 11, value: 110 });
    await log.purge(10);
    await log.purge(10);
    expect(log.ids()).toEqual([10, 11]);
    // Later purges remove what fell below the new threshold, without listing the directory again.
    for (const id of [12, 13]) log.add(id, id * 10);
    await log.purge(13);
    expect(log.ids()).toEqual([13]);
  });

  it('writes a version header line then JSON', () => {
    const d = dir();
    const log = new CommitLog(join(d, 'commits'));
    log.add(3, { nextBatchWatermarkMs: 42 });
    expect(readFileSync(join(d, 'commits', '3'), 'utf8')).toBe('v1\n{"nextBatchWatermarkMs":42}\n');
  });
});

describe('versioned files', () => {
  it('a torn file is CHECKPOINT_CORRUPT naming the file', () => {
    const p = join(dir(), 'f');
    writeVersioned(p, { a: [1, 2, 3] });
    const whole = readFileSync(p, 'utf8');
    writeFileSync(p, whole.slice(0, whole.length - 5));
    expect(() => readVersioned(p)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: p }));
    writeFileSync(p, '');
    expect(() => readVersioned(p)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: p }));
  });

  it('a newer format version is CHECKPOINT_VERSION_UNSUPPORTED naming the file', () => {
    const p = join(dir(), 'f');
    writeFileSync(p, 'v7\n{}\n');
    expect(() => readVersioned(p)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_VERSION_UNSUPPORTED', file: p }));
  });

  it('writes off the thread in groups: many files at once each land whole, and no temp file is left', async () => {
    const d = dir();
    const paths = Array.from({ length: 50 }, (_, i) => join(d, `q${i % 5}`, String(i)));
    await Promise.all(paths.map((p, i) => writeVersionedAsync(p, { i, pad: 'x'.repeat(i * 100) })));
    paths.forEach((p, i) => {
      expect(readVersioned(p)).toEqual({ i, pad: 'x'.repeat(i * 100) });
    });
    for (let q = 0; q < 5; q++) expect(readdirSync(join(d, `q${q}`)).sort()).toEqual(Array.from({ length: 10 }, (_, k) => String(q + 5 * k)).sort());
  });

  it('a write off the thread that fails is a coded error naming its file, while the others of its group land', async () => {
    const d = dir();
    writeFileSync(join(d, 'file'), 'not a directory');
    const bad = join(d, 'file', 'sub', '0');
    const [failed, landed] = await Promise.allSettled([writeVersionedAsync(bad, 1), writeVersionedAsync(join(d, 'ok', '0'), 2)]);
    expect(failed).toMatchObject({ status: 'rejected', reason: { code: 'PATH_NOT_DIRECTORY', file: bad } });
    expect(landed.status).toBe('fulfilled');
    expect(readVersioned(join(d, 'ok', '0'))).toBe(2);
    await writeVersionedAsync(join(d, 'ok', '1'), 3);
    expect(readVersioned(join(d, 'ok', '1'))).toBe(3);
  });

  it('a file with the wrong fields is CHECKPOINT_CORRUPT', () => {
    const d = dir();
    const log = new CommitLog(join(d, 'commits'));
    writeVersioned(join(d, 'commits', '0'), { something: 'else' });
    expect(() => log.get(0)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: join(d, 'commits', '0') }));
  });
});
