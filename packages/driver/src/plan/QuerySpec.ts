/**
 * What `writeStream` decided for a query, validated before it starts: the sink, the output mode,
 * the trigger, the name and the checkpoint location.
 */
import type { ManualClock } from '../execution/clock.js';
import type { OutputMode } from '@sluice/executor';
import type { StreamSink } from '../sinks/Sink.js';

export type { OutputMode };

/** When batches run, as Spark's Trigger: what the {@link Trigger} factories build. */
export type TriggerSpec =
  | {
      /** A batch every interval. */
      kind: 'ProcessingTime';
      /** The interval in milliseconds (0: the next batch as soon as one ends). */
      intervalMs: number;
    }
  | {
      /** What is available at start, in batches that respect the limits, then stop. */
      kind: 'AvailableNow';
    }
  | {
      /** One batch over what is available, then stop. */
      kind: 'Once';
    };

export interface QuerySpec {
  sink: StreamSink;
  outputMode: OutputMode;
  trigger: TriggerSpec;
  queryName: string | null;
  /** Undefined: a temporary checkpoint, removed when the query stops. */
  checkpointLocation: string | undefined;
  /** The scheduler pool its tasks run in (sluice.scheduler.pool when it started, or the writer's option). */
  pool: string;
  /** A manual clock the trigger and batch timestamps follow (tests), instead of the wall clock. */
  clock?: ManualClock;
}
