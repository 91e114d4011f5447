/**
 * The checkpoint steps of one batch, data or control alike, in the protocol's order. This is the
 * one place the protocol is written; the query (MicroBatchExecution) and `sluice checkpoint
 * repartition` both run their batches through it, with the driver's clock.
 *
 * 1. `offsets/N`, the write-ahead entry: planned ends per source, batch timestamp and watermark,
 *    the pinned conf (a replayed or resumed batch has it already and keeps it as it is).
 * 2. The batch's work: its tasks, inside which each state shard commits with marker N, or a
 *    control batch's operation on the checkpoint.
 * 3. The sink commit, idempotent per batch id (batch N written twice leaves one copy). A control
 *    batch writes no rows; a sink that logs every batch id logs it (without a sink, as in the CLI,
 *    the query's next start logs it: StreamSink.prepare).
 * 4. `commits/N`: the next batch's watermark and the batch each state shard last committed.
 * 5. Log entries below `minBatchesToRetain` purged, off the batch's path: the next batch (or a
 *    stop) waits for it first, so a purge's failure still fails the query, one batch later.
 *
 * On restart an `offsets/N` without `commits/N` is run again with exactly the same entry. Fault
 * points `after-offsets-write`, `after-sink-commit` and `before-commit-log` sit between the steps.
 */
import { fault } from '@sluice/state';
import type { BatchOutput, StreamSink } from '../sinks/Sink.js';
import { clock } from '../execution/clock.js';
import type { CheckpointPaths } from './CheckpointPaths.js';
import { CommitLog, type CommitMetadata } from './CommitLog.js';
import { OffsetLog, type OffsetSeq } from './OffsetLog.js';
import { readTail, type CheckpointTail, type LogTail } from './recovery.js';
import type { StateLayoutRecord } from './StateLayoutFile.js';

/** What a batch's work leaves for the steps after it. */
export interface BatchWork {
  /** A data batch's output, for the sink. */
  output?: BatchOutput;
  commit: CommitMetadata;
  /** The state layouts in force after the batch, by operator id (a control batch that moved an operator's state). */
  layouts?: readonly StateLayoutRecord[];
  /** Runs after `commits/N` (a source letting go of committed input). */
  afterCommit?(): Promise<void>;
}

/** How long the steps took, as progress reports them. */
export interface BatchTimings {
  walCommit: number;
  sinkCommit: number;
  commitOffsets: number;
}

export interface TransactionOptions {
  /** sluice.sql.streaming.minBatchesToRetain. */
  retain: number;
  sink?: StreamSink;
  /** Called before each write; throws when the batch must not write any more (its run was aborted). */
  live?: () => void;
}

export class BatchTransaction {
  readonly offsets: OffsetLog;
  readonly commits: CommitLog;
  /** The checkpoint's tail, kept in step with what each batch writes. */
  tail: CheckpointTail;
  /** The write under way, if any (the entries are written off the driver's thread). */
  private writing: Promise<unknown> = Promise.resolve();
  /** The last batch's purge, awaited before the next batch writes. */
  private purging: Promise<void> = Promise.resolve();

  /** `tail`: the checkpoint's, as a start read it (readTail) with the layouts it found. */
  constructor(
    readonly paths: CheckpointPaths,
    private readonly options: TransactionOptions,
    tail: CheckpointTail,
  ) {
    this.offsets = new OffsetLog(paths.offsets);
    this.commits = new CommitLog(paths.commits);
    this.tail = tail;
  }

  /** The tail of the checkpoint's logs on disk, checked (CHECKPOINT_CORRUPT). */
  static readTail(paths: CheckpointPaths): LogTail {
    return readTail(new OffsetLog(paths.offsets), new CommitLog(paths.commits));
  }

  /** Runs batch `entry` (written first unless it is on disk already) through the steps above. */
  async run(entry: OffsetSeq, work: () => Promise<BatchWork>): Promise<BatchTimings> {
    const { batchId } = entry;
    const live = this.options.live ?? (() => {});
    const timed = (t0: number): number => clock.now() - t0;
    await this.purging;
    let t = clock.now();
    if (!this.offsets.has(batchId)) {
      live();
      await this.write(this.offsets.append(batchId, entry));
      fault('after-offsets-write');
    }
    const walCommit = timed(t);
    const done = await work();
    live();
    t = clock.now();
    const sink = this.options.sink;
    if (done.output) await sink?.addBatch(done.output);
    else sink?.commitControlBatch?.(batchId);
    fault('after-sink-commit');
    const sinkCommit = timed(t);
    fault('before-commit-log');
    live();
    t = clock.now();
    await this.write(this.commits.append(batchId, done.commit));
    const before = this.tail;
    this.tail = {
      last: entry,
      previous: before.last?.batchId === batchId ? before.previous : before.last,
      committed: true,
      commit: done.commit,
      layouts: done.layouts ?? before.layouts,
    };
    await done.afterCommit?.();
    this.purging = this.write(this.purge(batchId));
    this.purging.catch(() => {}); // surfaces when the next batch or settled() awaits it
    return { walCommit, sinkCommit, commitOffsets: timed(t) };
  }

  /**
   * Resolves once no write of this transaction is under way. A run that was aborted mid-write
   * waits for it before it lets the checkpoint's lock go, so that the next run never races it.
   */
  settled(): Promise<void> {
    return Promise.all([this.writing, this.purging]).then(
      () => undefined,
      () => undefined,
    );
  }

  private write<T>(p: Promise<T>): Promise<T> {
    this.writing = p;
    return p;
  }

  /** Keeps the last `retain` entries of each log; idempotent. */
  private async purge(batchId: number): Promise<void> {
    const threshold = batchId + 1 - this.options.retain;
    if (threshold <= 0) return;
    await Promise.all([this.offsets.purge(threshold), this.commits.purge(threshold)]);
  }
}
