/**
 * Runs tasks on the executors: one piscina pool per slot (exactly one worker thread each), so the
 * driver decides which slot runs a task. Every query of the session waits in one list: a state
 * task for the slot owning its shard, any other task for the first free slot. Each time a slot
 * frees (or a task arrives while one is free), SlotArbiter picks the task it runs by
 * sluice.scheduler.mode over the waiting tasks' scheduler pools, and the task goes to that slot's
 * p-queue (concurrency 1, with the run's abort signal).
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
import PQueue from 'p-queue';
import { Piscina } from 'piscina';
import type { ResultOf, TaskRequest, TaskResult, TaskSuccess } from '@sluice/executor';
import { CONF_KEYS, environmentError, faultWorkerData, LOCAL_PROPERTY_KEYS, SluiceError, type WorkerStateUsage } from '@sluice/state';
import type { PoolConf } from '../conf/RuntimeConf.js';
import { count, DEFAULT_POOL, SlotArbiter, type Candidate, type PoolSettings } from './SlotArbiter.js';
import { DriverTurns } from './DriverTurns.js';

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

export { DEFAULT_POOL, type PoolSettings } from './SlotArbiter.js';
/** The local property naming the scheduler pool of the queries started afterwards (Spark's spark.scheduler.pool). */
export const POOL_PROPERTY = LOCAL_PROPERTY_KEYS.schedulerPool;

/** Running and waiting tasks of a pool, for session.metrics(). */
export interface PoolMetrics {
  /** FIFO or FAIR among the pool's own jobs. */
  schedulingMode: 'FIFO' | 'FAIR';
  /** Its share of the slots against other pools' in FAIR mode. */
  weight: number;
  /** Slots it gets before weights apply, in FAIR mode. */
  minShare: number;
  /** Its tasks running now. */
  runningTasks: number;
  /** Its tasks waiting for a slot. */
  waitingTasks: number;
}

/** A task waiting for a slot: started (given its slot) by the arbiter's pick, or dropped when its run is aborted. */
interface Waiting extends Candidate {
  start(slot: number): void;
}

export class TaskScheduler {
  /** Each slot's pool, started with the first task the slot runs: a one-task query starts one worker. */
  private readonly pools: Array<Piscina | undefined>;
  private readonly filename: string;
  /** Each slot runs the one task the arbiter gave it. */
  private readonly slotQueues: PQueue[];
  /** Every query's tasks waiting for a slot, in submission order. */
  private readonly waiting: Waiting[] = [];
  private readonly arbiter: SlotArbiter;
  /** The queries' driver-side steps, ordered by the same pools (DriverTurns.ts). */
  private readonly turns: DriverTurns;
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
    this.turns = new DriverTurns(this.arbiter);
    this.pools = Array.from({ length: slots }, () => undefined);
    this.slotQueues = Array.from({ length: slots }, () => new PQueue({ concurrency: 1 }));
    this.stateStores = Array.from({ length: slots }, () => null);
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
      // A worker fault point counts its hits across the workers (SLUICE_FAULT, crash tests).
      workerData: faultWorkerData(),
      ...(this.heap !== undefined && {
        resourceLimits: { maxOldGenerationSizeMb: this.heap.oldMB, maxYoungGenerationSizeMb: this.heap.youngMB },
      }),
    });
    pool.on('error', (e: Error) => {
      if (this.pools[slot] === pool) this.replaceWorker(slot, e);
    });
    return pool;
  }

  /** The pool of `slot`, started now if it has none. */
  private poolOf(slot: number): Piscina {
    let pool = this.pools[slot];
    if (pool === undefined) {
      pool = this.startPool(slot);
      this.pools[slot] = pool;
    }
    return pool;
  }

  /** Gives `slot` a fresh pool (unless the scheduler is closed); the task running there fails with `reason`. */
  private replaceWorker(slot: number, reason: Error): void {
    const pool = this.pools[slot];
    this.pools[slot] = this.closed ? pool : this.startPool(slot);
    // A fresh worker holds no shards.
    this.stateStores[slot] = null;
    this.slotFailed[slot]?.(reason);
    void pool?.destroy().catch(() => {});
  }

  private signalOf(runId: string): AbortSignal {
    return this.controllerOf(runId).signal;
  }

  /** The abort controller of run `runId`, made at its first use. */
  private controllerOf(runId: string): AbortController {
    let c = this.runs.get(runId);
    if (c === undefined) {
      c = new AbortController();
      // Every waiting task of the run listens to its signal.
      setMaxListeners(0, c.signal);
      this.runs.set(runId, c);
    }
    return c;
  }

  /** Each pool's settings and its running and waiting tasks (pools with neither are listed when configured). */
  poolMetrics(): Record<string, PoolMetrics> {
    const waiting = new Map<string, number>();
    for (const t of this.waiting) count(waiting, t.pool, 1);
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
        const slot = await this.slotFor({ pool, runId: task.runId, wanted }, signal);
        const result = await this.runOn(slot, { ...task, attempt }, pool, signal);
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

  /** Waits until the arbiter gives `task` a slot (or its run is aborted); resolves with the slot, already counted running. */
  private slotFor(task: Candidate, signal: AbortSignal): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason as Error);
      };
      const entry: Waiting = {
        ...task,
        start: (slot) => {
          signal.removeEventListener('abort', onAbort);
          resolve(slot);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
      this.dispatch();
    });
  }

  /** Gives free slots to the waiting tasks the arbiter picks, until none can start. */
  private dispatch(): void {
    for (let i = this.arbiter.pick(this.waiting); i >= 0; i = this.arbiter.pick(this.waiting)) {
      const t = this.waiting.splice(i, 1)[0] as Waiting;
      t.start(this.arbiter.start(t));
    }
  }

  /** Runs a task on the worker of `slot` (the arbiter gave it), and frees the slot after. */
  private runOn(slot: number, task: TaskRequest, pool: string, signal: AbortSignal): Promise<TaskResult> {
    let failed: ((e: Error) => void) | undefined;
    const run = (): Promise<TaskResult> =>
      new Promise<TaskResult>((resolve, reject) => {
        failed = reject;
        this.slotFailed[slot] = reject;
        this.slotRun[slot] = task.runId;
        this.poolOf(slot)
          .run(task)
          .then((r: TaskResult) => {
            if (r.ok && (r.kind === 'state' || r.kind === 'release') && r.stateStores !== undefined) this.stateStores[slot] = r.stateStores;
            resolve(r);
          }, reject);
      });
    return (this.slotQueues[slot] as PQueue).add(run, { signal }).finally(() => {
      if (this.slotFailed[slot] === failed) {
        this.slotFailed[slot] = undefined;
        this.slotRun[slot] = undefined;
      }
      this.arbiter.finish(slot, { pool, runId: task.runId, wanted: undefined });
      this.dispatch();
    }) as Promise<TaskResult>;
  }

  /**
   * Ends the tasks of run `runId` now: each worker running one is terminated (whatever it is
   * doing, a udf that never returns included) and its slot gets a fresh worker; tasks of the run
   * waiting for a slot, or submitted later, fail at once. They all reject with RunAborted, never
   * retried. Other runs' tasks keep their slots; state a terminated worker held is reopened by the
   * next task that needs it.
   */
  abortRun(runId: string): void {
    const controller = this.controllerOf(runId);
    this.slotRun.forEach((run, slot) => {
      if (run === runId && !this.closed) this.replaceWorker(slot, new RunAborted(runId));
    });
    controller.abort(new RunAborted(runId));
  }

  /** Resolves when a driver-side step of run `runId` (in `pool`) may run (DriverTurns.ts). */
  driverTurn(pool: string, runId: string): Promise<void> {
    return this.turns.turn(pool, runId);
  }

  /**
   * Runs a stage; results come in task order. `slotOf` pins a task to a slot (a state task runs
   * on the slot owning its shard); other tasks take the first slot that frees, as the arbiter
   * picks them. Waits for every task
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
    await Promise.all(this.pools.map((p) => p?.destroy()));
  }
}
