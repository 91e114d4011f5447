/**
 * The file sink's commit is durable in order: the part files' directory entries are synced before
 * the manifest that names them, so a power loss can never leave a manifest naming a file that the
 * directory lost. The order is seen through node:fs itself.
 */
import type * as fs from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const events: string[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const fdPaths = new Map<number, string>();
  return {
    ...real,
    openSync: (path: fs.PathLike, flags: fs.OpenMode = 'r', mode?: fs.Mode) => {
      const fd = real.openSync(path, flags, mode);
      fdPaths.set(fd, String(path));
      return fd;
    },
    fsyncSync: (fd: number) => {
      events.push(`fsync ${fdPaths.get(fd)}`);
      real.fsyncSync(fd);
    },
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      events.push(`rename ${String(to)}`);
      real.renameSync(from, to);
    },
  };
});

const { FileSink } = await import('./FileSink.js');

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  events.length = 0;
});

describe('FileSink', () => {
  it('syncs the sink directory after its part files are written and before the manifest names them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-sink-'));
    dirs.push(dir);
    const sink = new FileSink('json', dir, { header: false, sep: ',' });
    // A task wrote and fsynced its part file (in a worker, not seen here).
    const part = sink.taskOutput(0, 0, false);
    writeFileSync(join(dir, part.type === 'file' ? part.fileName : 'x'), '{"a":1}\n');
    await sink.addBatch({
      batchId: 0,
      schema: [],
      outputMode: 'append',
      rows: [],
      results: [
        {
          ok: true,
          kind: 'stateless',
          threadId: 1,
          numInputRows: 1,
          numOutputRows: 1,
          files: [{ name: part.type === 'file' ? part.fileName : '', size: 8, rows: 1 }],
        },
      ],
    });
    const dirSync = events.indexOf(`fsync ${dir}`);
    const manifest = events.indexOf(`rename ${join(dir, '_sluice_metadata', '0')}`);
    expect(events).toContain(`fsync ${dir}`);
    expect(manifest).toBeGreaterThan(dirSync);
  });
});
