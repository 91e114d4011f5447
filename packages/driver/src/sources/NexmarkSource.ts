/**
 * `nexmark`: Nexmark's person, auction and bid events (formats/nexmark.ts), generated from offsets
 * alone. An offset is the number of events planned so far; a batch takes at most
 * maxOffsetsPerTrigger more, and a bounded stream (maxEvents) ends there. The start time, unless
 * given, is the first start's and is kept in the source's checkpoint folder, as rate's is.
 */
import type { InputSplit, NexmarkConfig } from '@sluice/executor';
import { nexmarkSchema } from '@sluice/executor';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { keptStartTime, splitRange } from './RateSource.js';
import type { ReadLimit, StreamSource } from './Source.js';

/** Events per batch when maxOffsetsPerTrigger is not set. */
export const NEXMARK_DEFAULT_EVENTS_PER_BATCH = 1_000_000;

export interface NexmarkSourceConfig {
  table: NexmarkConfig['table'];
  seed: number;
  eventsPerSecond: number;
  startTimestamp?: number;
  maxEvents?: number;
  maxOffsetsPerTrigger?: number;
  numPartitions?: number;
}

interface EventOffset {
  events: number;
}

export class NexmarkSource implements StreamSource {
  readonly description: string;
  readonly schema;
  private readonly generator: NexmarkConfig;
  private availableNow = false;
  private pinned: number | undefined;

  constructor(
    private readonly config: NexmarkSourceConfig,
    metaPath: string,
    now = Date.now(),
  ) {
    this.schema = nexmarkSchema(config.table);
    const startTimestamp = config.startTimestamp ?? keptStartTime(metaPath, 'startTimestamp', now);
    this.generator = { table: config.table, seed: config.seed, eventsPerSecond: config.eventsPerSecond, startTimestamp };
    this.description = `NexmarkStream[table=${config.table}, seed=${config.seed}, eventsPerSecond=${config.eventsPerSecond}, maxEvents=${config.maxEvents ?? 'unbounded'}]`;
  }

  private eventsAt(offset: SourceOffset | null): number {
    return offset === null ? 0 : (offset as EventOffset).events;
  }

  /** Trigger.AvailableNow: a bounded stream's every event; an unbounded one's next batch. */
  prepareForAvailableNow(): void {
    this.availableNow = true;
  }

  async latestOffset(start: SourceOffset | null, limit: ReadLimit): Promise<SourceOffset | null> {
    const from = this.eventsAt(start);
    const last = this.config.maxEvents ?? Infinity;
    // Trigger.Once takes a bounded stream whole; an unbounded one still a batch's worth.
    const cap = limit.ignoreLimits && last < Infinity ? Infinity : (this.config.maxOffsetsPerTrigger ?? NEXMARK_DEFAULT_EVENTS_PER_BATCH);
    if (this.availableNow) this.pinned ??= last < Infinity ? last : from + cap;
    const to = Math.max(from, Math.min(from + cap, last, this.pinned ?? Infinity));
    return to === 0 ? null : { events: to };
  }

  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    return splitRange(this.eventsAt(start), this.eventsAt(end), this.config.numPartitions ?? slots).map(([startEvent, endEvent]) => ({
      type: 'nexmark',
      startEvent,
      endEvent,
      config: this.generator,
    }));
  }

  /** A bounded stream's event time ends with its last event. */
  eventTimeEnded(end: SourceOffset | null): boolean {
    return this.config.maxEvents !== undefined && this.eventsAt(end) >= this.config.maxEvents;
  }
}
