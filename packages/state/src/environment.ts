/**
 * Faults of the environment, named truthfully: an fs or LevelDB error that says the disk is
 * full, the process ran out of file handles, or a path is missing, read-only, forbidden or not a
 * directory becomes a coded error naming the path. These are never a corrupt checkpoint or state
 * store, which would invite a user to delete healthy data.
 */
import { readFileSync } from 'node:fs';
import { CONF_KEYS } from './confKeys.js';
import { SluiceError } from './errors.js';

function readOpenFilesLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

// Read at load: once the handles run out, reading it would fail too.
const limitAtLoad = readOpenFilesLimit();

/** The soft limit on open files of this process (`ulimit -n`), when the platform tells it. */
export function openFilesLimit(): number | undefined {
  return readOpenFilesLimit() ?? limitAtLoad;
}

const ENV_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EMFILE', 'ENFILE', 'EROFS', 'EACCES', 'EPERM', 'EEXIST', 'ENOTDIR']);

function errno(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** LevelDB reports errno as text inside its status message. */
function textErrno(e: unknown): string | undefined {
  const text = [e instanceof Error ? e.message : String(e), (e as { cause?: { message?: string } } | null)?.cause?.message ?? ''].join(' ');
  if (/No space left on device|Disk quota exceeded/i.test(text)) return 'ENOSPC';
  if (/Too many open files/i.test(text)) return 'EMFILE';
  if (/Read-only file system/i.test(text)) return 'EROFS';
  if (/Permission denied/i.test(text)) return 'EACCES';
  return undefined;
}

/**
 * The coded error for an environment fault met at `path` while doing `action` ("write the
 * checkpoint file", "open the state store"), or undefined when `e` is none of those. `access`
 * says whether the action reads or writes, for a permission denied.
 */
export function environmentError(e: unknown, path: string, action: string, access: 'read' | 'write' = 'write'): SluiceError | undefined {
  if (e instanceof SluiceError) return undefined;
  // classic-level's errors carry codes of their own (LEVEL_IO_ERROR) and errno only as text.
  const own = errno(e);
  const code = own !== undefined && ENV_ERRNOS.has(own) ? own : textErrno(e);
  const why = e instanceof Error ? e.message : String(e);
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new SluiceError(
        'DISK_FULL',
        `the disk is full: could not ${action} at ${path} (${why}); free space and restart the query, it continues where it stopped`,
        {
          file: path,
          cause: e,
        },
      );
    case 'EMFILE':
    case 'ENFILE': {
      const limit = openFilesLimit();
      return new SluiceError(
        'TOO_MANY_OPEN_FILES',
        `too many open files (${code}): could not ${action} at ${path} (${why}); this process may hold ${limit ?? 'a limited number of'} files ` +
          `(ulimit -n), and each state shard keeps up to its share of ${CONF_KEYS.stateStoreMaxOpenFiles} open: raise ulimit -n, or lower ` +
          `${CONF_KEYS.stateStoreMaxOpenFiles} or the number of shards`,
        { file: path, option: CONF_KEYS.stateStoreMaxOpenFiles, cause: e },
      );
    }
    case 'EROFS':
      return new SluiceError('PATH_NOT_WRITABLE', `could not ${action} at ${path}: the file system is read-only`, { file: path, cause: e });
    case 'EACCES':
    case 'EPERM':
      return new SluiceError(access === 'read' ? 'PATH_NOT_READABLE' : 'PATH_NOT_WRITABLE', `could not ${action} at ${path}: permission denied`, {
        file: path,
        cause: e,
      });
    case 'EEXIST':
    case 'ENOTDIR':
      return new SluiceError('PATH_NOT_DIRECTORY', `could not ${action} at ${path}: a file, not a directory, is in the way`, { file: path, cause: e });
    default:
      return undefined;
  }
}

/** `environmentError`, or `e` itself when it is no environment fault. */
export function asEnvironmentError(e: unknown, path: string, action: string, access: 'read' | 'write' = 'write'): unknown {
  return environmentError(e, path, action, access) ?? e;
}
