/**
 * Durable file writes, written once for every package: checkpoint files, sink manifests, task
 * part files and Delta commits all reach the disk through these steps.
 *
 * - `replaceFile`: a temp file beside the target is written, fsynced, renamed over the target and
 *   the directory fsynced, so a reader sees the old file or the whole new one, never a torn one.
 *   `replaceFiles` takes the same steps for many files, step by step across them (the checkpoint
 *   writer thread's group: the first sync commits the journal for all of them).
 * - `createFileExclusive`: a complete, fsynced temp file is linked to the name, which fails when
 *   another writer took it first: that is `false`, not an error (a Delta writer retries on it).
 * - `writeFileSynced`: written and fsynced in place, for files no reader trusts until a later
 *   commit names them (a task's part files).
 * - `fsyncDir`: a directory's entries made durable.
 *
 * A temp file is removed when its write fails (a full disk must not keep a half-written one), and
 * every fault of the environment (ENOSPC, EMFILE, EROFS, ...) is a coded error naming the target
 * (environment.ts): `DISK_FULL`, not a raw errno.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { asEnvironmentError } from './environment.js';

/** What a write is handed: text (written as UTF-8) or bytes. */
export type FileData = string | Uint8Array;

/** One file of `replaceFiles`. */
export interface Replacement {
  path: string;
  data: FileData;
}

/**
 * A hidden temp name beside `path`, `.<name>.<uuid>.tmp` as Spark's checkpoint file manager names
 * them: in the same directory, so the rename or link stays on one file system, and hidden, so that
 * a reader listing the directory passes it by.
 */
export function tempPathOf(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
}

const bytesOf = (data: FileData): Uint8Array => (typeof data === 'string' ? Buffer.from(data) : data);

/** Opens `path` for writing from the start, creating its directory when it is missing. */
function openCreating(path: string): number {
  try {
    return openSync(path, 'w');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, 'w');
  }
}

function writeAndSync(path: string, bytes: Uint8Array): void {
  const fd = openCreating(path);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // The write's own error is the one to report; a leftover temp name is skipped by readers.
  }
}

/**
 * `replaceFile` for each of `files`, each step taken for all of them before the next: temp files
 * written, each synced, renamed, then each directory synced once. Returns, index for index, the
 * error a file failed with (as node:fs threw it, for the caller to map) or undefined once it is
 * durable; a failure of one file leaves the others going on, and its temp file removed.
 */
export function replaceFiles(files: readonly Replacement[]): Array<Error | undefined> {
  const errors: Array<Error | undefined> = files.map(() => undefined);
  const temps = files.map((f) => tempPathOf(f.path));
  const fds = new Map<number, number>();
  const step = (indexes: number[], f: (i: number) => void): number[] =>
    indexes.filter((i) => {
      try {
        f(i);
        return true;
      } catch (e) {
        errors[i] = e as Error;
        removeQuietly(temps[i] as string);
        return false;
      }
    });
  let live = step(
    files.map((_, i) => i),
    (i) => {
      const fd = openCreating(temps[i] as string);
      try {
        writeSync(fd, bytesOf((files[i] as Replacement).data));
      } catch (e) {
        closeSync(fd);
        throw e;
      }
      fds.set(i, fd);
    },
  );
  live = step(live, (i) => {
    const fd = fds.get(i) as number;
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
  live = step(live, (i) => renameSync(temps[i] as string, (files[i] as Replacement).path));
  const dirs = new Map<string, number[]>();
  for (const i of live) {
    const d = dirname((files[i] as Replacement).path);
    const group = dirs.get(d);
    if (group) group.push(i);
    else dirs.set(d, [i]);
  }
  for (const [d, group] of dirs) {
    try {
      syncDir(d);
    } catch (e) {
      for (const i of group) errors[i] = e as Error;
    }
  }
  return errors;
}

/**
 * Replaces `path` with `data` durably (temp file, sync, rename over, directory sync): a reader and
 * a crash see the old file or the whole new one. `action` words the error ("could not <action> at
 * <path>"), which names `path`, never the temp file.
 */
export function replaceFile(path: string, data: FileData, action = 'write'): void {
  const [error] = replaceFiles([{ path, data }]);
  if (error !== undefined) throw asEnvironmentError(error, path, action);
}

/**
 * Creates `path` holding `data` only if no file has that name, durably: a complete, synced temp
 * file is linked to the name and the directory synced. Returns false, writing nothing, when the
 * name is taken (another writer's file stays as it is).
 */
export function createFileExclusive(path: string, data: FileData, action = 'write'): boolean {
  const tmp = tempPathOf(path);
  try {
    let created = true;
    try {
      writeAndSync(tmp, bytesOf(data));
      try {
        linkSync(tmp, path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        created = false;
      }
    } finally {
      removeQuietly(tmp);
    }
    // Synced after the temp name is gone, so that the one sync covers the link and the removal.
    if (created) syncDir(dirname(path));
    return created;
  } catch (e) {
    throw asEnvironmentError(e, path, action);
  }
}

/**
 * Writes `data` to `path` in place (its directory created when missing) and syncs it; returns the
 * bytes written. Not atomic: for files that no reader trusts until a later commit names them, which
 * then syncs their directory (fsyncDir).
 */
export function writeFileSynced(path: string, data: FileData, action = 'write'): number {
  const bytes = bytesOf(data);
  try {
    writeAndSync(path, bytes);
  } catch (e) {
    throw asEnvironmentError(e, path, action);
  }
  return bytes.byteLength;
}

/** Makes the entries of directory `dir` durable (files created, renamed or linked in it). */
export function fsyncDir(dir: string, action = 'sync the directory'): void {
  try {
    syncDir(dir);
  } catch (e) {
    throw asEnvironmentError(e, dir, action);
  }
}
