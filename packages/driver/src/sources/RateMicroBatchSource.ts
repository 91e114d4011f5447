/**
 * `rate-micro-batch`: exactly `rowsPerBatch` rows per batch, derived from offsets alone (as in
 * Spark's RatePerMicroBatchStream): the batch after offset {offset, timestamp} holds values
 * [offset, offset + rowsPerBatch), all stamped `timestamp`, and the next one is
 * `advanceMillisPerBatch` later.
 */
import type { InputSplit } from '@sluice/executor';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { RATE_SCHEMA, splitRange } from './RateSource.js';
import type { ReadLimit, StreamSource } from './Source.js';

export interface RateMicroBatchConfig {
  rowsPerBatch: number;
  numPartitions?: number;
  startTimestamp: number;
  advanceMillisPerBatch: number;
}

interface RateMicroBatchOffset {
  offset: number;
  timestamp: number;
}

export class RateMicroBatchSource implements StreamSource {
  readonly description: string;
  readonly schema = RATE_SCHEMA;
  private availableNow = false;
  private pinned: RateMicroBatchOffset | undefined;

  constructor(private readonly config: RateMicroBatchConfig) {
    this.description = `RatePerMicroBatchStream[rowsPerBatch=${config.rowsPerBatch}, numPartitions=${
      config.numPartitions ?? 'default'
    }, startTimestamp=${config.startTimestamp}, advanceMillisPerBatch=${config.advanceMillisPerBatch}]`;
  }

  private startOf(start: SourceOffset | null): RateMicroBatchOffset {
    return (start as RateMicroBatchOffset | null) ?? { offset: 0, timestamp: this.config.startTimestamp };
  }

  /** Trigger.AvailableNow: the data "available" at start is the next batch, then the query ends. */
  prepareForAvailableNow(): void {
    this.availableNow = true;
  }

  async latestOffset(start: SourceOffset | null, _limit: ReadLimit): Promise<SourceOffset | null> {
    const s = this.startOf(start);
    const next = { offset: s.offset + this.config.rowsPerBatch, timestamp: s.timestamp + this.config.advanceMillisPerBatch };
    if (!this.availableNow) return next;
    this.pinned ??= next;
    return this.pinned.offset >= s.offset ? this.pinned : s;
  }

  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    const s = this.startOf(start);
    const e = end as RateMicroBatchOffset;
    return splitRange(s.offset, e.offset, this.config.numPartitions ?? slots).map(([startValue, endValue]) => ({
      type: 'rateMicroBatch',
      startValue,
      endValue,
      timestampMs: s.timestamp,
    }));
  }
}
