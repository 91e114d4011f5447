import { MetadataLog } from './MetadataLog.js';

/** `commits/N`: written after the sink committed batch N; carries the watermark for N+1. */
export interface CommitMetadata {
  nextBatchWatermarkMs: number;
  /**
   * Stateful queries: the batch each state shard last committed (index: shard), so that a start
   * detects a shard that is missing, emptied or behind. Absent from commits of an earlier Sluice.
   */
  stateShardMarkers?: number[];
  /** The same for each stateful operator after the first (index: operator id - 1, then shard). */
  downstreamShardMarkers?: number[][];
  /**
   * A processor in processing-time mode (transformWithState, flatMapGroupsWithState): the least
   * time at which one of its timers or expiries is due; a batch without data runs once the clock
   * reaches it.
   */
  nextWakeMs?: number;
}

function isCommit(v: unknown): v is CommitMetadata {
  return typeof v === 'object' && v !== null && typeof (v as CommitMetadata).nextBatchWatermarkMs === 'number';
}

export class CommitLog extends MetadataLog<CommitMetadata> {
  constructor(dir: string) {
    super(dir, isCommit);
  }
}
