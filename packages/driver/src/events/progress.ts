/** The progress event of a batch (contract): Spark's StreamingQueryProgress JSON. */
export interface SourceProgress {
  description: string;
  startOffset: unknown;
  endOffset: unknown;
  latestOffset: unknown;
  numInputRows: number;
  inputRowsPerSecond: number;
  processedRowsPerSecond: number;
  /** The source's own metrics, as Spark's Kafka source reports its backlog. */
  metrics?: Record<string, string>;
}

export interface StateOperatorProgress {
  operatorName: string;
  numRowsTotal: number;
  numRowsUpdated: number;
  numRowsRemoved: number;
  numRowsDroppedByWatermark: number;
  memoryUsedBytes: number;
  numShufflePartitions: number;
  numStateStoreInstances: number;
  commitTimeMs: number;
  customMetrics: Record<string, number>;
}

export interface StreamingQueryProgress {
  id: string;
  runId: string;
  name: string | null;
  /** The scheduler pool its tasks ran in (not in Spark's JSON, where the pool is a job property). */
  schedulerPool: string;
  timestamp: string;
  batchId: number;
  batchDuration: number;
  numInputRows: number;
  inputRowsPerSecond: number;
  processedRowsPerSecond: number;
  durationMs: Record<string, number>;
  eventTime: Record<string, string>;
  stateOperators: StateOperatorProgress[];
  sources: SourceProgress[];
  sink: { description: string; numOutputRows: number };
  /** A stateless shuffle's (repartition's) partitions, and the reduce tasks adaptive execution coalesced them into. */
  shuffle?: { numShufflePartitions: number; numCoalescedPartitions: number };
}
