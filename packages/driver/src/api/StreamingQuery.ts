/** The handle of a running query (Spark's StreamingQuery). */
import type { SluiceError } from '@sluice/state';
import type { QueryStatus } from '../execution/StreamExecution.js';
import type { MicroBatchExecution } from '../execution/MicroBatchExecution.js';
import type { StreamingQueryProgress } from '../events/progress.js';

/**
 * A running streaming query (Spark's StreamingQuery), as `writeStream...start()` resolves to it:
 * its identity, progress and status, and its lifecycle. An error while it runs ends this query
 * alone: `awaitTermination()` rejects with it and `exception` holds it.
 *
 * @example
 * ```ts
 * const query = await df.writeStream.format('memory').queryName('counts').outputMode('complete').start();
 * await query.processAllAvailable();
 * console.log(query.lastProgress?.numInputRows);
 * await query.stop();
 * ```
 */
export class StreamingQuery {
  /** @internal */
  constructor(private readonly execution: MicroBatchExecution) {}

  /** The query's id, stable across restarts from the same checkpoint. */
  get id(): string {
    return this.execution.id;
  }
  /** The id of this run, new on every start. */
  get runId(): string {
    return this.execution.runId;
  }
  /** The name given by `queryName`, or null. */
  get name(): string | null {
    return this.execution.name;
  }
  /** Whether the query is still running. */
  get isActive(): boolean {
    return this.execution.isActive;
  }
  /** The scheduler pool its tasks run in (sluice.scheduler.pool when it started, or option schedulerPool). */
  get schedulerPool(): string {
    return this.execution.schedulerPool;
  }
  /** State shards the query keeps open in the executors (0 for a stateless query). */
  get stateShards(): number {
    return this.execution.stateShards;
  }
  /** The slot each of its state shards runs on (index: shard). */
  get stateSlots(): number[] {
    return this.execution.stateSlots;
  }
  /** The progress of the last batch, or null before the first one. */
  get lastProgress(): StreamingQueryProgress | null {
    return this.execution.lastProgress;
  }
  /** The progress of the recent batches, oldest first (the last 100). */
  get recentProgress(): StreamingQueryProgress[] {
    return [...this.execution.progress.recent];
  }
  /** What the query is doing now. */
  get status(): QueryStatus {
    return { ...this.execution.status };
  }
  /** The error that ended the query, or null. */
  get exception(): SluiceError | null {
    return this.execution.exception;
  }

  /**
   * Stops at a clean point (after the batch in flight) and releases the checkpoint lock and the
   * query's state, so that a restart in the same process works at once. A batch that outlasts
   * `sluice.sql.streaming.stopTimeout` is ended instead, and replayed at the next start.
   */
  stop(): Promise<void> {
    return this.execution.stop();
  }

  /**
   * Resolves when the query ends (true), or false after `timeoutMs`; rejects with the error that
   * ended it.
   */
  async awaitTermination(timeoutMs?: number): Promise<boolean> {
    const done = this.execution.whenFinished().then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const ended =
      timeoutMs === undefined ? await done : await Promise.race([done, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (ended && this.execution.exception) throw this.execution.exception;
    return ended;
  }

  /** Resolves once all data available at the call (and any due no-data batch) is committed. */
  processAllAvailable(): Promise<void> {
    return this.execution.processAllAvailable();
  }

  /** Resolves when the query has ended, however it ended (it never rejects). */
  whenFinished(): Promise<void> {
    return this.execution.whenFinished();
  }
}
