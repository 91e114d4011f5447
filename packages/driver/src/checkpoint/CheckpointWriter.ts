/**
 * Durable checkpoint writes off the driver's thread, grouped: one thread of the process takes
 * every write that is waiting (all queries' batches finishing together), writes each to a temp
 * file, syncs them, renames them into place and syncs each directory once (and removes the log
 * entries a purge let go). The first sync commits the file system's journal for all of them, so
 * the later ones cost little, and the driver's event loop never waits on a disk. A write resolves
 * once its file and directory are synced, as writeFileDurable's do (versionedFile.ts): the same
 * steps, in the same order, per file.
 *
 * The thread's code is plain JavaScript, evaluated (no entry file to resolve from the sources or
 * a build). It holds the process open only while a write is pending; if it dies, the writes it
 * held fail with its error and the next write starts a fresh thread.
 */
import { Worker } from 'node:worker_threads';

const THREAD = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { dirname } = require('node:path');
let queue = [];
let flushing = false;
parentPort.on('message', (req) => {
  queue.push(req);
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
});
const errorOf = (e) => ({ message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path });
function openTemp(r) {
  try {
    return fs.openSync(r.tmp, 'w');
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
    fs.mkdirSync(dirname(r.path), { recursive: true });
    return fs.openSync(r.tmp, 'w');
  }
}
function flush() {
  flushing = false;
  const batch = queue;
  queue = [];
  const failed = new Map();
  // Removals (a log's purged entries) need no sync: a leftover entry is purged again.
  for (const r of batch.filter((r) => r.remove)) {
    for (const path of r.remove) {
      try { fs.unlinkSync(path); } catch (e) { if (e.code !== 'ENOENT') failed.set(r.id, errorOf(e)); }
    }
  }
  const fail = (r, e) => {
    failed.set(r.id, errorOf(e));
    try { fs.rmSync(r.tmp, { force: true }); } catch {}
  };
  const step = (rs, f) => rs.filter((r) => { try { f(r); return true; } catch (e) { fail(r, e); return false; } });
  let live = step(batch.filter((r) => !r.remove), (r) => {
    r.fd = openTemp(r);
    try { fs.writeSync(r.fd, r.content); } catch (e) { fs.closeSync(r.fd); throw e; }
  });
  live = step(live, (r) => {
    try { fs.fsyncSync(r.fd); } finally { fs.closeSync(r.fd); }
  });
  live = step(live, (r) => fs.renameSync(r.tmp, r.path));
  const dirs = new Map();
  for (const r of live) {
    const d = dirname(r.path);
    if (!dirs.has(d)) dirs.set(d, []);
    dirs.get(d).push(r);
  }
  for (const [d, rs] of dirs) {
    try {
      const fd = fs.openSync(d, 'r');
      try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
    } catch (e) {
      for (const r of rs) failed.set(r.id, errorOf(e));
    }
  }
  parentPort.postMessage(batch.map((r) => ({ id: r.id, error: failed.get(r.id) })));
}
`;

interface Reply {
  id: number;
  error?: { message: string; code?: string; errno?: number; syscall?: string; path?: string };
}

interface Pending {
  resolve: () => void;
  reject: (e: Error) => void;
}

class CheckpointWriter {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** Writes `content` to `path` durably (temp file, sync, rename, directory sync). */
  write(path: string, tmp: string, content: string): Promise<void> {
    return this.request({ path, tmp, content });
  }

  /** Removes `paths` (those already gone are no error). */
  remove(paths: readonly string[]): Promise<void> {
    return paths.length === 0 ? Promise.resolve() : this.request({ remove: paths });
  }

  private request(req: { path: string; tmp: string; content: string } | { remove: readonly string[] }): Promise<void> {
    const id = this.nextId++;
    const worker = this.thread();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, ...req });
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD, { eval: true });
    worker.on('message', (replies: Reply[]) => {
      for (const r of replies) {
        const p = this.pending.get(r.id);
        this.pending.delete(r.id);
        if (r.error) p?.reject(Object.assign(new Error(r.error.message), r.error));
        else p?.resolve();
      }
      if (this.pending.size === 0) worker.unref();
    });
    const end = (e: Error): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    worker.on('error', end);
    worker.on('exit', (code) => end(new Error(`the checkpoint writer thread exited (code ${code}) with writes pending`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

/** The process's one writer: grouping works across every session and query. */
export const checkpointWriter = new CheckpointWriter();
