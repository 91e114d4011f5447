/**
 * A streaming sink. File sinks have their tasks write part files and then commit a manifest;
 * the others receive the batch's rows on the driver. `addBatch` must be idempotent per batch id:
 * a batch replayed after a crash is written once.
 */
import type { OutputResult, Row, Schema, TaskOutput } from '@sluice/executor';
import type { OutputMode } from '../plan/QuerySpec.js';

export interface BatchOutput {
  batchId: number;
  schema: Schema;
  outputMode: OutputMode;
  results: OutputResult[];
  /** Decoded rows (engine form) for sinks whose tasks collect. */
  rows: Row[];
}

export interface StreamSink {
  readonly description: string;
  /** What each task does with its rows. `committed`: the sink already holds this batch. */
  taskOutput(batchId: number, partition: number, committed: boolean): TaskOutput;
  isCommitted(batchId: number): boolean;
  /**
   * Checks, when the query starts, that the sink can be written and still holds every batch the
   * checkpoint committed (up to `lastCommittedBatchId`, -1 for none), and claims it for the query.
   */
  prepare?(query: { queryId: string; lastCommittedBatchId: number; isControlBatch(batchId: number): boolean }): void;
  /** A control batch committed: it wrote no rows, but a sink that logs every batch id logs it. */
  commitControlBatch?(batchId: number): void;
  addBatch(out: BatchOutput): Promise<void>;
  /** The query ended (or its start failed after prepare): let go of what prepare opened. */
  close?(): void;
}
