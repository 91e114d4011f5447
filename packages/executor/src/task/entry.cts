/**
 * The file piscina loads in each worker thread: CommonJS on purpose. piscina first tries
 * `require()` on its task file, and on Node 20 `require()` of an ES module goes through a path
 * (`loadESMFromCJS`) that aborts the whole process with a native assertion
 * (`facade->InstantiateModule`) when a worker is terminated while it loads; session create/close
 * loops hit it within a few hundred cycles. A CommonJS entry never takes that path: it loads the
 * ES module worker (worker.ts) with `import()`, which a terminated worker merely abandons.
 */
import type { TaskRequest, TaskResult } from './messages.js';

type WorkerModule = { default: (task: TaskRequest) => Promise<TaskResult> };

// Loading starts with the worker; a failure surfaces in every task, never as an unhandled rejection.
const worker: Promise<WorkerModule> = import('./worker.js');
worker.catch(() => undefined);

export = async function runTask(task: TaskRequest): Promise<TaskResult> {
  return (await worker).default(task);
};
