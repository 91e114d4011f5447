/**
 * The file source's I/O edge: listing a directory and cleaning up files of committed batches.
 * Which files a batch takes is decided in FileAdmission.ts.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { SluiceError } from '@sluice/state';
import type { FileEntry } from './FileAdmission.js';

export type CleanSourceMode = 'off' | 'archive' | 'delete';

function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

/**
 * Hidden files as Spark skips them: '.name', '_name' (but not a '_a=b' partition name) and
 * in-progress '._COPYING_' uploads. Writers stage files under such names and rename them in.
 */
export function isHiddenFileName(name: string): boolean {
  return name.startsWith('.') || (name.startsWith('_') && !name.includes('=')) || name.endsWith('._COPYING_');
}

/**
 * The regular files directly in `dir` (symlinks followed), hidden names skipped, with absolute
 * paths, sorted by path. A missing directory lists as empty: as in Spark, the source waits for it.
 */
export function listFiles(dir: string): FileEntry[] {
  const root = path.resolve(dir);
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return [];
    throw e;
  }
  const out: FileEntry[] = [];
  for (const name of names) {
    if (isHiddenFileName(name)) continue;
    const p = path.join(root, name);
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch (e) {
      // Removed between readdir and stat, or a dangling symlink: not a file to read.
      if (errCode(e) === 'ENOENT') continue;
      throw e;
    }
    if (!st.isFile()) continue;
    out.push({ path: p, size: st.size, mtimeMs: st.mtimeMs });
  }
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

/** Whether `child` is `parent` or below it; both resolved. */
function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || !(rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

/**
 * Eager check of `cleanSource`/`sourceArchiveDir`. As in Spark, archive mode needs an archive
 * directory, and it may not lie inside the source directory (archived files would be listed again).
 */
export function validateCleanSource(mode: CleanSourceMode, sourceDir: string, archiveDir?: string): void {
  if (mode !== 'archive') return;
  if (archiveDir === undefined || archiveDir === '') {
    throw new SluiceError('INVALID_OPTION', "options.sourceArchiveDir is required when options.cleanSource is 'archive'", { option: 'sourceArchiveDir' });
  }
  if (isInside(path.resolve(archiveDir), path.resolve(sourceDir))) {
    throw new SluiceError('INVALID_OPTION', `options.sourceArchiveDir must not be inside the source directory '${sourceDir}' ` + `(got '${archiveDir}')`, {
      option: 'sourceArchiveDir',
    });
  }
}

async function moveFile(from: string, to: string): Promise<void> {
  await fsp.mkdir(path.dirname(to), { recursive: true });
  try {
    await fsp.rename(from, to);
    return;
  } catch (e) {
    if (errCode(e) === 'ENOENT') return; // already moved or deleted by an earlier attempt
    if (errCode(e) !== 'EXDEV') throw e;
  }
  try {
    await fsp.copyFile(from, to);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return;
    throw e;
  }
  await unlinkIfPresent(from);
}

async function unlinkIfPresent(p: string): Promise<void> {
  try {
    await fsp.unlink(p);
  } catch (e) {
    if (errCode(e) !== 'ENOENT') throw e;
  }
}

const CLEAN_CONCURRENCY = 8;

/**
 * Archives or deletes files of a committed batch. Idempotent: a restart may repeat the cleanup of
 * the last committed batch, so a file that is already gone is skipped. Archive keeps each file's
 * path relative to `sourceDir` under `archiveDir` and replaces an archived file of the same name.
 */
export async function cleanSourceFiles(files: string[], mode: CleanSourceMode, sourceDir: string, archiveDir?: string): Promise<void> {
  if (mode === 'off' || files.length === 0) return;
  validateCleanSource(mode, sourceDir, archiveDir);
  const src = path.resolve(sourceDir);
  const clean = async (file: string): Promise<void> => {
    if (mode === 'delete') return unlinkIfPresent(file);
    const abs = path.resolve(file);
    const rel = path.relative(src, abs);
    if (rel === '' || !isInside(abs, src)) {
      // The log took the file under another directory: the load() path changed at a restart.
      throw new SluiceError(
        'SOURCE_PATH_CHANGED',
        `cleanSource 'archive': ${file} was taken from ${path.dirname(abs)}, but the source now reads ${src}, so its path ` +
          `under ${String(archiveDir)} is unknown; restart with load('${path.dirname(abs)}') to finish archiving, or cleanSource 'off'`,
        { file: abs },
      );
    }
    return moveFile(file, path.join(path.resolve(archiveDir as string), rel));
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++] as string;
      await clean(file);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CLEAN_CONCURRENCY, files.length) }, () => worker()));
}
