/**
 * The GroupState of flatMapGroupsWithState and mapGroupsWithState (Spark's GroupStateImpl): a
 * key's one state value and its timeout, as the user's function sees them in one call. The
 * operator (processor/batch.ts) keeps the value as the state variable GROUP_STATE and the
 * timeout as the key's one timer.
 */
import { SluiceError } from '@sluice/state';
import { parseInterval } from '../../schema/intervals.js';
import type { TimeMode } from '../types.js';
import type { GroupState as UserGroupState } from './api.js';

/** The state variable that holds a GroupState's value. */
export const GROUP_STATE = 'state';

/**
 * Spark's GroupStateTimeout: the `timeoutConf` option of flatMapGroupsWithState and
 * mapGroupsWithState, by the time a key's timeout goes by.
 */
export const GroupStateTimeout = {
  /** Keys never time out (the default). */
  NoTimeout: 'NoTimeout',
  /** A key times out a duration after a batch's timestamp (GroupState.setTimeoutDuration). */
  ProcessingTimeTimeout: 'ProcessingTimeTimeout',
  /** A key times out once the watermark passes a time (GroupState.setTimeoutTimestamp); the query needs withWatermark. */
  EventTimeTimeout: 'EventTimeTimeout',
} as const;
/**
 * One of the {@link GroupStateTimeout} values.
 * @useDeclaredType
 */
export type GroupStateTimeoutConf = (typeof GroupStateTimeout)[keyof typeof GroupStateTimeout];

export function timeModeOfTimeout(conf: GroupStateTimeoutConf): TimeMode {
  return conf === 'ProcessingTimeTimeout' ? 'processingTime' : conf === 'EventTimeTimeout' ? 'eventTime' : 'none';
}

interface Context {
  timeMode: TimeMode;
  timedOut: boolean;
  processingTimeMs: number;
  watermarkMs: number | undefined;
  /** The query has a watermark (getCurrentWatermarkMs needs one). */
  hasWatermark: boolean;
}

function misuse(message: string): SluiceError {
  return new SluiceError('STATEFUL_PROCESSOR_INVALID_OPERATION', message);
}

export class GroupState implements UserGroupState<unknown> {
  /** The value the call set (engine form), if it called update. */
  updatedValue: unknown;
  removed = false;
  /** The timeout the call set: a processing-time duration or an event-time timestamp. */
  timeoutMs: number | undefined;
  private value: { value: unknown } | undefined;

  constructor(
    initial: { value: unknown } | undefined,
    private readonly ctx: Context,
    private readonly toEngine: (v: unknown) => unknown,
  ) {
    this.value = initial;
  }

  exists(): boolean {
    return this.value !== undefined;
  }

  get(): unknown {
    if (this.value === undefined)
      throw misuse('State is either not defined or has already been removed (GroupState.get on a key without state: use getOption or exists)');
    return this.value.value;
  }

  getOption(): unknown {
    return this.value?.value;
  }

  update(newValue: unknown): void {
    if (newValue === null || newValue === undefined) throw misuse("'null' is not a valid state value (GroupState.update; use remove)");
    this.updatedValue = this.toEngine(newValue);
    this.value = { value: newValue };
    this.removed = false;
  }

  remove(): void {
    this.value = undefined;
    this.updatedValue = undefined;
    this.removed = true;
  }

  hasTimedOut(): boolean {
    return this.ctx.timedOut;
  }

  /** ProcessingTimeTimeout: the key times out this long after the batch's processing time. */
  setTimeoutDuration(duration: number | string): void {
    if (this.ctx.timeMode !== 'processingTime') {
      throw misuse('Cannot set timeout duration without enabling processing time timeout in [map|flatMap]GroupsWithState');
    }
    const ms = typeof duration === 'string' ? durationMs(duration) : duration;
    if (!(typeof ms === 'number' && Number.isFinite(ms)) || ms <= 0) throw misuse(`Timeout duration must be positive (got ${String(duration)})`);
    this.timeoutMs = this.ctx.processingTimeMs + Math.trunc(ms);
  }

  /** EventTimeTimeout: the key times out once the watermark passes `timestampMs` (a Date or ms), plus an optional duration. */
  setTimeoutTimestamp(timestamp: number | Date, additionalDuration?: number | string): void {
    if (this.ctx.timeMode !== 'eventTime') {
      throw misuse('Cannot set timeout timestamp without enabling event time timeout in [map|flatMap]GroupsWithState');
    }
    let ms = timestamp instanceof Date ? timestamp.getTime() : timestamp;
    if (!(typeof ms === 'number' && Number.isFinite(ms))) throw misuse(`Timeout timestamp must be a Date or milliseconds, got ${String(timestamp)}`);
    if (additionalDuration !== undefined) {
      const extra = typeof additionalDuration === 'string' ? durationMs(additionalDuration) : additionalDuration;
      if (!(typeof extra === 'number' && Number.isFinite(extra)) || extra < 0) throw misuse(`Provided duration (${String(additionalDuration)}) is negative`);
      ms += extra;
    }
    if (ms <= 0) throw misuse('Timeout timestamp must be positive');
    const wm = this.ctx.watermarkMs;
    if (wm !== undefined && ms < wm) throw misuse(`Timeout timestamp (${ms}) cannot be earlier than the current watermark (${wm})`);
    this.timeoutMs = Math.trunc(ms);
  }

  getCurrentProcessingTimeMs(): number {
    return this.ctx.processingTimeMs;
  }

  getCurrentWatermarkMs(): number {
    if (!this.ctx.hasWatermark) {
      throw misuse('Cannot get event time watermark timestamp without setting watermark before [map|flatMap]GroupsWithState');
    }
    return this.ctx.watermarkMs ?? 0;
  }
}

const DAY_MS = 86_400_000;

/** A duration's milliseconds, a month counting 31 days (Spark's IntervalUtils.getDuration). */
function durationMs(text: string): number {
  const interval = parseInterval(text);
  if (interval === null) throw misuse(`'${text}' is not a valid duration`);
  const [months, days, ms] = interval;
  const total = (months * 31 + days) * DAY_MS + ms;
  if (total < 0) throw misuse(`Provided duration (${text}) is negative`);
  return total;
}
