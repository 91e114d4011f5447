/**
 * The messages between the driver and a worker. One request per task; a task reads one input
 * split, applies the stateless operators and either writes one sink file or returns its rows.
 */
import type { SerializedError, WorkerBudget, WorkerStateUsage } from '@sluice/state';
import type { Op, OutputMode, StatefulOp } from '../operators/types.js';
import type { Schema } from '../schema/types.js';
import type { Expr } from '../expressions/types.js';
import type { NexmarkConfig } from '../formats/nexmark.js';
import type { ParquetCompression } from '../formats/parquet/index.js';

export type ParseMode = 'PERMISSIVE' | 'DROPMALFORMED' | 'FAILFAST';

export interface ReadOptions {
  mode: ParseMode;
  /** Column that receives the raw text of a malformed record in PERMISSIVE mode. */
  columnNameOfCorruptRecord: string;
  /** CSV only. */
  header: boolean;
  sep: string;
  /** Spark's datetime patterns for TIMESTAMP and DATE text; unset, text is read as CAST reads it. */
  timestampFormat?: string;
  dateFormat?: string;
}

export type InputSplit =
  | {
      type: 'files';
      format: 'json' | 'csv' | 'text' | 'parquet';
      files: string[];
      schema: Schema;
      options: ReadOptions;
      /** Per file, the values of its partition directories (`dt=2026-01-01/`), which fill those columns. */
      partitions?: Array<Record<string, string | null> | null>;
      /** Parquet: per file, the row groups [from, to) to read (null: all); a large file is split among tasks by row group. */
      rowGroups?: Array<[number, number] | null>;
    }
  /** `rate`: values [startValue, endValue), value v at startTimeMs + v * 1000 / rowsPerSecond. */
  | { type: 'rate'; startValue: number; endValue: number; rowsPerSecond: number; startTimeMs: number }
  /** `rate-micro-batch`: values [startValue, endValue), all stamped timestampMs. */
  | { type: 'rateMicroBatch'; startValue: number; endValue: number; timestampMs: number }
  /** `nexmark`: the events numbered [startEvent, endEvent) of one generated stream (those of its table). */
  | { type: 'nexmark'; startEvent: number; endEvent: number; config: NexmarkConfig }
  /** Rows already in engine form (memory source), msgpack-encoded. */
  | { type: 'rows'; data: Uint8Array }
  /** A shuffle partition's blocks from every map task (ExchangeTask), each msgpack-encoded rows. */
  | { type: 'blocks'; blocks: Uint8Array[] };

export interface WriteOptions {
  header: boolean;
  sep: string;
  /** Parquet only (default snappy, as Spark's). */
  compression?: ParquetCompression;
}

export type TaskOutput =
  /** Write the task's rows to `dir/fileName`; `skip` when the sink already holds this batch. */
  | {
      type: 'file';
      format: 'json' | 'csv' | 'parquet';
      dir: string;
      fileName: string;
      options: WriteOptions;
      skip: boolean;
      /** partitionBy's columns: one file per partition directory `c=v/...` under dir, without them. */
      partitionBy?: string[];
    }
  /** Return the rows to the driver, msgpack-encoded. */
  | { type: 'collect' }
  /** Count the rows and drop them (the noop sink). */
  | { type: 'discard' };

/** What every task carries: whose it is, which batch, its number in the batch, and the attempt. */
export interface TaskIdentity {
  queryId: string;
  /** The query run (a start) it belongs to: an aborted run's tasks are ended together. */
  runId: string;
  batchId: number;
  /** The batch's timestamp (current_timestamp()); absent for a static query, whose tasks take their start. */
  batchTimestampMs?: number;
  partition: number;
  attempt: number;
}

export interface StatelessTask extends TaskIdentity {
  kind: 'stateless';
  input: InputSplit;
  inputSchema: Schema;
  ops: Op[];
  output: TaskOutput;
}

export interface StateLayoutMsg {
  keyGroups: number;
  partitions: number;
  shards: number;
}

/** Rows of one shuffle partition, msgpack-encoded by the map task that produced them. */
export interface ShuffleBlock {
  partition: number;
  data: Uint8Array;
}

/**
 * Map side of a stateful batch: read the split, run the operators before the shuffle, compute
 * grouping keys and partial aggregates, hash keys to key groups and return one block per partition.
 */
export interface MapTask extends TaskIdentity {
  kind: 'map';
  input: InputSplit;
  inputSchema: Schema;
  ops: Op[];
  stateful: StatefulOp;
  layout: StateLayoutMsg;
  /**
   * Deduplication and stream joins: rows whose event time is <= this are late and dropped before
   * the task keeps a first row per key (else a late row could hide an on-time one) or sends them.
   * Null: nothing is late here.
   */
  lateThresholdMs: number | null;
  /** A join of two streams: the side whose rows the task reads (0: left, 1: right). */
  joinSide?: 0 | 1;
}

/**
 * Reduce side: all partitions of one shard. Rolls back an earlier attempt at this batch, merges the
 * blocks into state, drops late rows, evicts, emits rows by output mode, runs the operators after
 * the stateful one and delivers the rows like a stateless task; commits the shard once.
 */
/** `partition` is the shard index. */
export interface StateTask extends TaskIdentity {
  kind: 'state';
  operatorId: number;
  shardDir: string;
  /** LevelDB resources and the budget of the decoded state cache (stateCache.ts). */
  storeOptions: { cacheBytes: number; writeBufferBytes: number; maxOpenFiles: number; stateCacheBytes: number; changelog?: boolean };
  /** The worker's budgets across every query's shards (ShardRegistry.use closes idle shards to keep them). */
  workerBudget: WorkerBudget;
  layout: StateLayoutMsg;
  partitions: number[];
  blocks: ShuffleBlock[];
  stateful: StatefulOp;
  /** Schema of the rows entering the stateful operator. */
  stateInputSchema: Schema;
  outputMode: OutputMode;
  /** The batch's watermark (0 before any data); late rows and eviction use it. */
  watermarkMs: number;
  /** Whether the query has a watermark at all (without one nothing is late or evicted). */
  hasWatermark: boolean;
  /**
   * Rows and keys at or below this are late (Spark's watermark for late events: the batch before's,
   * for an operator after another); absent: the batch's watermark.
   */
  lateWatermarkMs?: number;
  post: Op[];
  /**
   * The stateful operator after this one, if any: the rows `post` gives go to its map side here,
   * and the task returns their blocks (StateResult.blocks) instead of delivering them.
   */
  next?: { stateful: StatefulOp; layout: StateLayoutMsg; lateThresholdMs: number | null; joinSide?: 0 | 1 };
  output: TaskOutput;
  /** Undo records of batches below this are no longer needed (their commits/N is durable). */
  pruneUndoBelow: number;
  /**
   * The batch the shard last committed, as the checkpoint's commit log recorded it (null: not
   * recorded). After rolling back an earlier attempt at this batch the shard's marker must be
   * this: a shard that is missing, emptied or behind is STATE_STORE_CORRUPT, never empty state.
   */
  expectedMarker: number | null;
  /**
   * The batch's map tasks, when the batch is small: the worker runs them first and merges their
   * blocks of `partitions` (`blocks` is then empty); the blocks of other shards' partitions come
   * back in the result (`otherBlocks`) for those shards' state tasks.
   */
  maps?: MapTask[];
}

/** Closes a query's state shards in one worker (the query stopped); `partition` is the slot. */
export interface ReleaseTask extends TaskIdentity {
  kind: 'release';
  stateDir: string;
}

/**
 * Map side of a stateless shuffle (repartition): read the split, run the operators before it,
 * and hash each row's `keys` into one of `partitions` blocks (no keys: round robin).
 */
export interface ExchangeTask extends TaskIdentity {
  kind: 'exchange';
  input: InputSplit;
  inputSchema: Schema;
  ops: Op[];
  keys: Expr[];
  partitions: number;
}

export type TaskRequest = StatelessTask | MapTask | StateTask | ReleaseTask | ExchangeTask;

export interface StateOperatorMetrics {
  numRowsTotal: number;
  numRowsUpdated: number;
  numRowsRemoved: number;
  numRowsDroppedByWatermark: number;
  memoryUsedBytes: number;
  commitTimeMs: number;
  /** The operator's own metrics (a processor's timers and expiries), summed over shards into progress's customMetrics. */
  customMetrics?: Record<string, number>;
}

export interface EventTimeStats {
  min: number;
  max: number;
  sum: number;
  count: number;
}

interface ResultBase {
  ok: true;
  threadId: number;
}

/** What a task that delivers rows gives: a part file of a file sink, or the rows themselves. */
export interface DeliveredRows {
  numOutputRows: number;
  /** The part files written, named relative to the sink directory. */
  files?: Array<{ name: string; size: number; rows: number }>;
  rows?: Uint8Array;
}

export interface StatelessResult extends ResultBase, DeliveredRows {
  kind: 'stateless';
  numInputRows: number;
  eventTime?: EventTimeStats;
}

/** A stateful batch's map task: one block per non-empty partition, one record per key it saw. */
export interface MapResult extends ResultBase {
  kind: 'map';
  numInputRows: number;
  /** Records over all blocks: the task's distinct keys. */
  numRecords: number;
  blocks: ShuffleBlock[];
  /** A deduplication's late rows, dropped before the shuffle. */
  numLateRows?: number;
  eventTime?: EventTimeStats;
}

/** What a map task found, without its blocks (a state task that ran its batch's map tasks reports these). */
export type MapFacts = Omit<MapResult, 'blocks'>;

/** A stateless shuffle's map task: the rows the operators gave, by partition. */
export interface ExchangeResult extends ResultBase {
  kind: 'exchange';
  numInputRows: number;
  numOutputRows: number;
  blocks: ShuffleBlock[];
  eventTime?: EventTimeStats;
}

export interface StateResult extends ResultBase, DeliveredRows {
  kind: 'state';
  state: StateOperatorMetrics;
  /** The batch the shard last committed, after this task. */
  shardMarker: number;
  /** A processor in processing-time mode: when its shard's next timer or expiry is due (a batch without data runs then). */
  nextWakeMs?: number;
  /** The worker's open shards against its budgets, after this task. */
  stateStores?: WorkerStateUsage;
  /** The facts of the map tasks the task ran first (StateTask.maps), in their order. */
  maps?: MapFacts[];
  /** Those map tasks' blocks of the partitions of other shards. */
  otherBlocks?: ShuffleBlock[];
  /** With StateTask.next: the next operator's blocks of the rows this one emitted, and the late rows its map side dropped. */
  blocks?: ShuffleBlock[];
  numLateRows?: number;
}

export interface ReleaseResult extends ResultBase {
  kind: 'release';
  /** The worker's open shards after the release (none if no state task ever ran there). */
  stateStores?: WorkerStateUsage;
  /** Shards whose close failed. */
  notClosed?: Array<{ dir: string; error: string }>;
}

export type TaskSuccess = StatelessResult | MapResult | ExchangeResult | StateResult | ReleaseResult;

/** The result a task of kind `T` gives. */
export type ResultOf<T extends TaskRequest> = Extract<TaskSuccess, { kind: T['kind'] }>;

/** The results that deliver rows to the sink. */
export type OutputResult = StatelessResult | StateResult;

/** A coded (user-caused, deterministic) failure: the driver fails the query without retrying. */
export interface TaskFailure {
  ok: false;
  error: SerializedError;
}

export type TaskResult = TaskSuccess | TaskFailure;
