/**
 * Durable checkpoint writes off the driver's thread, grouped: one thread of the process takes
 * every write that is waiting (all queries' batches finishing together) and replaces their files
 * with replaceFiles of @sluice/state (durableFile.ts): temp files written, each synced, renamed,
 * each directory synced once; it also removes the log entries a purge let go. The first sync
 * commits the file system's journal for all of them, so the later ones cost little, and the
 * driver's event loop never waits on a disk. A write resolves once its file and directory are
 * synced, as replaceFile's do: the same steps, from the same module.
 *
 * The thread's code is plain JavaScript, evaluated; it imports @sluice/state as the driver
 * resolves it (no entry file of the driver to resolve from the sources or a build). It holds the
 * process open only while a write is pending; if it dies, the writes it held fail with its error
 * and the next write starts a fresh thread.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const durable = import(workerData.state);
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
async function flush() {
  const { replaceFiles } = await durable;
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
  const writes = batch.filter((r) => !r.remove);
  const errors = replaceFiles(writes.map((r) => ({ path: r.path, data: r.content })));
  writes.forEach((r, i) => { if (errors[i]) failed.set(r.id, errorOf(errors[i])); });
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
  write(path: string, content: string): Promise<void> {
    return this.request({ path, content });
  }

  /** Removes `paths` (those already gone are no error). */
  remove(paths: readonly string[]): Promise<void> {
    return paths.length === 0 ? Promise.resolve() : this.request({ remove: paths });
  }

  private request(req: { path: string; content: string } | { remove: readonly string[] }): Promise<void> {
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
    // The package the driver itself loads, so that both run one copy of its code.
    const state = pathToFileURL(createRequire(import.meta.url).resolve('@sluice/state')).href;
    const worker = new Worker(THREAD, { eval: true, workerData: { state } });
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
