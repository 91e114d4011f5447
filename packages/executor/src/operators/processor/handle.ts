/**
 * One batch of a processor on a shard: each key's state as the batch reads and changes it, and
 * the handle the user's code calls (api.ts has its types): state variables, timers and
 * their times to live.
 */
import { SluiceError } from '@sluice/state';
import { describeValue } from '../../expressions/udfs.js';
import type { StateTask } from '../../task/messages.js';
import type { Row } from '../../schema/types.js';
import { createToExternalConverter } from '../../schema/values.js';
import { mapKeyText, TTL_BASE, type Expiring, type KeyStateData, type VariableData } from './state.js';
import type { StateVariable, TransformWithStateOp } from '../types.js';
import type { ListState, MapState, StatefulProcessorHandle, TimerValues, ValueState } from './api.js';
import { invalid, stateConverter } from './declare.js';

/** Spark's custom metrics of the operator (TransformWithStateExec's), summed over shards. */
export interface ProcessorMetrics {
  numRegisteredTimers: number;
  numDeletedTimers: number;
  numExpiredTimers: number;
  numValuesRemovedDueToTTLExpiry: number;
}

// ---- one key's state in a batch -----------------------------------------------------------------

export type ProcessorKey = KeyEntry;

export interface KeyEntry {
  /** Its key bytes as text (the batch's and the cache's name for it). */
  id: string;
  kg: number;
  keyBytes: Uint8Array;
  dataKey: Uint8Array;
  key: Row;
  prior: Uint8Array | undefined;
  state: KeyStateData;
  priorTimers: readonly number[];
  priorExpiry: number | null;
  /** Written in this batch (its value may have changed). */
  dirty: boolean;
  /** A GroupState call's verdict on the key, as Spark counts it (transformWithState counts by operation instead). */
  counts?: 'updated' | 'removed';
  /** The state rows its stored value held (stateRows). */
  priorRows: number;
  /** Its rows of the batch, in the order they came. */
  rows?: Row[];
  /** A GroupState's key given an initial state in this batch (it is called even without rows). */
  initialized?: boolean;
}

/** A batch's times, as Spark's TimerValuesImpl gives them in every time mode. */
export interface BatchTimes {
  /** The batch's timestamp: processing-time timers and every time to live go by it. */
  processingTimeMs: number;
  /** The watermark event-time timers fire by and GroupState reports (eviction watermark); undefined without one. */
  watermarkMs: number | undefined;
}

/** Whether a value whose time to live ends at `expiresAtMs` has expired at `nowMs` (Spark's StateTTL.isExpired). */
export const ttlExpired = (expiresAtMs: number | null, nowMs: number): boolean => expiresAtMs !== null && expiresAtMs <= nowMs;

export class ProcessorRun {
  /** The key the processor is being called for (Spark's implicit grouping key). */
  current: KeyEntry | undefined;
  readonly metrics: ProcessorMetrics = { numRegisteredTimers: 0, numDeletedTimers: 0, numExpiredTimers: 0, numValuesRemovedDueToTTLExpiry: 0 };
  /** State rows written and removed by the processor's calls (Spark's numUpdatedStateRows and numRemovedStateRows). */
  updates = 0;
  removals = 0;
  private readonly declared = new Map<string, StateVariable>();

  constructor(
    readonly op: TransformWithStateOp,
    readonly times: BatchTimes,
    readonly task: StateTask,
  ) {
    for (const v of op.variables) this.declared.set(v.name, v);
  }

  private key(what: string): KeyEntry {
    if (this.current === undefined) {
      throw invalid(
        `${what} needs a grouping key: call it from handleInputRows, handleExpiredTimer or handleInitialState, not init or close (Spark's STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE)`,
      );
    }
    return this.current;
  }

  private data(name: string): VariableData | undefined {
    return this.key(`state variable '${name}'`).state.vars.get(name);
  }

  private write(name: string, d: VariableData | undefined): void {
    const k = this.key(`state variable '${name}'`);
    if (d === undefined) k.state.vars.delete(name);
    else k.state.vars.set(name, d);
    k.dirty = true;
  }

  private live = (e: number | null): boolean => !ttlExpired(e, this.times.processingTimeMs);

  private expiry(v: StateVariable): number | null {
    return v.ttlMs === undefined ? null : this.times.processingTimeMs + v.ttlMs;
  }

  /** The variable `name` as init declares it now, checked against what the driver learned at start. */
  private variable(name: string, kind: StateVariable['kind']): StateVariable {
    const v = this.declared.get(name);
    if (v === undefined || v.kind !== kind) {
      throw new SluiceError(
        'STATE_SCHEMA_INCOMPATIBLE',
        `state variable '${name}' (${kind}) was not declared when the query started: a processor's init must declare the same variables in every task`,
      );
    }
    return v;
  }

  // -- ValueState, ListState, MapState --

  valueState<T>(name: string): ValueState<T> {
    const v = this.variable(name, 'value');
    const toEngine = stateConverter(name, v.schema);
    // The user's T is what the variable's schema converts to: the schema is only known at run time.
    const toUser = createToExternalConverter(v.schema) as (value: unknown) => T;
    const get = (): T | null => {
      const d = this.data(name);
      return d?.kind === 'value' && this.live(d.entry[1]) ? toUser(d.entry[0]) : null;
    };
    return {
      exists: () => get() !== null,
      get,
      update: (value: unknown) => {
        this.write(name, { kind: 'value', entry: [toEngine(value), this.expiry(v)] });
        this.updates += 1;
      },
      clear: () => {
        this.write(name, undefined);
        this.removals += 1;
      },
    };
  }

  listState<T>(name: string): ListState<T> {
    const v = this.variable(name, 'list');
    const toEngine = stateConverter(name, v.schema, 'list element');
    const toUser = createToExternalConverter(v.schema) as (value: unknown) => T;
    const stored = (): Expiring[] | undefined => {
      const d = this.data(name);
      return d?.kind === 'list' ? d.items : undefined;
    };
    const live = (): Expiring[] => (stored() ?? []).filter((it) => this.live(it[1]));
    const elements = (values: unknown, what: string): Expiring[] => {
      if (values === null || values === undefined || typeof (values as Iterable<unknown>)[Symbol.iterator] !== 'function' || typeof values === 'string') {
        throw new SluiceError(
          'STATE_VALUE_TYPE_MISMATCH',
          `state variable '${name}': ${what} takes an array of values, got ${describeValue(values)} (Spark's ILLEGAL_STATE_STORE_VALUE.NULL_VALUE)`,
        );
      }
      const exp = this.expiry(v);
      const list = [...(values as Iterable<unknown>)].map((x): Expiring => [toEngine(x), exp]);
      if (list.length === 0) {
        throw new SluiceError(
          'STATE_VALUE_TYPE_MISMATCH',
          `state variable '${name}': ${what} needs at least one value, use clear to empty the list (Spark's ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE)`,
        );
      }
      return list;
    };
    const append = (list: Expiring[]): void => {
      const items = stored();
      if (items) items.push(...list);
      this.write(name, { kind: 'list', items: items ?? list });
      this.updates += list.length;
    };
    return {
      exists: () => live().length > 0,
      // The list as it is when get is called (a clear after it does not empty the iterator).
      get: () =>
        live()
          .map((it) => toUser(it[0]))
          .values(),
      put: (values: unknown) => {
        const list = elements(values, 'put');
        this.write(name, { kind: 'list', items: list });
        // Spark's ListStateImpl.put resets the task's updated rows, then counts the list's.
        this.updates = list.length;
      },
      appendValue: (value: unknown) => append([[toEngine(value), this.expiry(v)]]),
      appendList: (values: unknown) => append(elements(values, 'appendList')),
      clear: () => {
        this.removals += stored()?.length ?? 0;
        this.write(name, undefined);
      },
    };
  }

  mapState<K, V>(name: string): MapState<K, V> {
    const v = this.variable(name, 'map') as Extract<StateVariable, { kind: 'map' }>;
    const keyToEngine = stateConverter(name, v.keySchema, 'map key');
    const toEngine = stateConverter(name, v.schema, 'map value');
    const keyToUser = createToExternalConverter(v.keySchema) as (key: unknown) => K;
    const toUser = createToExternalConverter(v.schema) as (value: unknown) => V;
    type Entry = [unknown, unknown, number | null];
    const stored = (): Map<string, Entry> | undefined => {
      const d = this.data(name);
      return d?.kind === 'map' ? d.entries : undefined;
    };
    const entry = (key: unknown): Entry | undefined => {
      const text = mapKeyText(keyToEngine(key)); // a null key is refused whether or not the map exists
      const e = stored()?.get(text);
      return e !== undefined && this.live(e[2]) ? e : undefined;
    };
    const live = (): Entry[] => [...(stored()?.values() ?? [])].filter((e) => this.live(e[2]));
    return {
      exists: () => live().length > 0,
      getValue: (key: unknown) => {
        const e = entry(key);
        return e === undefined ? null : toUser(e[1]);
      },
      containsKey: (key: unknown) => entry(key) !== undefined,
      updateValue: (key: unknown, value: unknown) => {
        const k = keyToEngine(key);
        const m = stored() ?? new Map<string, Entry>();
        m.set(mapKeyText(k), [k, toEngine(value), this.expiry(v)]);
        this.write(name, { kind: 'map', entries: m });
        this.updates += 1;
      },
      iterator: function* () {
        for (const e of live()) yield [keyToUser(e[0]), toUser(e[1])];
      },
      keys: function* () {
        for (const e of live()) yield keyToUser(e[0]);
      },
      values: function* () {
        for (const e of live()) yield toUser(e[1]);
      },
      removeKey: (key: unknown) => {
        const text = mapKeyText(keyToEngine(key));
        const m = stored();
        m?.delete(text);
        this.write(name, m === undefined || m.size === 0 ? undefined : { kind: 'map', entries: m });
        this.removals += 1;
      },
      clear: () => {
        this.removals += stored()?.size ?? 0;
        this.write(name, undefined);
      },
    };
  }

  // -- timers --

  private timerTime(ms: unknown): number {
    if (this.op.timeMode === 'none') {
      throw invalid("timers need timeMode 'processingTime' or 'eventTime' (Spark's STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE)");
    }
    if (!(typeof ms === 'number' && Number.isSafeInteger(ms) && Math.abs(ms) < TTL_BASE)) {
      throw invalid(`a timer's time is a whole number of milliseconds since the epoch, got ${describeValue(ms)}`);
    }
    return ms;
  }

  registerTimer = (ms: number): void => {
    const t = this.timerTime(ms);
    const k = this.key('registerTimer');
    const timers = k.state.timers;
    // Spark counts every call, a timer already there included (registering it again does nothing).
    this.metrics.numRegisteredTimers += 1;
    if (timers.includes(t)) return;
    timers.push(t);
    timers.sort((a, b) => a - b);
    k.dirty = true;
  };

  deleteTimer = (ms: number): void => {
    const t = this.timerTime(ms);
    const k = this.key('deleteTimer');
    this.metrics.numDeletedTimers += 1;
    const i = k.state.timers.indexOf(t);
    if (i < 0) return;
    k.state.timers.splice(i, 1);
    k.dirty = true;
  };

  listTimers = (): IterableIterator<number> => {
    if (this.op.timeMode === 'none') this.timerTime(0);
    return [...this.key('listTimers').state.timers][Symbol.iterator]();
  };

  timerValues(): TimerValues {
    const { processingTimeMs, watermarkMs } = this.times;
    const values = {
      // Spark's TimerValuesImpl in a streaming query: the batch's timestamp and eviction watermark (0 without one), whatever the time mode.
      getCurrentProcessingTimeMs: () => processingTimeMs,
      getCurrentWatermarkMs: () => watermarkMs ?? 0,
      registerTimer: this.registerTimer,
      deleteTimer: this.deleteTimer,
      listTimers: this.listTimers,
    };
    return { ...values, getCurrentProcessingTimeInMs: values.getCurrentProcessingTimeMs, getCurrentWatermarkInMs: values.getCurrentWatermarkMs };
  }

  /** Whether init is running: state variables are declared then only. */
  initializing = false;

  private declaring(name: string, what: string): void {
    if (!this.initializing) {
      throw invalid(
        `Failed to perform stateful processor operation=${what} with invalid handle state=INITIALIZED: state variable '${name}' must be declared in init (Spark's STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE)`,
      );
    }
  }

  handle(): StatefulProcessorHandle {
    const info = {
      getQueryId: () => this.task.queryId,
      getRunId: () => this.task.runId,
      getBatchId: () => this.task.batchId,
      getPartitionId: () => this.task.partition,
    };
    return {
      getValueState: (name) => {
        this.declaring(name, 'get_value_state');
        return this.valueState(name);
      },
      getListState: (name) => {
        this.declaring(name, 'get_list_state');
        return this.listState(name);
      },
      getMapState: (name) => {
        this.declaring(name, 'get_map_state');
        return this.mapState(name);
      },
      registerTimer: this.registerTimer,
      deleteTimer: this.deleteTimer,
      listTimers: this.listTimers,
      getQueryInfo: () => info,
    };
  }
}
