/** When batches run, as Spark's Trigger. */
import type { TriggerSpec } from '../plan/QuerySpec.js';
import { parseDuration } from '../conf/parsers.js';


export const Trigger = {
  /** A batch every interval (0: the next batch as soon as one ends, the default). */
  ProcessingTime(interval: string | number): TriggerSpec {
    return { kind: 'ProcessingTime', intervalMs: parseDuration(interval, 'trigger.interval') };
  },
  /** Everything available at start, in batches that respect the limits; then the query stops. */
  AvailableNow(): TriggerSpec {
    return { kind: 'AvailableNow' };
  },
  /** One batch over everything available, ignoring the limits; then the query stops. */
  Once(): TriggerSpec {
    return { kind: 'Once' };
  },
};
