import { MetadataLog } from './MetadataLog.js';

/** `commits/N`: written after the sink committed batch N; carries the watermark for N+1. */
export interface CommitMetadata {
  nextBatchWatermarkMs: number;
  /**
   * Stateful queries: the batch each state shard last committed, by operator id, then shard, so
   * that a start detects a shard that is missing, emptied or behind (Repartition.ts's
   * shardMarkersOf reads it); null for an operator whose shards' markers are not known (a
   * repartition that could not read them). Absent from commits of an earlier Sluice.
   */
  shardMarkers?: Array<number[] | null>;
  /** Written by Sluice before `shardMarkers`, and still read: the first operator's markers (index: shard). */
  stateShardMarkers?: number[];
  /** Written by Sluice before `shardMarkers`, and still read: the other operators' (index: operator id - 1, then shard). */
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
