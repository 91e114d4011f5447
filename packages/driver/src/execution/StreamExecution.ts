/**
 * A streaming query's run, apart from how its batches are made (Spark's StreamExecution): the
 * checkpoint lock, the started and terminated events, waiting for idle triggers, a stop at a clean
 * point, and the abort that ends a stop that timed out. MicroBatchExecution runs the batches.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { CONF_KEYS, SluiceError } from '@sluice/state';
import type { CheckpointLock } from '../checkpoint/CheckpointLock.js';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import type { ListenerBus } from '../events/ListenerBus.js';
import type { StreamingQueryProgress } from '../events/progress.js';
import { RunAborted, type TaskScheduler } from '../scheduler/TaskScheduler.js';
import { clock, type ManualClock } from './clock.js';
import type { ProgressReporter } from './ProgressReporter.js';
import { withTimeout } from './timeouts.js';

/** What a query is doing now (Spark's StreamingQueryStatus), as `query.status` reports it. */
export interface QueryStatus {
  /** In words, as Spark's: 'Initializing sources', 'Getting offsets from sources', 'Waiting for data to arrive', 'Stopped'... */
  message: string;
  /** Whether the last trigger found new data. */
  isDataAvailable: boolean;
  /** Whether a trigger is running now. */
  isTriggerActive: boolean;
}

export interface ExecutionContext {
  conf: RuntimeConf;
  scheduler: TaskScheduler;
  bus: ListenerBus;
  /** State shards of the session's running queries other than query `id`, which share the workers' budgets. */
  otherStateShards: (id: string) => number;
  /** The slot for the state shard 0 of query `id` (StateShards.firstStateSlot over the other queries' shards). */
  firstStateSlot: (id: string) => number;
  /** The session's Prometheus metrics, fed with every progress event. */
  metrics?: { observe(progress: StreamingQueryProgress): void };
}

interface Waiter {
  /** Resolve at the first idle trigger numbered at least this. */
  fromTrigger: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

export abstract class StreamExecution {
  readonly runId = randomUUID();
  /** Stable across restarts: from the checkpoint's metadata, which the subclass reads. */
  abstract readonly id: string;
  abstract readonly progress: ProgressReporter;
  readonly name: string | null;
  exception: SluiceError | null = null;
  status: QueryStatus = { message: 'Initializing sources', isDataAvailable: false, isTriggerActive: false };

  protected stopRequested = false;
  /** Triggers run so far; an idle trigger resolves the processAllAvailable calls made before it. */
  protected triggerSeq = 0;
  /** Work the abort must let settle before the lock goes (a repartition stops at its next chunk). */
  protected settleBeforeRelease = false;
  private active = true;
  private lastIdleEventMs = Number.NEGATIVE_INFINITY;
  private waiters: Waiter[] = [];
  private wake: (() => void) | undefined;
  private finished: Promise<void> | undefined;
  /** Set once a stop that timed out ended this run's batch work; nothing may write after it. */
  private abortReason: RunAborted | undefined;
  private rejectAborted: (e: Error) => void = () => {};
  private readonly aborted = new Promise<never>((_, reject) => (this.rejectAborted = reject));
  private working = true;

  /** Holds the checkpoint's `lock` (taken by whoever opened the checkpoint) until the run ends. */
  constructor(
    protected readonly ctx: ExecutionContext,
    queryName: string | null,
    protected readonly checkpointDir: string,
    private readonly lock: CheckpointLock,
    private readonly temporaryCheckpoint: boolean,
  ) {
    this.name = queryName;
  }

  /** The batches, until a stop is requested or one fails. */
  protected abstract runBatches(): Promise<void>;
  /** Releases what the run holds outside the checkpoint (state shards in the workers, sources). */
  protected abstract release(): Promise<void>;
  /** The error the query ends with, from the one a batch threw. */
  protected explainFailure(e: unknown): unknown {
    return e;
  }

  /** Posts the started event and starts the loop (once). */
  start(): void {
    if (this.finished) return;
    this.ctx.bus.post({
      kind: 'onQueryStarted',
      event: { id: this.id, runId: this.runId, name: this.name, timestamp: new Date().toISOString() },
    });
    this.finished = this.runLoop();
  }

  get isActive(): boolean {
    return this.active;
  }

  get lastProgress(): StreamingQueryProgress | null {
    return this.progress.last;
  }

  private async runLoop(): Promise<void> {
    await Promise.resolve(); // let start() return the query before the first trigger runs
    let error: unknown = null;
    const work = this.runBatches();
    work.catch(() => undefined); // after an abort the work may still settle; it no longer counts
    this.aborted.catch(() => undefined);
    try {
      await Promise.race([work, this.aborted]);
    } catch (e) {
      // An abort is how a stop that timed out ends: the batch stays uncommitted, for a replay.
      error = e instanceof RunAborted ? null : this.explainFailure(e);
      if (this.settleBeforeRelease) await work.catch(() => undefined);
    }
    this.working = false;
    try {
      await this.release();
    } catch (e) {
      error ??= e;
    } finally {
      this.terminate(error);
    }
  }

  /** Throws once the run was aborted: an abandoned batch must never write to the checkpoint. */
  protected assertRunning(): void {
    if (this.abortReason) throw this.abortReason;
  }

  /**
   * Ends the batch in flight now: its tasks' workers are terminated (a udf that never returns
   * included), its driver-side steps (a foreachBatch that never settles) are left behind, and
   * nothing of it is committed.
   */
  private abort(): void {
    if (this.abortReason || !this.working) return;
    this.abortReason = new RunAborted(this.runId);
    this.ctx.scheduler.abortRun(this.runId);
    this.rejectAborted(this.abortReason);
  }

  /** Waits between triggers (by `manual` when the query runs on a manual clock); a stop wakes it. */
  protected sleep(ms: number, manual?: ManualClock): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.wake = undefined;
        resolve();
      };
      let cancel: () => void;
      if (manual) cancel = manual.sleep(this, ms, done);
      else {
        const t = setTimeout(done, ms);
        cancel = () => clearTimeout(t);
      }
      this.wake = () => {
        cancel();
        done();
      };
    });
  }

  /** A trigger found nothing to do: processAllAvailable calls made before it resolve. */
  protected onIdle(seq: number): void {
    const due = this.waiters.filter((w) => w.fromTrigger <= seq);
    this.waiters = this.waiters.filter((w) => w.fromTrigger > seq);
    for (const w of due) w.resolve();
    const interval = this.ctx.conf.get(CONF_KEYS.noDataProgressEventInterval);
    const t = clock.now();
    if (t - this.lastIdleEventMs >= interval) {
      this.lastIdleEventMs = t;
      this.ctx.bus.post({ kind: 'onQueryIdle', event: { id: this.id, runId: this.runId, timestamp: new Date(t).toISOString() } });
    }
  }

  private terminate(error: unknown): void {
    this.active = false;
    if (error !== null) {
      this.exception =
        error instanceof SluiceError
          ? error
          : new SluiceError('STREAMING_QUERY_FAILED', `query ${this.name ?? this.id} failed: ${(error as Error)?.message ?? String(error)}`, {
              cause: error,
            });
    }
    this.status = { message: 'Stopped', isDataAvailable: false, isTriggerActive: false };
    this.lock.release();
    if (this.temporaryCheckpoint) rmSync(this.checkpointDir, { recursive: true, force: true });
    for (const w of this.waiters) {
      if (this.exception) w.reject(this.exception);
      else w.resolve();
    }
    this.waiters = [];
    this.ctx.bus.post({
      kind: 'onQueryTerminated',
      event: {
        id: this.id,
        runId: this.runId,
        exception: this.exception?.message ?? null,
        errorClassOnException: this.exception?.code ?? null,
        error: this.exception,
      },
    });
  }

  // ---- public control ----------------------------------------------------------------------

  /** Resolves when the loop has ended (never rejects). */
  whenFinished(): Promise<void> {
    return this.finished as Promise<void>;
  }

  /**
   * Stops at a clean point: after the batch in flight, or, when that takes longer than
   * `sluice.sql.streaming.stopTimeout`, by ending that batch uncommitted (a restart replays it).
   */
  async stop(): Promise<void> {
    this.stopRequested = true;
    this.wake?.();
    const finished = this.whenFinished();
    const timeoutMs = this.ctx.conf.get(CONF_KEYS.stopTimeout);
    if (
      timeoutMs > 0 &&
      (await withTimeout(
        finished.then(() => true),
        timeoutMs,
      )) === undefined
    )
      this.abort();
    await finished;
  }

  processAllAvailable(): Promise<void> {
    if (!this.active) return this.exception ? Promise.reject(this.exception) : Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ fromTrigger: this.triggerSeq + 1, resolve, reject });
    });
  }
}
