/**
 * What `writeStream` decided for a query, validated before it starts: the sink, the output mode,
 * the trigger, the name and the checkpoint location.
 */
import type { ManualClock } from '../execution/clock.js';
import type { OutputMode } from '@sluice/executor';
import type { StreamSink } from '../sinks/Sink.js';

export type { OutputMode };

/** When batches run, as Spark's Trigger (built by `Trigger` in the API). */
export type TriggerSpec =
  | { kind: 'ProcessingTime'; intervalMs: number }
  | { kind: 'AvailableNow' }
  | { kind: 'Once' };

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
