/**
 * The directories a query uses, checked when it starts, so that a path that cannot work fails
 * `start()` with a coded error naming it (as Spark's "Path does not exist"), not a batch later
 * after retries: the input must be a readable directory; the checkpoint and a file sink must be
 * directories this process can write (they are created when missing).
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { asEnvironmentError, SluiceError } from '@sluice/state';

/** Creates `dir` if needed and checks that this process can write into it. */
export function prepareWritableDir(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw asEnvironmentError(e, dir, `use the ${what} directory`);
  }
}

/** Checks that the input directory `dir` exists, is a directory and can be read. */
export function checkInputDir(dir: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new SluiceError('PATH_NOT_FOUND', `path does not exist: ${dir} (the source's input directory)`, { file: dir, option: 'path' });
    }
    throw asEnvironmentError(e, dir, 'read the input directory', 'read');
  }
  if (!isDir) {
    throw new SluiceError('PATH_NOT_DIRECTORY', `the source's input ${dir} is a file, not a directory`, { file: dir, option: 'path' });
  }
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
  } catch (e) {
    throw new SluiceError('PATH_NOT_READABLE', `cannot read the input directory ${dir}: permission denied`, { file: dir, option: 'path', cause: e });
  }
}
