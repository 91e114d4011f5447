/** When batches run, as Spark's Trigger. */
import type { TriggerSpec } from '../plan/QuerySpec.js';
import { parseDuration } from '../conf/parsers.js';

/**
 * Builds the trigger of `writeStream.trigger(...)` (Spark's Trigger): when the query runs its
 * batches. Without one, the next batch starts as soon as the last one ends.
 *
 * @example
 * ```ts
 * df.writeStream.trigger(Trigger.ProcessingTime('10 seconds'));
 * df.writeStream.trigger(Trigger.AvailableNow());
 * ```
 */
export const Trigger = {
  /** A batch every interval: a duration such as `'10 seconds'`, or milliseconds (0: the next batch as soon as one ends, the default). */
  ProcessingTime(interval: string | number): TriggerSpec {
    return { kind: 'ProcessingTime', intervalMs: parseDuration(interval, 'trigger.interval') };
  },
  /** Everything available at start, in batches that respect the limits (maxFilesPerTrigger...), then any due no-data batch; then the query stops. */
  AvailableNow(): TriggerSpec {
    return { kind: 'AvailableNow' };
  },
  /** One batch over everything available, ignoring the limits, with no trailing no-data batch; then the query stops. */
  Once(): TriggerSpec {
    return { kind: 'Once' };
  },
};
