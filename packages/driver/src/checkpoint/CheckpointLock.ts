/**
 * One running query per checkpoint. The lock is a file holding the owner's pid; it is taken with
 * an exclusive create, and a lock whose pid is no longer alive is stale (its owner was killed), so a
 * restart right after SIGKILL is never refused. Locks held in this process are tracked in memory.
 */
import { openSync, readFileSync, rmSync, writeSync, closeSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SluiceError } from '@sluice/state';

const heldHere = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class CheckpointLock {
  private constructor(private readonly path: string) {}

  static acquire(path: string, checkpoint: string): CheckpointLock {
    if (heldHere.has(path)) {
      throw new SluiceError('CHECKPOINT_LOCKED', `checkpoint ${checkpoint} is in use by another query in this process`, {
        file: checkpoint,
      });
    }
    mkdirSync(dirname(path), { recursive: true });
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        heldHere.add(path);
        return new CheckpointLock(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      let owner = NaN;
      try {
        owner = Number(readFileSync(path, 'utf8'));
      } catch {
        continue; // removed meanwhile: try again
      }
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new SluiceError('CHECKPOINT_LOCKED', `checkpoint ${checkpoint} is in use by process ${owner}`, {
          file: checkpoint,
        });
      }
      rmSync(path, { force: true }); // stale: its owner died (or an empty file from a torn create)
    }
    throw new SluiceError('CHECKPOINT_LOCKED', `could not lock checkpoint ${checkpoint}`, { file: checkpoint });
  }

  release(): void {
    if (!heldHere.delete(this.path)) return;
    rmSync(this.path, { force: true });
  }
}
