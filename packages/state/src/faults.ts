/**
 * Fault points for crash tests. With SLUICE_FAULT=<point>[:<n>] in the environment, the process
 * kills itself with SIGKILL the n-th time (default 1) it reaches <point>; a worker fault point
 * (`workerFault`) ends only the worker thread that reaches it, so the driver retries its task in
 * the same run. Without the variable `fault()` is one comparison against a constant. The points
 * are the `fault('...')` and `workerFault('...')` calls in the source, each listed in
 * docs/reference/fault-points.md (test/code-rules.test.ts checks both ways).
 */
import { isMainThread, threadId, workerData } from 'node:worker_threads';

const spec = process.env.SLUICE_FAULT;
const [faultPoint, nth] = spec ? parseSpec(spec) : [undefined, 0];
let hits = 0;

function parseSpec(s: string): [string, number] {
  const i = s.lastIndexOf(':');
  if (i < 0) return [s, 1];
  const n = Number(s.slice(i + 1));
  return [s.slice(0, i), Number.isInteger(n) && n > 0 ? n : 1];
}

export function fault(point: string): void {
  if (faultPoint !== point) return;
  hits += 1;
  // SIGKILL ends the whole process, also when called from a worker thread.
  if (hits === nth) process.kill(process.pid, 'SIGKILL');
}

/**
 * The hits of a worker fault point, counted across every worker thread of the process: a worker
 * that replaces one the fault ended must not fault again at its own n-th hit. The main thread
 * makes the counter and hands it to each worker it starts (faultWorkerData).
 */
const sharedHits: Int32Array | undefined =
  faultPoint === undefined
    ? undefined
    : isMainThread
      ? new Int32Array(new SharedArrayBuffer(4))
      : (workerData as { sluiceFaultHits?: Int32Array } | undefined)?.sluiceFaultHits;

/** What a worker thread is started with, so that its worker fault points count with the others' (empty without SLUICE_FAULT). */
export function faultWorkerData(): { sluiceFaultHits?: Int32Array } {
  return isMainThread && sharedHits !== undefined ? { sluiceFaultHits: sharedHits } : {};
}

/** A fault point that ends the worker thread reaching it (the process lives on); in the main thread, the process. */
export function workerFault(point: string): void {
  if (faultPoint !== point) return;
  const n = sharedHits === undefined ? ++hits : Atomics.add(sharedHits, 0, 1) + 1;
  if (n !== nth) return;
  if (isMainThread) process.kill(process.pid, 'SIGKILL');
  // The line a crash test reads to know the fault ended a worker.
  process.stderr.write(`SLUICE_FAULT ${point}: ended worker thread ${threadId}\n`);
  process.exit(1);
}
