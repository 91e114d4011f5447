/**
 * The one durable-write module: a replace leaves the old file or the whole new one, an exclusive
 * create tells a taken name apart from a failure, no temp file outlives a failed write, and a full
 * disk (a real one: a small tmpfs, which needs root) is DISK_FULL naming the target.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileExclusive, fsyncDir, replaceFile, replaceFiles, writeFileSynced } from './durableFile.js';
import { fillDisk } from './fillDisk.js';

const dirs: string[] = [];
const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) execFileSync('umount', ['-l', m], { stdio: 'pipe', timeout: 10_000 });
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-durable-'));
  dirs.push(d);
  return d;
}

/** Root mounts the tmpfs; under CI=true the test runs (and fails without root) rather than skip. */
const canMount = process.getuid?.() === 0 || process.env.CI === 'true';

/** A 64 KiB tmpfs, then every page of it taken by a filler file: the next write of data is ENOSPC. */
function fullDisk(): string {
  const d = dir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', d], { stdio: 'pipe', timeout: 10_000 });
  mounts.push(d);
  return d;
}

describe('replaceFile', () => {
  it('replaces the file whole, creating its directory, and leaves no temp file', () => {
    const d = dir();
    const path = join(d, 'sub', 'f');
    replaceFile(path, 'old');
    replaceFile(path, new Uint8Array([110, 101, 119]));
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(readdirSync(join(d, 'sub'))).toEqual(['f']);
  });

  it('a failed replace leaves the old file and removes its temp file', () => {
    const d = dir();
    // A non-empty directory cannot be renamed over: the last step before the directory sync fails.
    const path = join(d, 'taken');
    mkdirSync(path);
    writeFileSync(join(path, 'inside'), 'old');
    expect(() => replaceFile(path, 'new')).toThrow();
    expect(readFileSync(join(path, 'inside'), 'utf8')).toBe('old');
    expect(readdirSync(d)).toEqual(['taken']);
  });

  it('a directory in the way is PATH_NOT_DIRECTORY naming the target', () => {
    const d = dir();
    writeFileSync(join(d, 'file'), 'x');
    const path = join(d, 'file', 'sub', 'f');
    expect(() => replaceFile(path, 'v')).toThrow(expect.objectContaining({ code: 'PATH_NOT_DIRECTORY', file: path }));
  });

  it('replaceFiles: a file that fails leaves the others of its group written', () => {
    const d = dir();
    writeFileSync(join(d, 'file'), 'x');
    const errors = replaceFiles([
      { path: join(d, 'a', '0'), data: 'a' },
      { path: join(d, 'file', '0'), data: 'b' },
      { path: join(d, 'a', '1'), data: 'c' },
    ]);
    expect(errors.map((e) => (e as NodeJS.ErrnoException | undefined)?.code)).toEqual([undefined, 'ENOTDIR', undefined]);
    expect(readdirSync(join(d, 'a')).sort()).toEqual(['0', '1']);
    expect(readFileSync(join(d, 'a', '1'), 'utf8')).toBe('c');
  });

  it.skipIf(!canMount)('on a full disk is DISK_FULL naming the file; the old file stays whole and no temp file is left', () => {
    const d = fullDisk();
    const path = join(d, 'f');
    replaceFile(path, 'old');
    fillDisk(d);
    expect(() => replaceFile(path, 'new')).toThrow(expect.objectContaining({ code: 'DISK_FULL', file: path }));
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(d).sort()).toEqual(['f', 'filler']);
  });
});

describe('createFileExclusive', () => {
  it('creates a free name; a taken one is false and keeps the other writer’s file', () => {
    const d = dir();
    const path = join(d, 'log', '0.json');
    expect(createFileExclusive(path, 'mine')).toBe(true);
    expect(createFileExclusive(path, 'theirs')).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('mine');
    expect(readdirSync(join(d, 'log'))).toEqual(['0.json']);
  });

  it('a file in the way of its directory is PATH_NOT_DIRECTORY, not a taken name', () => {
    const d = dir();
    writeFileSync(join(d, 'log'), 'x');
    const path = join(d, 'log', 'sub', '0.json');
    expect(() => createFileExclusive(path, 'v')).toThrow(expect.objectContaining({ code: 'PATH_NOT_DIRECTORY', file: path }));
  });

  it.skipIf(!canMount)('on a full disk is DISK_FULL naming the file, which is not created; no temp file is left', () => {
    const d = fullDisk();
    fillDisk(d);
    const path = join(d, '0.json');
    expect(() => createFileExclusive(path, 'commit', 'write the commit')).toThrow(
      expect.objectContaining({ code: 'DISK_FULL', file: path, message: expect.stringContaining(`could not write the commit at ${path}`) }),
    );
    expect(readdirSync(d)).toEqual(['filler']);
  });
});

describe('writeFileSynced and fsyncDir', () => {
  it('writes in place, creating the directory, and returns the bytes written', () => {
    const d = dir();
    const path = join(d, 'p', 'part-0.json');
    expect(writeFileSynced(path, 'é\n')).toBe(3);
    expect(readFileSync(path, 'utf8')).toBe('é\n');
    fsyncDir(join(d, 'p'));
  });

  it.skipIf(!canMount)('on a full disk is DISK_FULL naming the file', () => {
    const d = fullDisk();
    fillDisk(d);
    const path = join(d, 'part-0.json');
    expect(() => writeFileSynced(path, 'rows', 'write the sink file')).toThrow(expect.objectContaining({ code: 'DISK_FULL', file: path }));
  });

  it('a directory that cannot be opened is a coded error naming it', () => {
    const d = dir();
    writeFileSync(join(d, 'file'), 'x');
    expect(() => fsyncDir(join(d, 'file', 'sub'))).toThrow(expect.objectContaining({ code: 'PATH_NOT_DIRECTORY', file: join(d, 'file', 'sub') }));
  });
});
