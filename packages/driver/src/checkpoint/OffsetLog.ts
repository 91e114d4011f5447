import { MetadataLog } from './MetadataLog.js';

/** Offsets are JSON values chosen by each source; `null` means the source had no data yet. */
export type SourceOffset = unknown;

/** `offsets/N`: the write-ahead entry of batch N. */
export interface OffsetSeq {
  batchId: number;
  batchTimestampMs: number;
  batchWatermarkMs: number;
  /** End offset per source, in source order. */
  offsets: SourceOffset[];
  /** Settings pinned at checkpoint creation, repeated per batch as in Spark's OffsetSeqMetadata. */
  conf: Record<string, unknown>;
}

function isOffsetSeq(v: unknown): v is OffsetSeq {
  const o = v as OffsetSeq;
  return (
    typeof o === 'object' &&
    o !== null &&
    Number.isInteger(o.batchId) &&
    typeof o.batchTimestampMs === 'number' &&
    typeof o.batchWatermarkMs === 'number' &&
    Array.isArray(o.offsets) &&
    typeof o.conf === 'object'
  );
}

export class OffsetLog extends MetadataLog<OffsetSeq> {
  constructor(dir: string) {
    super(dir, isOffsetSeq);
  }
}
