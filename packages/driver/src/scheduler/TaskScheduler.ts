/**
 * Runs tasks on the executors: one piscina pool per slot (exactly one worker thread each), so the
 * driver decides which slot runs a task. Each slot has a p-queue of concurrency 1; a state task
 * queues on the slot owning its shard, any other task on the least-loaded slot. Every query of
 * the session shares the slots: when a slot frees, its queue's next task is chosen by
 * sluice.scheduler.mode over the tasks' scheduler pools (PoolArbiter).
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
import { setMaxListeners } from 'node:events';
import PQueue, { type Queue, type QueueAddOptions } from 'p-queue';
import { Piscina } from 'piscina';
import type { TaskRequest, TaskResult, TaskSuccess } from '@sluice/executor';
import { CONF_KEYS, environmentError, LOCAL_PROPERTY_KEYS, SluiceError, type WorkerStateUsage } from '@sluice/state';

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

/** What p-queue keeps for a queued task (its RunFunction, not exported). */
type RunFunction = () => Promise<unknown>;

/** A task waiting in a slot's queue. */
interface QueuedTask {
  run: RunFunction;
  id: string | undefined;
  pool: string;
  runId: string;
}

type SlotTaskOptions = QueueAddOptions & { pool?: string; runId?: string };

/**
 * Which waiting task a freed slot runs, and the running tasks per pool and per query run that
 * decide it. FIFO: the first submitted. FAIR: Spark's FairSchedulingAlgorithm over the pools that
 * have waiting tasks (pools below their minShare first, by running / minShare; then by running /
 * weight; then by name), and inside the chosen pool its own mode: FIFO by submission, or FAIR
 * between its query runs by running tasks.
 */
class PoolArbiter {
  readonly runningByPool = new Map<string, number>();
  readonly runningByRun = new Map<string, number>();

  constructor(readonly settings: PoolSettings) {}

  conf(name: string): PoolConf {
    return this.settings.pools[name] ?? UNLISTED_POOL;
  }

  started(pool: string, runId: string, by = 1): void {
    count(this.runningByPool, pool, by);
    count(this.runningByRun, runId, by);
  }

  /** The index in `waiting` (in submission order) of the task to run next. */
  pick(waiting: readonly QueuedTask[]): number {
    if (this.settings.mode === 'FIFO' || waiting.length === 1) return 0;
    let pool = (waiting[0] as QueuedTask).pool;
    for (const t of waiting) if (t.pool !== pool && this.fairOrder(t.pool, pool) < 0) pool = t.pool;
    const fairInside = this.conf(pool).schedulingMode === 'FAIR';
    let best = -1;
    let bestRunning = Number.POSITIVE_INFINITY;
    waiting.forEach((t, i) => {
      if (t.pool !== pool) return;
      const running = fairInside ? (this.runningByRun.get(t.runId) ?? 0) : 0;
      if (best < 0 || running < bestRunning) [best, bestRunning] = [i, running];
    });
    return best;
  }

  private fairOrder(a: string, b: string): number {
    const pa = this.conf(a);
    const pb = this.conf(b);
    const ra = this.runningByPool.get(a) ?? 0;
    const rb = this.runningByPool.get(b) ?? 0;
    const needyA = ra < pa.minShare;
    const needyB = rb < pb.minShare;
    if (needyA !== needyB) return needyA ? -1 : 1;
    const [x, y] = needyA ? [ra / Math.max(pa.minShare, 1), rb / Math.max(pb.minShare, 1)] : [ra / pa.weight, rb / pb.weight];
    if (x !== y) return x < y ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
}

function count(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n === 0) m.delete(key);
  else m.set(key, n);
}

/**
 * A slot's waiting tasks, as p-queue's queueClass: the slot's p-queue runs one task at a time and,
 * each time the slot frees, asks `dequeue` which waiting task comes next.
 */
function slotQueueClass(arbiter: PoolArbiter) {
  return class SlotQueue implements Queue<RunFunction, SlotTaskOptions> {
    readonly tasks: QueuedTask[] = [];

    get size(): number {
      return this.tasks.length;
    }

    enqueue(run: RunFunction, options?: Partial<SlotTaskOptions>): void {
      this.tasks.push({ run, id: options?.id, pool: options?.pool ?? DEFAULT_POOL, runId: options?.runId ?? '' });
    }

    dequeue(): RunFunction | undefined {
      if (this.tasks.length === 0) return undefined;
      return (this.tasks.splice(arbiter.pick(this.tasks), 1)[0] as QueuedTask).run;
    }

    filter(options: Readonly<Partial<SlotTaskOptions>>): RunFunction[] {
      return this.tasks.filter((t) => options.pool === undefined || t.pool === options.pool).map((t) => t.run);
    }

    setPriority(): void {
      throw new Error('scheduler tasks are ordered by their pools, not by priorities');
    }

    /** A waiting task whose run was aborted (p-queue calls it when the task's signal fires). */
    remove(id: string): void {
      const i = this.tasks.findIndex((t) => t.id === id);
      if (i >= 0) this.tasks.splice(i, 1);
    }
  };
}

type SlotQueue = InstanceType<ReturnType<typeof slotQueueClass>>;

export class TaskScheduler {
  private readonly pools: Piscina[];
  private readonly filename: string;
  /** Each slot's p-queue (concurrency 1): its waiting tasks, and the one running. */
  private readonly queues: Array<PQueue<SlotQueue, SlotTaskOptions>>;
  private readonly waitingTasks: SlotQueue[] = [];
  private readonly arbiter: PoolArbiter;
  /** Rejects the task running on a slot, set while one runs there. */
  private readonly slotFailed: Array<((e: Error) => void) | undefined> = [];
  /** The run whose task runs on a slot. */
  private readonly slotRun: Array<string | undefined> = [];
  /** What each slot's worker reported of its state shards after its last state task. */
  private readonly stateStores: Array<WorkerStateUsage | null>;
  /** One abort signal per query run: aborting it drops the run's waiting tasks from every queue. */
  private readonly runs = new Map<string, AbortController>();
  private closed = false;

  constructor(
    readonly slots: number,
    private readonly maxFailures: number,
    filename = workerEntry(),
    /** Each worker's V8 heap sizes in MB (workerHeap in Session.ts); undefined: V8's defaults. */
    private readonly heap?: { oldMB: number; youngMB: number },
    pooling: PoolSettings = { mode: 'FIFO', pools: {} },
  ) {
    this.filename = filename;
    this.arbiter = new PoolArbiter(pooling);
    this.pools = Array.from({ length: slots }, (_, slot) => this.startPool(slot));
    this.stateStores = Array.from({ length: slots }, () => null);
    const SlotQueue = slotQueueClass(this.arbiter);
    const waitingTasks = this.waitingTasks;
    this.queues = Array.from(
      { length: slots },
      () =>
        new PQueue<SlotQueue, SlotTaskOptions>({
          concurrency: 1,
          queueClass: class extends SlotQueue {
            constructor() {
              super();
              waitingTasks.push(this);
            }
          },
        }),
    );
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
    // A fresh worker holds no shards.
    this.stateStores[slot] = null;
    this.slotFailed[slot]?.(reason);
    void pool.destroy().catch(() => {});
  }

  /** The slot with the fewest tasks running and waiting (stateless tasks may run anywhere). */
  private leastLoaded(): number {
    let best = 0;
    let load = Number.POSITIVE_INFINITY;
    this.queues.forEach((q, slot) => {
      if (q.size + q.pending < load) [best, load] = [slot, q.size + q.pending];
    });
    return best;
  }

  private signalOf(runId: string): AbortSignal {
    let c = this.runs.get(runId);
    if (c === undefined) {
      c = new AbortController();
      // Every waiting task of the run listens to its signal.
      setMaxListeners(0, c.signal);
      this.runs.set(runId, c);
    }
    return c.signal;
  }

  /** Each pool's settings and its running and waiting tasks (pools with neither are listed when configured). */
  poolMetrics(): Record<string, PoolMetrics> {
    const waiting = new Map<string, number>();
    for (const q of this.waitingTasks) for (const t of q.tasks) count(waiting, t.pool, 1);
    const running = this.arbiter.runningByPool;
    const names = new Set<string>([DEFAULT_POOL, ...Object.keys(this.arbiter.settings.pools), ...running.keys(), ...waiting.keys()]);
    const out: Record<string, PoolMetrics> = {};
    for (const name of [...names].sort()) {
      out[name] = { ...this.arbiter.conf(name), runningTasks: running.get(name) ?? 0, waitingTasks: waiting.get(name) ?? 0 };
    }
    return out;
  }

  /** Each slot's state shards against its worker's budgets (null: no state task ran there yet). */
  stateStoreUsage(): Array<WorkerStateUsage | null> {
    return [...this.stateStores];
  }

  get schedulingMode(): 'FIFO' | 'FAIR' {
    return this.arbiter.settings.mode;
  }

  private async runOne(task: TaskRequest, wanted: number | undefined, pool: string): Promise<TaskSuccess> {
    const signal = this.signalOf(task.runId);
    let lastError: unknown;
    for (let attempt = 0; attempt < this.maxFailures; attempt++) {
      if (this.closed) throw new SluiceError('SESSION_CLOSED', 'the session was closed while tasks were running');
      signal.throwIfAborted();
      const slot = wanted ?? this.leastLoaded();
      try {
        const run = (): Promise<TaskResult> => this.runOn(slot, { ...task, attempt }, pool);
        const result = (await (this.queues[slot] as PQueue<SlotQueue, SlotTaskOptions>).add(run, { pool, runId: task.runId, signal })) as TaskResult;
        if (!result.ok) throw SluiceError.fromJSON(result.error);
        return result;
      } catch (e) {
        if (e instanceof SluiceError || e instanceof RunAborted) throw e;
        // Out of heap, a task would run out again: the query fails, with the limit named.
        if ((e as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY') throw outOfMemory(task, this.heap?.oldMB);
        lastError = e;
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

  /** Runs a task on its slot's worker, which its slot's queue has just given it. */
  private runOn(slot: number, task: TaskRequest, pool: string): Promise<TaskResult> {
    this.arbiter.started(pool, task.runId);
    let failed: ((e: Error) => void) | undefined;
    return new Promise<TaskResult>((resolve, reject) => {
      failed = reject;
      this.slotFailed[slot] = reject;
      this.slotRun[slot] = task.runId;
      (this.pools[slot] as Piscina).run(task).then((r: TaskResult) => {
        if (r.ok && r.stateStores !== undefined) this.stateStores[slot] = r.stateStores;
        resolve(r);
      }, reject);
    }).finally(() => {
      this.arbiter.started(pool, task.runId, -1);
      // An aborted task's queue may already have started the next task on this slot.
      if (this.slotFailed[slot] !== failed) return;
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
    const controller = this.runs.get(runId) ?? (this.signalOf(runId), this.runs.get(runId)!);
    this.slotRun.forEach((run, slot) => {
      if (run === runId && !this.closed) this.replaceWorker(slot, new RunAborted(runId));
    });
    controller.abort(new RunAborted(runId));
  }

  /**
   * Runs a stage; results come in task order. `slotOf` pins a task to a slot (a state task runs
   * on the slot owning its shard); other tasks go to the least-loaded slot. Waits for every task
   * before reporting a failure.
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
