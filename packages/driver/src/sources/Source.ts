/**
 * A replayable streaming source: offsets are JSON values, and the same (start, end] range always
 * yields the same rows. The driver asks for the latest offset (admission control applies here),
 * turns a range into input splits (one per task), and tells the source when a batch committed.
 */
import type { InputSplit, Schema } from '@sluice/executor';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';

export interface ReadLimit {
  /** Trigger.Once: take everything available, ignoring maxFilesPerTrigger and the like. */
  ignoreLimits: boolean;
}

export interface StreamSource {
  readonly description: string;
  readonly schema: Schema;
  /** End offset of the next batch given the last planned end (`null` before the first batch). */
  latestOffset(start: SourceOffset | null, limit: ReadLimit): Promise<SourceOffset | null>;
  /** The splits of (start, end]; empty when they are equal. */
  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] | Promise<InputSplit[]>;
  /**
   * Checks at start that the source's own log still holds what the checkpoint's offsets say it
   * planned up to `end` (a lost entry would silently read its data again).
   */
  verifyOffset?(end: SourceOffset | null): void;
  /** Spark's `sources[].metrics` of a batch that ended at `end` (string values, as in Spark). */
  metrics?(end: SourceOffset | null): Promise<Record<string, string> | undefined>;
  /**
   * Whether the stream has ended at `end` (a bounded generator's last event): the watermark of the
   * inputs it feeds then passes every window, so windowed operators emit all they hold.
   */
  eventTimeEnded?(end: SourceOffset | null): boolean;
  /** Trigger.AvailableNow: pin what exists now; latestOffset never goes beyond it. */
  prepareForAvailableNow?(): void;
  /** Batch up to `end` committed; cleanSource runs here. */
  commit?(end: SourceOffset): Promise<void>;
  stop?(): void;
}

export function sameOffset(a: SourceOffset | null, b: SourceOffset | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
