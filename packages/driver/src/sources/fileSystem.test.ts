import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/state';
import { cleanSourceFiles, listFiles, validateCleanSource } from './fileSystem.js';

let root: string;
let src: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-fs-'));
  src = path.join(root, 'in');
  fs.mkdirSync(src);
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function write(p: string, text: string, mtimeSec?: number): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  if (mtimeSec !== undefined) fs.utimesSync(p, mtimeSec, mtimeSec);
  return p;
}

describe('listFiles', () => {
  it('lists regular files with absolute paths, sizes and mtimes, skipping hidden names', () => {
    write(path.join(src, 'b.json'), 'hello', 2_000);
    write(path.join(src, 'a.json'), 'abc', 1_000);
    write(path.join(src, '.a.json.crc'), 'x');
    write(path.join(src, '_SUCCESS'), '');
    write(path.join(src, 'c.json._COPYING_'), 'partial');
    write(path.join(src, 'sub', 'nested.json'), 'not listed');

    const rel = path.relative(process.cwd(), src);
    const listed = listFiles(rel);
    expect(listed).toEqual([
      { path: path.join(src, 'a.json'), size: 3, mtimeMs: 1_000_000 },
      { path: path.join(src, 'b.json'), size: 5, mtimeMs: 2_000_000 },
    ]);
    for (const e of listed) expect(path.isAbsolute(e.path)).toBe(true);
  });

  it('lists a missing directory as empty', () => {
    expect(listFiles(path.join(root, 'not-yet'))).toEqual([]);
  });

  it('follows a symlink to a file and skips a dangling one', () => {
    const target = write(path.join(root, 'elsewhere.json'), '1234');
    fs.symlinkSync(target, path.join(src, 'link.json'));
    fs.symlinkSync(path.join(root, 'gone'), path.join(src, 'dangling.json'));
    expect(listFiles(src).map((e) => [path.basename(e.path), e.size])).toEqual([['link.json', 4]]);
  });
});

describe('validateCleanSource', () => {
  function code(fn: () => void): [string, string | undefined] {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(SluiceError);
      return [(e as SluiceError).code, (e as SluiceError).option];
    }
    throw new Error('expected a SluiceError');
  }

  it('accepts off and delete without an archive dir, and archive outside the source', () => {
    expect(() => validateCleanSource('off', src)).not.toThrow();
    expect(() => validateCleanSource('delete', src)).not.toThrow();
    expect(() => validateCleanSource('archive', src, path.join(root, 'archive'))).not.toThrow();
    // A sibling whose name starts with the source's name is not inside it.
    expect(() => validateCleanSource('archive', src, `${src}-archive`)).not.toThrow();
  });

  it('rejects archive mode without an archive dir', () => {
    expect(code(() => validateCleanSource('archive', src))).toEqual(['INVALID_OPTION', 'sourceArchiveDir']);
  });

  it('rejects an archive dir inside or equal to the source dir', () => {
    for (const dir of [path.join(src, 'archive'), src, `${src}/./x/..`]) {
      expect(code(() => validateCleanSource('archive', src, dir))).toEqual(['INVALID_OPTION', 'sourceArchiveDir']);
    }
  });
});

describe('cleanSourceFiles', () => {
  it('delete removes the files and nothing else', async () => {
    const a = write(path.join(src, 'a.json'), 'a');
    const b = write(path.join(src, 'b.json'), 'b');
    const keep = write(path.join(src, 'c.json'), 'c');
    await cleanSourceFiles([a, b], 'delete', src);
    expect(fs.existsSync(a)).toBe(false);
    expect(fs.existsSync(b)).toBe(false);
    expect(fs.existsSync(keep)).toBe(true);
  });

  it('archive moves files under the archive dir, keeping their path relative to the source', async () => {
    const archive = path.join(root, 'archive');
    const a = write(path.join(src, 'a.json'), 'A');
    const n = write(path.join(src, 'day=1', 'n.json'), 'N');
    await cleanSourceFiles([a, n], 'archive', src, archive);
    expect(fs.existsSync(a)).toBe(false);
    expect(fs.existsSync(n)).toBe(false);
    expect(fs.readFileSync(path.join(archive, 'a.json'), 'utf8')).toBe('A');
    expect(fs.readFileSync(path.join(archive, 'day=1', 'n.json'), 'utf8')).toBe('N');
  });

  it('is idempotent: repeating a cleanup after a restart is harmless', async () => {
    const archive = path.join(root, 'archive');
    const a = write(path.join(src, 'a.json'), 'A');
    const b = write(path.join(src, 'b.json'), 'B');
    await cleanSourceFiles([a], 'archive', src, archive);
    await cleanSourceFiles([a, b], 'archive', src, archive);
    expect(fs.readdirSync(archive).sort()).toEqual(['a.json', 'b.json']);
    expect(fs.readdirSync(src)).toEqual([]);

    const c = write(path.join(src, 'c.json'), 'C');
    await cleanSourceFiles([c], 'delete', src);
    await cleanSourceFiles([c, path.join(src, 'never.json')], 'delete', src);
    expect(fs.existsSync(c)).toBe(false);
  });

  it('off touches nothing', async () => {
    const a = write(path.join(src, 'a.json'), 'A');
    await cleanSourceFiles([a], 'off', src);
    expect(fs.existsSync(a)).toBe(true);
  });

  it('archive checks its options and refuses a file outside the source dir', async () => {
    const a = write(path.join(src, 'a.json'), 'A');
    await expect(cleanSourceFiles([a], 'archive', src)).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'sourceArchiveDir',
    });
    const outside = write(path.join(root, 'other.json'), 'O');
    await expect(cleanSourceFiles([outside], 'archive', src, path.join(root, 'archive'))).rejects.toMatchObject({
      code: 'SOURCE_PATH_CHANGED',
      file: outside,
      message: expect.stringContaining(`the source now reads ${src}`),
    });
    expect(fs.existsSync(outside)).toBe(true);
    expect(fs.existsSync(a)).toBe(true);
  });

  it('moves many files', async () => {
    const archive = path.join(root, 'archive');
    const files = Array.from({ length: 40 }, (_, i) => write(path.join(src, `f${i}.json`), `${i}`));
    await cleanSourceFiles(files, 'archive', src, archive);
    expect(fs.readdirSync(src)).toEqual([]);
    expect(fs.readdirSync(archive)).toHaveLength(40);
  });
});
