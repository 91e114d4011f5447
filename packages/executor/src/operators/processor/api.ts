/**
 * What a stateful processor is written against: Spark's StatefulProcessor and its handle, state
 * variables, timers, and the GroupState of flatMapGroupsWithState. These are the types
 * `@sluice/driver` exports; handle.ts and groupState.ts implement them, so the
 * compiler holds the runtime to exactly these methods.
 */
import type { DataType, Row, Schema } from '../../schema/types.js';
import type { TimeMode } from '../types.js';

/**
 * The type of a state variable's values: a type name (`'LONG'`, `'STRING'`), DDL of fields
 * (`'count LONG, last TIMESTAMP'`, whose values are objects of those fields), a {@link DataType}
 * or a {@link Schema}. Spark's Encoder of the variable.
 */
export type StateSchema = string | DataType | Schema;

/**
 * A state variable's time to live (Spark's TTLConfig): a value not updated for `ttlMs`
 * milliseconds of processing time (batch timestamps) is removed.
 */
export interface TTLConfig {
  /** A positive whole number of milliseconds. */
  ttlMs?: number;
}

/**
 * One value per grouping key (Spark's ValueState), from
 * {@link StatefulProcessorHandle.getValueState}. It acts on the key the processor is being called for.
 */
export interface ValueState<T> {
  /** Whether the key has a value. */
  exists(): boolean;
  /** The key's value, or null when it has none (or its time to live has ended). */
  get(): T | null;
  /** Sets the key's value; null is refused (STATE_VALUE_TYPE_MISMATCH): use clear. */
  update(newState: T): void;
  /** Removes the key's value. */
  clear(): void;
}

/** A list of values per grouping key (Spark's ListState), from {@link StatefulProcessorHandle.getListState}. */
export interface ListState<T> {
  /** Whether the key's list has any element. */
  exists(): boolean;
  /** The key's elements as they are at the call (a later change does not alter the iterator). */
  get(): IterableIterator<T>;
  /** Replaces the key's list; an empty list is refused (STATE_VALUE_TYPE_MISMATCH): use clear. */
  put(newState: Iterable<T>): void;
  /** Appends one element. */
  appendValue(newState: T): void;
  /** Appends elements; an empty list is refused (STATE_VALUE_TYPE_MISMATCH). */
  appendList(newState: Iterable<T>): void;
  /** Removes the key's list. */
  clear(): void;
}

/** A map per grouping key (Spark's MapState), from {@link StatefulProcessorHandle.getMapState}. */
export interface MapState<K, V> {
  /** Whether the key's map has any entry. */
  exists(): boolean;
  /** The value under `key`, or null when there is none. */
  getValue(key: K): V | null;
  /** Whether the map has an entry under `key`. */
  containsKey(key: K): boolean;
  /** Sets the value under `key`. */
  updateValue(key: K, value: V): void;
  /** The entries, as `[key, value]` pairs. */
  iterator(): IterableIterator<[K, V]>;
  /** The map's keys. */
  keys(): IterableIterator<K>;
  /** The map's values. */
  values(): IterableIterator<V>;
  /** Removes the entry under `key`. */
  removeKey(key: K): void;
  /** Removes the whole map. */
  clear(): void;
}

/** Where a processor runs (Spark's QueryInfo), from {@link StatefulProcessorHandle.getQueryInfo}. */
export interface QueryInfo {
  /** The query's id, stable across restarts. */
  getQueryId(): string;
  /** The id of this run of the query. */
  getRunId(): string;
  /** The micro-batch being run. */
  getBatchId(): number;
  /** The state partition of the key being processed. */
  getPartitionId(): number;
}

/**
 * What a processor's `init` gets (Spark's StatefulProcessorHandle): it declares the state
 * variables there, once each, and may keep the handle for timers.
 *
 * @example
 * ```ts
 * init(handle: StatefulProcessorHandle) {
 *   this.count = handle.getValueState<number>('count', 'LONG', { ttlMs: 3_600_000 });
 *   this.seen = handle.getMapState<string, Date>('seen', 'STRING', 'TIMESTAMP');
 * }
 * ```
 */
export interface StatefulProcessorHandle {
  /** Declares a {@link ValueState} named `stateName` holding values of `schema`. */
  getValueState<T = unknown>(stateName: string, schema: StateSchema, ttlConfig?: TTLConfig): ValueState<T>;
  /** Declares a {@link ListState} named `stateName` of elements of `schema`. */
  getListState<T = unknown>(stateName: string, schema: StateSchema, ttlConfig?: TTLConfig): ListState<T>;
  /** Declares a {@link MapState} named `stateName` from keys of `userKeySchema` to values of `valueSchema`. */
  getMapState<K = unknown, V = unknown>(stateName: string, userKeySchema: StateSchema, valueSchema: StateSchema, ttlConfig?: TTLConfig): MapState<K, V>;
  /** Registers a timer of the current key at `expiryTimestampMs` (processing time or event time, as the time mode says). */
  registerTimer(expiryTimestampMs: number): void;
  /** Deletes the current key's timer at `expiryTimestampMs`, if it has one. */
  deleteTimer(expiryTimestampMs: number): void;
  /** The current key's timers, in time order. */
  listTimers(): IterableIterator<number>;
  /** The query, run, batch and partition being processed. */
  getQueryInfo(): QueryInfo;
}

/**
 * The batch's times, and the current key's timers (Spark's TimerValues), as the processor's
 * handlers get them. Both times are constant through the batch.
 */
export interface TimerValues {
  /** The batch's timestamp (processing time), in epoch milliseconds. */
  getCurrentProcessingTimeMs(): number;
  /** Spark's name of {@link TimerValues.getCurrentProcessingTimeMs}. */
  getCurrentProcessingTimeInMs(): number;
  /** The batch's event-time watermark in epoch milliseconds; 0 without one. */
  getCurrentWatermarkMs(): number;
  /** Spark's name of {@link TimerValues.getCurrentWatermarkMs}. */
  getCurrentWatermarkInMs(): number;
  /** As {@link StatefulProcessorHandle.registerTimer}. */
  registerTimer(expiryTimestampMs: number): void;
  /** As {@link StatefulProcessorHandle.deleteTimer}. */
  deleteTimer(expiryTimestampMs: number): void;
  /** As {@link StatefulProcessorHandle.listTimers}. */
  listTimers(): IterableIterator<number>;
}

/** The timer that fired (Spark's ExpiredTimerInfo), as handleExpiredTimer gets it. */
export interface ExpiredTimerInfo {
  /** The timer's time, in epoch milliseconds. */
  getExpiryTimeInMs(): number;
  /** The same, as a property. */
  readonly expiryTimeMs: number;
}

/** What a processor's handler returns (or, as a generator, yields): output rows, or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is a method of return type void.
export type ProcessorOutput<O> = Iterable<O> | null | undefined | void;

/**
 * A processor of `groupBy(...).transformWithState(...)` (Spark 4.0's StatefulProcessor): a class
 * exported by a module that every worker imports (named with `statefulProcessor(moduleUrl,
 * exportName)`). A new instance is made for each state task (a batch on one state shard); `init`
 * runs first, `close` last. `K` is the grouping key (an object of the grouping columns), `I` an
 * input row, `O` an output row (an object of `outputSchema`'s fields) and `S` a row of the
 * `initialState` option, if any.
 *
 * @example
 * ```ts
 * import type { StatefulProcessor, StatefulProcessorHandle, TimerValues, ValueState } from '@sluice/driver';
 *
 * export class Counter implements StatefulProcessor<{ id: string }, { id: string }, { id: string; count: number }> {
 *   private count!: ValueState<number>;
 *   init(handle: StatefulProcessorHandle): void {
 *     this.count = handle.getValueState<number>('count', 'LONG');
 *   }
 *   *handleInputRows(key: { id: string }, rows: IterableIterator<{ id: string }>, timers: TimerValues) {
 *     let n = this.count.get() ?? 0;
 *     for (const _ of rows) n++;
 *     this.count.update(n);
 *     yield { id: key.id, count: n };
 *   }
 * }
 * ```
 */
export interface StatefulProcessor<K = Row, I = Row, O = Row, S = Row> {
  /**
   * Declares the state variables through `handle`. Runs once on the driver when the query starts
   * (to learn the variables), then at the start of each state task.
   */
  init?(handle: StatefulProcessorHandle, outputMode: 'append' | 'update', timeMode: TimeMode): void;
  /** Called once per key that has rows in the batch, with all of them in the order they came. */
  handleInputRows(key: K, rows: IterableIterator<I>, timerValues: TimerValues): ProcessorOutput<O>;
  /** Called once per timer that is due, in time order, after every key's rows. */
  handleExpiredTimer?(key: K, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo): ProcessorOutput<O>;
  /** Called with each row of the `initialState` option in the query's first batch, before any input. */
  handleInitialState?(key: K, initialState: S, timerValues: TimerValues): void;
  /** Called at the end of each state task. */
  close?(): void;
}

/**
 * A {@link StatefulProcessor} for a query with the `initialState` option (Spark's
 * StatefulProcessorWithInitialState), where `handleInitialState` is required.
 */
export interface StatefulProcessorWithInitialState<K = Row, I = Row, O = Row, S = Row> extends StatefulProcessor<K, I, O, S> {
  /** Called with each row of the `initialState` option in the query's first batch, before any input. */
  handleInitialState(key: K, initialState: S, timerValues: TimerValues): void;
}

/**
 * A key's state in flatMapGroupsWithState and mapGroupsWithState (Spark's GroupState): one value
 * and a timeout, as the function sees them in one call.
 */
export interface GroupState<S> {
  /** Whether the key has a state value. */
  exists(): boolean;
  /** The state value; STATEFUL_PROCESSOR_INVALID_OPERATION when there is none (see getOption). */
  get(): S;
  /** The state value, or undefined when there is none. */
  getOption(): S | undefined;
  /** Sets the state value; null is refused: use remove. */
  update(newState: S): void;
  /** Removes the state value. */
  remove(): void;
  /** Whether this call is the key's timeout (then there are no rows). */
  hasTimedOut(): boolean;
  /** With GroupStateTimeout.ProcessingTimeTimeout: times the key out this long (ms or `'10 minutes'`) after the batch's processing time. */
  setTimeoutDuration(duration: number | string): void;
  /** With GroupStateTimeout.EventTimeTimeout: times the key out once the watermark passes `timestamp` (plus `additionalDuration`). */
  setTimeoutTimestamp(timestamp: number | Date, additionalDuration?: number | string): void;
  /** The batch's timestamp, in epoch milliseconds. */
  getCurrentProcessingTimeMs(): number;
  /** The batch's event-time watermark, in epoch milliseconds (the query needs withWatermark). */
  getCurrentWatermarkMs(): number;
}

/**
 * The function of flatMapGroupsWithState (Spark's FlatMapGroupsWithStateFunction): a key's rows
 * and state give any number of output rows. Called with no rows when the key times out.
 */
export type FlatMapGroupsWithStateFunction<K = Row, I = Row, O = Row, S = unknown> = (key: K, rows: IterableIterator<I>, state: GroupState<S>) => Iterable<O>;

/** The function of mapGroupsWithState (Spark's MapGroupsWithStateFunction): one output row per call. */
export type MapGroupsWithStateFunction<K = Row, I = Row, O = Row, S = unknown> = (key: K, rows: IterableIterator<I>, state: GroupState<S>) => O;
