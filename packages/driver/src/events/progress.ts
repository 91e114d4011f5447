/** The progress event of a batch (contract): Spark's StreamingQueryProgress JSON. */

/** A source's part of a batch's progress (Spark's SourceProgress). */
export interface SourceProgress {
  /** The source, such as `FileStreamSource[file:/data/in]` or `RateStreamV2[rowsPerSecond=5]`. */
  description: string;
  /** Its offset before the batch (null for the first batch); its shape depends on the source. */
  startOffset: unknown;
  /** Its offset after the batch. */
  endOffset: unknown;
  /** The latest offset it had when the batch was planned. */
  latestOffset: unknown;
  /** Rows the batch read from it. */
  numInputRows: number;
  /** Rows per second arriving from it since the last batch. */
  inputRowsPerSecond: number;
  /** Rows per second the batch processed from it. */
  processedRowsPerSecond: number;
  /** The source's own metrics, as Spark's Kafka source reports its backlog. */
  metrics?: Record<string, string>;
}

/** A stateful operator's part of a batch's progress (Spark's StateOperatorProgress). */
export interface StateOperatorProgress {
  /** The operator: `stateStoreSave`, `dedupe`, `symmetricHashJoin`, `transformWithStateExec`... */
  operatorName: string;
  /** Rows in its state after the batch. */
  numRowsTotal: number;
  /** State rows the batch wrote. */
  numRowsUpdated: number;
  /** State rows the batch removed (evicted by the watermark, or removed by a processor). */
  numRowsRemoved: number;
  /** Input rows dropped as late: at or below the watermark. */
  numRowsDroppedByWatermark: number;
  /** Memory its state stores use, in bytes. */
  memoryUsedBytes: number;
  /** Its state partitions. */
  numShufflePartitions: number;
  /** Its state store instances (LevelDB shards). */
  numStateStoreInstances: number;
  /** Time spent committing its state, in milliseconds. */
  commitTimeMs: number;
  /** The operator's own metrics (transformWithState's numRegisteredTimers...). */
  customMetrics: Record<string, number>;
}

/**
 * The progress of one batch (Spark's StreamingQueryProgress, with the same JSON fields), as
 * `query.lastProgress`, `query.recentProgress` and listeners' `onQueryProgress` give it.
 */
export interface StreamingQueryProgress {
  /** The query's id, stable across restarts. */
  id: string;
  /** The id of this run. */
  runId: string;
  /** The query's name, or null. */
  name: string | null;
  /** The scheduler pool its tasks ran in (not in Spark's JSON, where the pool is a job property). */
  schedulerPool: string;
  /** When the batch's trigger started, ISO-8601 UTC. */
  timestamp: string;
  /** The batch's id. */
  batchId: number;
  /** How long the batch took, in milliseconds. */
  batchDuration: number;
  /** Rows the batch read, over all sources. */
  numInputRows: number;
  /** Rows per second arriving since the last batch. */
  inputRowsPerSecond: number;
  /** Rows per second the batch processed. */
  processedRowsPerSecond: number;
  /**
   * Milliseconds spent in each phase: `latestOffset`, `getBatch`, `queryPlanning`, `addBatch`,
   * `walCommit`, `commitOffsets`, `triggerExecution`, and `controlBatch.REPARTITION` after a repartition.
   */
  durationMs: Record<string, number>;
  /** With a watermark: the batch's `min`, `max` and `avg` event time and the `watermark`, ISO-8601 UTC. */
  eventTime: Record<string, string>;
  /** Each stateful operator's state (empty for a stateless query). */
  stateOperators: StateOperatorProgress[];
  /** Each source's offsets and rows. */
  sources: SourceProgress[];
  /** The sink, and the rows the batch wrote to it. */
  sink: {
    /** The sink, such as `FileSink[file:/data/out]` or `MemorySink`. */
    description: string;
    /** Rows the batch wrote. */
    numOutputRows: number;
  };
  /** A stateless shuffle's (repartition's) partitions, and the reduce tasks adaptive execution coalesced them into. */
  shuffle?: {
    /** The shuffle's partitions. */
    numShufflePartitions: number;
    /** The reduce tasks they ran as. */
    numCoalescedPartitions: number;
  };
}
