import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Takes every page of the file system under `dir` with a file `filler` (its path is returned), so
 * that the next write of data there is ENOSPC: real disk-full faults on a small tmpfs.
 */
export function fillDisk(dir: string): string {
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(4096));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
  return filler;
}
