/**
 * Runs tasks on the executors: one piscina pool per slot (exactly one worker thread each), so the
 * driver decides which slot runs a task. Every query of the session queues its tasks on one
 * p-queue that runs `slots` of them at once: a state task waits for the slot owning its shard,
 * any other task takes the first free slot, and when a slot frees, the task it runs is chosen by
 * sluice.scheduler.mode over the waiting tasks' scheduler pools (SlotArbiter).
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
import type { ResultOf, TaskRequest, TaskResult, TaskSuccess } from '@sluice/executor';
import { CONF_KEYS, environmentError, LOCAL_PROPERTY_KEYS, SluiceError, type WorkerStateUsage } from '@sluice/state';
import type { PoolConf } from '../conf/RuntimeConf.js';

export type { PoolConf };

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

/** The slot a task was given when it left the queue, read by the task's function as it starts. */
interface Ticket {
  slot: number;
}

/** A task waiting for a slot. */
interface QueuedTask {
  run: RunFunction;
  id: string | undefined;
  pool: string;
  runId: string;
  /** The slot it must run on (a state task: the slot owning its shard), or any. */
  wanted: number | undefined;
  ticket: Ticket;
}

type SlotTaskOptions = QueueAddOptions & { pool?: string; runId?: string; wanted?: number | undefined; ticket?: Ticket };

/**
 * The slots, and which waiting task a free slot runs. A task can start when its slot (or, for a
 * task that may run anywhere, any slot) is free. Among those, FIFO takes the first submitted;
 * FAIR applies Spark's FairSchedulingAlgorithm over the pools that have such tasks (pools below
 * their minShare first, by running / minShare; then by running / weight), and inside the chosen
 * pool its own mode: FIFO by submission, or FAIR between its query runs by running tasks.
 *
 * Pools whose shares tie go by their longest-waiting task. Spark breaks the tie by pool name,
 * which with a few slots and many busy pools starves the pools whose names sort last: with 2
 * slots, most pools run nothing at any moment, so most comparisons tie.
 */
class SlotArbiter {
  readonly runningByPool = new Map<string, number>();
  readonly runningByRun = new Map<string, number>();
  /** Free slots, the most recently freed last (a task that may run anywhere takes it). */
  readonly free: number[];

  constructor(
    slots: number,
    readonly settings: PoolSettings,
  ) {
    this.free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  conf(name: string): PoolConf {
    return this.settings.pools[name] ?? UNLISTED_POOL;
  }

  canStart(t: QueuedTask): boolean {
    return this.free.length > 0 && (t.wanted === undefined || this.free.includes(t.wanted));
  }

  /** Takes the slot for `t` and counts it running. */
  start(t: QueuedTask): void {
    const i = t.wanted === undefined ? this.free.length - 1 : this.free.indexOf(t.wanted);
    t.ticket.slot = this.free.splice(i, 1)[0] as number;
    count(this.runningByPool, t.pool, 1);
    count(this.runningByRun, t.runId, 1);
  }

  finish(slot: number, pool: string, runId: string): void {
    this.free.push(slot);
    count(this.runningByPool, pool, -1);
    count(this.runningByRun, runId, -1);
  }

  /** The index in `waiting` (in submission order) of the task to start next, or -1 if none can. */
  pick(waiting: readonly QueuedTask[]): number {
    let pool: string | undefined;
    let first = -1;
    for (let i = 0; i < waiting.length; i++) {
      const t = waiting[i] as QueuedTask;
      if (!this.canStart(t)) continue;
      if (this.settings.mode === 'FIFO') return i;
      if (pool === undefined || (t.pool !== pool && this.fairOrder(t.pool, pool) < 0)) [pool, first] = [t.pool, i];
    }
    if (pool === undefined || this.conf(pool).schedulingMode === 'FIFO') return first;
    let best = first;
    let bestRunning = Number.POSITIVE_INFINITY;
    waiting.forEach((t, i) => {
      if (t.pool !== pool || !this.canStart(t)) return;
      const running = this.runningByRun.get(t.runId) ?? 0;
      if (running < bestRunning) [best, bestRunning] = [i, running];
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
    return x < y ? -1 : x > y ? 1 : 0;
  }
}

function count(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n === 0) m.delete(key);
  else m.set(key, n);
}

/**
 * The waiting tasks, as p-queue's queueClass. The scheduler's one p-queue runs up to `slots`
 * tasks at once; each time it may start one, it asks `size` whether any waiting task can start
 * (its slot is free) and `dequeue` for the one the arbiter picks, which takes its slot then.
 */
function slotQueueClass(arbiter: SlotArbiter) {
  return class SlotQueue implements Queue<RunFunction, SlotTaskOptions> {
    readonly tasks: QueuedTask[] = [];

    /** The waiting tasks that could start now: p-queue starts none while this is 0. */
    get size(): number {
      let n = 0;
      for (const t of this.tasks) if (arbiter.canStart(t)) n++;
      return n;
    }

    enqueue(run: RunFunction, options?: Partial<SlotTaskOptions>): void {
      this.tasks.push({
        run,
        id: options?.id,
        pool: options?.pool ?? DEFAULT_POOL,
        runId: options?.runId ?? '',
        wanted: options?.wanted,
        ticket: options?.ticket ?? { slot: -1 },
      });
    }

    dequeue(): RunFunction | undefined {
      const i = arbiter.pick(this.tasks);
      if (i < 0) return undefined;
      const t = this.tasks.splice(i, 1)[0] as QueuedTask;
      arbiter.start(t);
      return t.run;
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
  /** Every query's tasks, started `slots` at a time, each when its slot frees. */
  private readonly queue: PQueue<SlotQueue, SlotTaskOptions>;
  private waitingTasks!: SlotQueue;
  private readonly arbiter: SlotArbiter;
  /** Rejects the task running on a slot, set while one runs there. */
  private readonly slotFailed: Array<((e: Error) => void) | undefined> = [];
  /** The run whose task runs on a slot. */
  private readonly slotRun: Array<string | undefined> = [];
  /** What each slot's worker reported of its state shards after its last state task. */
  private readonly stateStores: Array<WorkerStateUsage | null>;
  /** One abort signal per query run: aborting it drops the run's waiting tasks from the queue. */
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
    this.arbiter = new SlotArbiter(slots, pooling);
    this.pools = Array.from({ length: slots }, (_, slot) => this.startPool(slot));
    this.stateStores = Array.from({ length: slots }, () => null);
    const SlotQueue = slotQueueClass(this.arbiter);
    // p-queue builds its queue itself; keep a handle on it for the metrics.
    const scheduler = this;
    this.queue = new PQueue<SlotQueue, SlotTaskOptions>({
      concurrency: slots,
      queueClass: class extends SlotQueue {
        constructor() {
          super();
          scheduler.waitingTasks = this;
        }
      },
    });
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
    for (const t of this.waitingTasks.tasks) count(waiting, t.pool, 1);
    const running = this.arbiter.runningByPool;
    const names = new Set<string>([DEFAULT_POOL, ...Object.keys(this.arbiter.settings.pools), ...running.keys(), ...waiting.keys()]);
    const out: Record<string, PoolMetrics> = {};
    for (const name of [...names].sort()) {
      out[name] = { ...this.arbiter.conf(name), runningTasks: running.get(name) ?? 0, waitingTasks: waiting.get(name) ?? 0 };
    }
    return out;
  }

  /** Slots running a task now. */
  get busySlots(): number {
    return this.slots - this.arbiter.free.length;
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
      try {
        const ticket: Ticket = { slot: -1 };
        const run = (): Promise<TaskResult> => this.runOn(ticket.slot, { ...task, attempt }, pool);
        const result = (await this.queue.add(run, { pool, runId: task.runId, wanted, ticket, signal })) as TaskResult;
        if (!result.ok) throw SluiceError.fromJSON(result.error);
        if (result.kind !== task.kind) throw new Error(`a ${task.kind} task returned a ${result.kind} result`);
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

  /** Runs a task on the worker of the slot the queue has just given it, and frees the slot after. */
  private runOn(slot: number, task: TaskRequest, pool: string): Promise<TaskResult> {
    let failed: ((e: Error) => void) | undefined;
    return new Promise<TaskResult>((resolve, reject) => {
      failed = reject;
      this.slotFailed[slot] = reject;
      this.slotRun[slot] = task.runId;
      (this.pools[slot] as Piscina).run(task).then((r: TaskResult) => {
        if (r.ok && (r.kind === 'state' || r.kind === 'release') && r.stateStores !== undefined) this.stateStores[slot] = r.stateStores;
        resolve(r);
      }, reject);
    }).finally(() => {
      if (this.slotFailed[slot] === failed) {
        this.slotFailed[slot] = undefined;
        this.slotRun[slot] = undefined;
      }
      this.arbiter.finish(slot, pool, task.runId);
      // An aborted task left p-queue before its slot was free: have p-queue look again.
      this.queue.concurrency = this.slots;
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
  async runTasks<T extends TaskRequest>(tasks: readonly T[], slotOf?: (task: T) => number, pool: string = DEFAULT_POOL): Promise<Array<ResultOf<T>>> {
    const settled = await Promise.allSettled(tasks.map((t) => this.runOne(t, slotOf?.(t), pool)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // runOne checked that each result is of its task's kind.
    return settled.map((s) => (s as PromiseFulfilledResult<TaskSuccess>).value as ResultOf<T>);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
