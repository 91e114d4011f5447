/**
 * Runs tasks on the executors: one piscina pool per slot (exactly one worker thread each), so the
 * driver decides which slot runs a task. A task takes the first free slot, in the order tasks
 * were submitted, so stages of several queries share the slots first-come first-served.
 *
 * A task whose worker crashed or threw is retried (a crashed worker is replaced by piscina on the
 * same slot) up to `sluice.task.maxFailures` attempts; a coded error from the task is a user
 * error that would fail again, so it fails the stage at once.
 *
 * A query run that must end now (a stop that timed out) is aborted: the workers running its tasks
 * are terminated and replaced, and its tasks not started yet never start.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import type { TaskRequest, TaskResult, TaskSuccess } from '@sluice/executor';
import { CONF_KEYS, environmentError, LOCAL_PROPERTY_KEYS, SluiceError } from '@sluice/state';

function outOfMemory(task: TaskRequest, heapMB: number | undefined): SluiceError {
  return new SluiceError(
    'WORKER_OUT_OF_MEMORY',
    `task ${task.partition} of batch ${task.batchId} ran its executor out of JavaScript heap` +
      (heapMB === undefined ? '' : ` (${heapMB} MB, from ${CONF_KEYS.stateStoreMaxMemoryMB}; see ${CONF_KEYS.executorHeapMB})`) +
      '; the worker was replaced and the batch was not committed: give the executors more memory, or make batches smaller (maxFilesPerTrigger, rowsPerBatch)',
    { option: CONF_KEYS.executorHeapMB },
  );
}

export function workerEntry(): string {
  let path: string;
  try {
    path = createRequire(import.meta.url).resolve('@sluice/executor/worker');
  } catch (e) {
    throw new SluiceError('WORKER_ENTRY_MISSING', `cannot resolve the executor worker entry: ${(e as Error).message}; run pnpm build`, {
      cause: e,
    });
  }
  if (!existsSync(path)) {
    throw new SluiceError('WORKER_ENTRY_MISSING', `executor worker entry ${path} does not exist; run pnpm build`, { file: path });
  }
  return path;
}

/** Why an aborted run's tasks end; the run's loop treats it as a stop, never as a failure. */
export class RunAborted extends Error {
  constructor(readonly runId: string) {
    super(`query run ${runId} was aborted`);
    this.name = 'RunAborted';
  }
}

interface Waiter {
  wanted: number | undefined;
  runId: string;
  pool: string;
  /** Submission order, for FIFO. */
  seq: number;
  resolve: (slot: number) => void;
  reject: (e: Error) => void;
}

/** A scheduler pool (sluice.scheduler.pools): Spark's schedulingMode, weight and minShare. */
export interface PoolConf {
  schedulingMode: 'FIFO' | 'FAIR';
  weight: number;
  minShare: number;
}

export interface PoolSettings {
  /** How slots go to pools: FIFO (by submission) or FAIR (FairSchedulingAlgorithm). */
  mode: 'FIFO' | 'FAIR';
  pools: Readonly<Record<string, PoolConf>>;
}

export const DEFAULT_POOL = 'default';
/** The local property naming the scheduler pool of the queries started afterwards (Spark's spark.scheduler.pool). */
export const POOL_PROPERTY = LOCAL_PROPERTY_KEYS.schedulerPool;
const UNLISTED_POOL: PoolConf = { schedulingMode: 'FIFO', weight: 1, minShare: 0 };

/** Running and waiting tasks of a pool, for session.metrics(). */
export interface PoolMetrics {
  schedulingMode: 'FIFO' | 'FAIR';
  weight: number;
  minShare: number;
  runningTasks: number;
  waitingTasks: number;
}

export class TaskScheduler {
  private readonly pools: Piscina[];
  private readonly filename: string;
  private readonly free: number[];
  private readonly waiting: Waiter[] = [];
  /** Rejects the task running on a slot, set while one runs there. */
  private readonly slotFailed: Array<((e: Error) => void) | undefined> = [];
  /** The run whose task runs on a slot. */
  private readonly slotRun: Array<string | undefined> = [];
  private readonly aborted = new Map<string, RunAborted>();
  private closed = false;
  private seq = 0;
  /** The pool and run of the task on each slot, and the running tasks per pool and per run. */
  private readonly slotPool: Array<string | undefined> = [];
  private readonly slotJob: Array<string | undefined> = [];
  private readonly runningByPool = new Map<string, number>();
  private readonly runningByRun = new Map<string, number>();

  constructor(
    readonly slots: number,
    private readonly maxFailures: number,
    filename = workerEntry(),
    /** Each worker's V8 heap sizes in MB (workerHeap in Session.ts); undefined: V8's defaults. */
    private readonly heap?: { oldMB: number; youngMB: number },
    private readonly pooling: PoolSettings = { mode: 'FIFO', pools: {} },
  ) {
    this.filename = filename;
    this.pools = Array.from({ length: slots }, (_, slot) => this.startPool(slot));
    this.free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  /**
   * One pool of exactly one worker thread per slot. When its worker dies (a crash in a task, or
   * an entry file that cannot load), the slot gets a fresh pool: piscina's own replacement of a
   * worker that cannot load leaves the next task pending forever, while a fresh pool fails it.
   * The task running on the slot, if any, fails and is retried.
   */
  private startPool(slot: number): Piscina {
    const pool = new Piscina({
      filename: this.filename,
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      ...(this.heap !== undefined && {
        resourceLimits: { maxOldGenerationSizeMb: this.heap.oldMB, maxYoungGenerationSizeMb: this.heap.youngMB },
      }),
    });
    pool.on('error', (e: Error) => {
      if (this.pools[slot] === pool) this.replaceWorker(slot, e);
    });
    return pool;
  }

  /** Gives `slot` a fresh pool (unless the scheduler is closed); the task running there fails with `reason`. */
  private replaceWorker(slot: number, reason: Error): void {
    const pool = this.pools[slot] as Piscina;
    if (!this.closed) this.pools[slot] = this.startPool(slot);
    this.slotFailed[slot]?.(reason);
    void pool.destroy().catch(() => {});
  }

  /** A free slot: `wanted` when given (state tasks run where their shard lives), else any. */
  private acquire(wanted: number | undefined, runId: string, pool: string): Promise<number> {
    const i = wanted === undefined ? this.free.length - 1 : this.free.indexOf(wanted);
    if (i >= 0) {
      const slot = this.free.splice(i, 1)[0] as number;
      this.grant(slot, pool, runId);
      return Promise.resolve(slot);
    }
    return new Promise((resolve, reject) => this.waiting.push({ wanted, runId, pool, seq: this.seq++, resolve, reject }));
  }

  private release(slot: number): void {
    const pool = this.slotPool[slot];
    if (pool !== undefined) {
      this.count(this.runningByPool, pool, -1);
      this.count(this.runningByRun, this.slotJob[slot] as string, -1);
      this.slotPool[slot] = undefined;
      this.slotJob[slot] = undefined;
    }
    const eligible = this.waiting.filter((w) => w.wanted === undefined || w.wanted === slot);
    if (eligible.length === 0) {
      this.free.push(slot);
      return;
    }
    const w = this.next(eligible);
    this.waiting.splice(this.waiting.indexOf(w), 1);
    this.grant(slot, w.pool, w.runId);
    w.resolve(slot);
  }

  private count(m: Map<string, number>, key: string, by: number): void {
    const n = (m.get(key) ?? 0) + by;
    if (n === 0) m.delete(key);
    else m.set(key, n);
  }

  private grant(slot: number, pool: string, runId: string): void {
    this.slotPool[slot] = pool;
    this.slotJob[slot] = runId;
    this.count(this.runningByPool, pool, 1);
    this.count(this.runningByRun, runId, 1);
  }

  private poolConf(name: string): PoolConf {
    return this.pooling.pools[name] ?? UNLISTED_POOL;
  }

  /**
   * The waiter a freed slot goes to. FIFO: the first submitted. FAIR: Spark's
   * FairSchedulingAlgorithm over the pools that have waiters (pools below their minShare first, by
   * running / minShare; then by running / weight; then by name), and inside the chosen pool its
   * own mode: FIFO by submission, or FAIR between its query runs by running tasks.
   */
  private next(eligible: Waiter[]): Waiter {
    const first = (ws: Waiter[]): Waiter => ws.reduce((a, b) => (b.seq < a.seq ? b : a));
    if (this.pooling.mode === 'FIFO') return first(eligible);
    const byPool = new Map<string, Waiter[]>();
    for (const w of eligible) {
      const ws = byPool.get(w.pool);
      if (ws === undefined) byPool.set(w.pool, [w]);
      else ws.push(w);
    }
    const pools = [...byPool.keys()].sort((a, b) => this.fairOrder(a, b));
    const ws = byPool.get(pools[0]!)!;
    if (this.poolConf(pools[0]!).schedulingMode === 'FIFO') return first(ws);
    const running = (w: Waiter): number => this.runningByRun.get(w.runId) ?? 0;
    return ws.reduce((a, b) => (running(b) < running(a) || (running(b) === running(a) && b.seq < a.seq) ? b : a));
  }

  private fairOrder(a: string, b: string): number {
    const pa = this.poolConf(a);
    const pb = this.poolConf(b);
    const ra = this.runningByPool.get(a) ?? 0;
    const rb = this.runningByPool.get(b) ?? 0;
    const needyA = ra < pa.minShare;
    const needyB = rb < pb.minShare;
    if (needyA !== needyB) return needyA ? -1 : 1;
    const [x, y] = needyA ? [ra / Math.max(pa.minShare, 1), rb / Math.max(pb.minShare, 1)] : [ra / pa.weight, rb / pb.weight];
    if (x !== y) return x < y ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** Each pool's settings and its running and waiting tasks (pools with neither are listed when configured). */
  poolMetrics(): Record<string, PoolMetrics> {
    const names = new Set<string>([DEFAULT_POOL, ...Object.keys(this.pooling.pools), ...this.runningByPool.keys(), ...this.waiting.map((w) => w.pool)]);
    const out: Record<string, PoolMetrics> = {};
    for (const name of [...names].sort()) {
      out[name] = {
        ...this.poolConf(name),
        runningTasks: this.runningByPool.get(name) ?? 0,
        waitingTasks: this.waiting.filter((w) => w.pool === name).length,
      };
    }
    return out;
  }

  get schedulingMode(): 'FIFO' | 'FAIR' {
    return this.pooling.mode;
  }

  private async runOne(task: TaskRequest, wanted: number | undefined, pool: string): Promise<TaskSuccess> {
    let lastError: unknown;
    for (let attempt = 0; attempt < this.maxFailures; attempt++) {
      if (this.closed) throw new SluiceError('SESSION_CLOSED', 'the session was closed while tasks were running');
      const aborted = this.aborted.get(task.runId);
      if (aborted) throw aborted;
      const slot = await this.acquire(wanted, task.runId, pool);
      try {
        const result = await this.runOn(slot, { ...task, attempt });
        if (!result.ok) throw SluiceError.fromJSON(result.error);
        return result;
      } catch (e) {
        if (e instanceof SluiceError || e instanceof RunAborted) throw e;
        // Out of heap, a task would run out again: the query fails, with the limit named.
        if ((e as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY') throw outOfMemory(task, this.heap?.oldMB);
        lastError = e;
      } finally {
        this.release(slot);
      }
    }
    // A fault of the environment (no file handles left, a full disk) is named as such, not as a task's.
    const path = (lastError as { path?: unknown } | undefined)?.path;
    const env = environmentError(lastError, typeof path === 'string' ? path : 'an executor worker', `run task ${task.partition} of batch ${task.batchId}`);
    if (env) throw env;
    throw new SluiceError(
      'TASK_FAILED',
      `task ${task.partition} of batch ${task.batchId} failed ${this.maxFailures} times (${CONF_KEYS.taskMaxFailures}); last error: ${
        (lastError as Error)?.message ?? String(lastError)
      }`,
      { option: CONF_KEYS.taskMaxFailures, cause: lastError },
    );
  }

  private runOn(slot: number, task: TaskRequest): Promise<TaskResult> {
    return new Promise<TaskResult>((resolve, reject) => {
      this.slotFailed[slot] = reject;
      this.slotRun[slot] = task.runId;
      (this.pools[slot] as Piscina).run(task).then(resolve, reject);
    }).finally(() => {
      this.slotFailed[slot] = undefined;
      this.slotRun[slot] = undefined;
    });
  }

  /**
   * Ends the tasks of run `runId` now: each worker running one is terminated (whatever it is
   * doing, a udf that never returns included) and its slot gets a fresh worker; tasks of the run
   * waiting for a slot, or submitted later, fail at once. They all reject with RunAborted, never
   * retried. Other runs' tasks keep their slots; state a terminated worker held is reopened by the
   * next task that needs it.
   */
  abortRun(runId: string): void {
    const reason = new RunAborted(runId);
    this.aborted.set(runId, reason);
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i] as Waiter;
      if (w.runId !== runId) continue;
      this.waiting.splice(i, 1);
      w.reject(reason);
    }
    this.slotRun.forEach((run, slot) => {
      if (run === runId && !this.closed) this.replaceWorker(slot, reason);
    });
  }

  /**
   * Runs a stage; results come in task order. `slotOf` pins a task to a slot (a state task runs
   * on the slot owning its shard). Waits for every task before reporting a failure.
   */
  async runTasks(tasks: TaskRequest[], slotOf?: (task: TaskRequest) => number, pool: string = DEFAULT_POOL): Promise<TaskSuccess[]> {
    const settled = await Promise.allSettled(tasks.map((t) => this.runOne(t, slotOf?.(t), pool)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return settled.map((s) => (s as PromiseFulfilledResult<TaskSuccess>).value);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
