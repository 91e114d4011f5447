/**
 * The messages between the driver and a worker. One request per task; a task reads one input
 * split, applies the stateless operators and either writes one sink file or returns its rows.
 */
import type { SerializedError } from '@sluice/state';
import type { Op, Schema } from './types.js';

export type ParseMode = 'PERMISSIVE' | 'DROPMALFORMED' | 'FAILFAST';

export interface ReadOptions {
  mode: ParseMode;
  /** Column that receives the raw text of a malformed record in PERMISSIVE mode. */
  columnNameOfCorruptRecord: string;
  /** CSV only. */
  header: boolean;
  sep: string;
}

export type InputSplit =
  | { type: 'files'; format: 'json' | 'csv' | 'text'; files: string[]; schema: Schema; options: ReadOptions }
  /** `rate`: values [startValue, endValue), value v at startTimeMs + v * 1000 / rowsPerSecond. */
  | { type: 'rate'; startValue: number; endValue: number; rowsPerSecond: number; startTimeMs: number }
  /** `rate-micro-batch`: values [startValue, endValue), all stamped timestampMs. */
  | { type: 'rateMicroBatch'; startValue: number; endValue: number; timestampMs: number }
  /** Rows already in engine form (memory source), msgpack-encoded. */
  | { type: 'rows'; data: Uint8Array };

export interface WriteOptions {
  header: boolean;
  sep: string;
}

export type TaskOutput =
  /** Write the task's rows to `dir/fileName`; `skip` when the sink already holds this batch. */
  | { type: 'file'; format: 'json' | 'csv'; dir: string; fileName: string; options: WriteOptions; skip: boolean }
  /** Return the rows to the driver, msgpack-encoded. */
  | { type: 'collect' };

export interface StatelessTask {
  kind: 'stateless';
  queryId: string;
  batchId: number;
  partition: number;
  attempt: number;
  input: InputSplit;
  inputSchema: Schema;
  ops: Op[];
  output: TaskOutput;
  /** Column whose min/max/avg the task reports for progress.eventTime. */
  eventTimeColumn?: string;
}

export type TaskRequest = StatelessTask;

export interface EventTimeStats {
  min: number;
  max: number;
  sum: number;
  count: number;
}

export interface TaskSuccess {
  ok: true;
  threadId: number;
  numInputRows: number;
  numOutputRows: number;
  file?: { name: string; size: number; rows: number };
  rows?: Uint8Array;
  eventTime?: EventTimeStats;
}

/** A coded (user-caused, deterministic) failure: the driver fails the query without retrying. */
export interface TaskFailure {
  ok: false;
  error: SerializedError;
}

export type TaskResult = TaskSuccess | TaskFailure;
