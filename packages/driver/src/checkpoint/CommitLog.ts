import { MetadataLog } from './MetadataLog.js';

/** `commits/N`: written after the sink committed batch N; carries the watermark for N+1. */
export interface CommitMetadata {
  nextBatchWatermarkMs: number;
}

function isCommit(v: unknown): v is CommitMetadata {
  return typeof v === 'object' && v !== null && typeof (v as CommitMetadata).nextBatchWatermarkMs === 'number';
}

export class CommitLog extends MetadataLog<CommitMetadata> {
  constructor(dir: string) {
    super(dir, isCommit);
  }
}
