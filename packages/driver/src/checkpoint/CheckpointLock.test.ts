import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointLock } from './CheckpointLock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function ckpt(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-lock-'));
  dirs.push(d);
  return d;
}

describe('CheckpointLock', () => {
  it('refuses a second holder in the same process until released', () => {
    const d = ckpt();
    const lock = CheckpointLock.acquire(join(d, '.lock'), d);
    expect(readFileSync(join(d, '.lock'), 'utf8')).toBe(String(process.pid));
    expect(() => CheckpointLock.acquire(join(d, '.lock'), d)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_LOCKED', file: d }));
    lock.release();
    CheckpointLock.acquire(join(d, '.lock'), d).release();
  });

  it('refuses while another live process holds it', () => {
    const d = ckpt();
    writeFileSync(join(d, '.lock'), String(process.ppid)); // a live process that is not us
    expect(() => CheckpointLock.acquire(join(d, '.lock'), d)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_LOCKED' }));
  });

  it('takes over the lock of a dead process', () => {
    const d = ckpt();
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    writeFileSync(join(d, '.lock'), child.stdout.toString()); // that process has exited
    const lock = CheckpointLock.acquire(join(d, '.lock'), d);
    expect(readFileSync(join(d, '.lock'), 'utf8')).toBe(String(process.pid));
    lock.release();
  });
});
