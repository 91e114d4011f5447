import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommitLog } from './CommitLog.js';
import { MetadataLog } from './MetadataLog.js';
import { readVersioned, writeVersioned } from './versionedFile.js';

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

  it('lists ids numerically, ignoring temp files, and purges below a threshold idempotently', () => {
    const d = join(dir(), 'log');
    const log = new MetadataLog<number>(d);
    for (const id of [0, 1, 2, 10, 11]) log.add(id, id * 10);
    writeFileSync(join(d, '12.123.abc.tmp'), 'partial');
    expect(log.ids()).toEqual([0, 1, 2, 10, 11]);
    expect(log.getLatest()).toEqual({ batchId: 11, value: 110 });
    log.purge(10);
    log.purge(10);
    expect(log.ids()).toEqual([10, 11]);
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

  it('a file with the wrong fields is CHECKPOINT_CORRUPT', () => {
    const d = dir();
    const log = new CommitLog(join(d, 'commits'));
    writeVersioned(join(d, 'commits', '0'), { something: 'else' });
    expect(() => log.get(0)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: join(d, 'commits', '0') }));
  });
});
