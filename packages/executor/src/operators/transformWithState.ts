/**
 * Arbitrary state per key, on the state shard that owns the keys (Spark's TransformWithStateExec
 * and FlatMapGroupsWithStateExec): a user processor is called with each key's rows, then with each
 * timer that is due, and keeps typed state variables per key (processorState.ts has their layout).
 *
 * A batch, on one shard:
 * 1. Rows at or below the late watermark are dropped (event-time mode only, as Spark's).
 * 2. The timers due (at or below the batch's processing time, or its watermark in event-time mode)
 *    and the keys whose values' time to live has ended are found by index ranges: what is due is
 *    read, not what exists. Every key the batch touches is read in one getMany.
 * 3. In the query's first batch, each initial-state row goes to handleInitialState.
 * 4. Each key with rows goes to handleInputRows (flatMapGroupsWithState: the function, with a
 *    GroupState), in the order its rows came.
 * 5. Each due timer, by time, goes to handleExpiredTimer, and is deleted once its rows are taken
 *    (a GroupState's timeout is deleted first, and the function called with hasTimedOut true).
 *    Timers registered in this batch that are already due fire too.
 * 6. Values whose time to live has ended are removed; each changed key is written once, with its
 *    index entries, in the shard's one commit for the batch.
 *
 * The processor is a class (transformWithState) or function (flatMapGroupsWithState) exported by a
 * module each worker imports once, as udf modules are. What it throws fails the query with
 * UDF_FAILED naming the module and export; misuse of the state API is the engine's own error
 * (STATE_VALUE_TYPE_MISMATCH, STATEFUL_PROCESSOR_INVALID_OPERATION).
 */
import {
  dataKey,
  decodeIndexKey,
  decodeKey,
  encodeKey,
  isSluiceError,
  keyGroupOf,
  partitionOfKeyGroup,
  SluiceError,
  type KeyType,
  type ShardChange,
  type ShardStore,
} from '@sluice/state';
import { compileExpr } from '../expressions/compileExpr.js';
import { exprType } from '../expressions/exprTypes.js';
import { describeValue, importUdfModule, udfFailed, udfResultConverter } from '../expressions/udfs.js';
import { decodeGroupBlock } from '../shuffle/shuffleCodec.js';
import type { StateTask } from '../task/messages.js';
import { plainPackr } from '../task/packers.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { createStrictConverter, createToExternalConverter, isAtomicType, typeName } from '../schema/values.js';
import { parseDataType, parseSchema } from '../schema/schema.js';
import {
  allExpiries,
  allTimers,
  decodeKeyState,
  dropExpired,
  emptyKeyState,
  encodeKeyState,
  expiriesUpTo,
  leastExpiry,
  mapKeyText,
  timerIndexKey,
  timersUpTo,
  TTL_BASE,
  ttlIndexKey,
  stateRows,
  type Expiring,
  type KeyStateData,
  type VariableData,
} from './processorState.js';
import { keyString, type StateCache } from './stateCache.js';
import type { StateVariable, TimeMode, TransformWithStateOp } from './types.js';
import { GroupState, GROUP_STATE } from './groupState.js';
import type {
  ExpiredTimerInfo,
  FlatMapGroupsWithStateFunction,
  ListState,
  MapGroupsWithStateFunction,
  MapState,
  StatefulProcessor,
  StatefulProcessorHandle,
  TimerValues,
  ValueState,
} from './processorApi.js';

export interface ProcessorCounters {
  updated: number;
  removed: number;
  dropped: number;
  rowDelta: number;
}

/** Spark's custom metrics of the operator (TransformWithStateExec's), summed over shards. */
export interface ProcessorMetrics {
  numRegisteredTimers: number;
  numDeletedTimers: number;
  numExpiredTimers: number;
  numValuesRemovedDueToTTLExpiry: number;
}

// ---- the processor and its errors ---------------------------------------------------------------

/** A transformWithState processor, as users write it (every method but handleInputRows optional). */
type UserProcessor = StatefulProcessor;

/** The function of flatMapGroupsWithState or mapGroupsWithState. */
type GroupFunction = FlatMapGroupsWithStateFunction | MapGroupsWithStateFunction;

/** The processor's export (its module imported once per worker, as udf modules are). */
export async function loadProcessor(op: TransformWithStateOp): Promise<unknown> {
  const { moduleUrl, exportName } = op.processor;
  const exported = (await importUdfModule(moduleUrl))[exportName];
  if (typeof exported !== 'function') {
    const what = op.api === 'transformWithState' ? 'class' : 'function';
    throw new SluiceError('UDF_NOT_FOUND', `processor module ${moduleUrl} has no exported ${what} '${exportName}'`, { file: moduleUrl });
  }
  return exported;
}

/** Runs user code: the engine's own errors pass, the user's become UDF_FAILED naming the processor. */
function user<T>(op: TransformWithStateOp, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw isSluiceError(e) ? e : udfFailed(e, op.processor);
  }
}

function invalid(message: string): SluiceError {
  return new SluiceError('STATEFUL_PROCESSOR_INVALID_OPERATION', message);
}

/** Engine form of a value for variable `name` of `type`, strictly: else STATE_VALUE_TYPE_MISMATCH naming it. */
function stateConverter(name: string, type: DataType, what = 'value'): (v: unknown) => unknown {
  const strict = createStrictConverter(type, (v, expected, field) => {
    throw new SluiceError(
      'STATE_VALUE_TYPE_MISMATCH',
      `state variable '${name}': ${what} ${describeValue(v)}${field ? ` in field ${field}` : ''} is not ${typeName(expected)}` +
        (field ? ` (the variable holds ${typeName(type)})` : ''),
    );
  });
  return (v) => {
    if (v === null || v === undefined) {
      throw new SluiceError(
        'STATE_VALUE_TYPE_MISMATCH',
        `state variable '${name}': a ${what} cannot be ${String(v)} (Spark's ILLEGAL_STATE_STORE_VALUE.NULL_VALUE); clear it instead`,
      );
    }
    return strict(v);
  };
}

// ---- the handle (processorApi.ts has its types) ------------------------------------------------

/**
 * A state variable's type as a processor or a stateSchema option gives it: a type name, DDL of
 * fields (a struct), or a DataType. `what` names it in errors.
 */
export function stateTypeOf(spec: unknown, what: string): DataType {
  if (typeof spec === 'string') {
    try {
      return parseDataType(spec, what);
    } catch {
      return { struct: parseSchema(spec, what) };
    }
  }
  if (typeof spec === 'object' && spec !== null) return (Array.isArray(spec) ? { struct: spec } : spec) as DataType;
  throw new SluiceError('INVALID_SCHEMA', `${what}: a state variable's schema is a type name, DDL or a DataType, got ${describeValue(spec)}`, { option: what });
}

function ttlOf(name: string, options: { ttlMs?: number } | undefined): number | undefined {
  const ttl = options?.ttlMs;
  if (ttl === undefined) return undefined;
  if (!(typeof ttl === 'number' && Number.isInteger(ttl) && ttl > 0)) {
    // Spark's STATEFUL_PROCESSOR_TTL_DURATION_MUST_BE_POSITIVE.
    throw invalid(
      `state variable '${name}': ttlMs must be a positive whole number of milliseconds, got ${describeValue(ttl)} (STATEFUL_PROCESSOR_TTL_DURATION_MUST_BE_POSITIVE)`,
    );
  }
  return ttl;
}

/**
 * The variables a processor's init declares, found by running it with a handle that only records
 * (the driver does this once at start, as Spark's DriverStatefulProcessorHandleImpl; workers check
 * that their init declares the same).
 */
export function declareVariables(processor: UserProcessor, outputMode: TransformWithStateOp['outputMode'], timeMode: TimeMode): StateVariable[] {
  const vars: StateVariable[] = [];
  const add = <V>(v: StateVariable): V => {
    if (vars.some((d) => d.name === v.name))
      throw invalid(`state variable '${v.name}' is declared twice (Spark's STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED)`);
    vars.push(v);
    return preInitVariable(v.name) as V;
  };
  const named = (name: unknown): string => {
    if (typeof name !== 'string' || name === '') throw invalid(`a state variable needs a name, got ${describeValue(name)}`);
    return name;
  };
  const noTimers = (): never => {
    throw invalid("timers cannot be used in init (Spark's STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE)");
  };
  const typeOf = (name: unknown, schema: unknown): DataType => stateTypeOf(schema, `state variable '${String(name)}'`);
  const handle: StatefulProcessorHandle = {
    getValueState: (name, schema, o) => add(withTtl({ name: named(name), kind: 'value', schema: typeOf(name, schema) }, ttlOf(String(name), o))),
    getListState: (name, schema, o) => add(withTtl({ name: named(name), kind: 'list', schema: typeOf(name, schema) }, ttlOf(String(name), o))),
    getMapState: (name, keySchema, valueSchema, o) =>
      add(withTtl({ name: named(name), kind: 'map', keySchema: typeOf(name, keySchema), schema: typeOf(name, valueSchema) }, ttlOf(String(name), o))),
    registerTimer: noTimers,
    deleteTimer: noTimers,
    listTimers: noTimers,
    getQueryInfo: noTimers,
  };
  processor.init?.(handle, outputMode, timeMode);
  return vars;
}

/** A variable as init sees it on the driver: every operation is refused (Spark's InvalidHandle states). */
function preInitVariable(name: string): unknown {
  return new Proxy(
    {},
    {
      get: (_target, operation) => () => {
        throw invalid(
          `Failed to perform stateful processor operation=${name}.${String(operation)} with invalid handle state=PRE_INIT: state variables are used in handleInputRows, handleExpiredTimer and handleInitialState, not init (Spark's STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE)`,
        );
      },
    },
  );
}

function withTtl<V extends StateVariable>(v: V, ttlMs: number | undefined): V {
  return ttlMs === undefined ? v : { ...v, ttlMs };
}

// ---- one key's state in a batch -----------------------------------------------------------------

export type ProcessorKey = KeyEntry;

interface KeyEntry {
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
interface BatchTimes {
  /** The batch's timestamp: processing-time timers and every time to live go by it. */
  processingTimeMs: number;
  /** The watermark event-time timers fire by and GroupState reports (eviction watermark); undefined without one. */
  watermarkMs: number | undefined;
}

/** Whether a value whose time to live ends at `expiresAtMs` has expired at `nowMs` (Spark's StateTTL.isExpired). */
export const ttlExpired = (expiresAtMs: number | null, nowMs: number): boolean => expiresAtMs !== null && expiresAtMs <= nowMs;

class ProcessorRun {
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

// ---- the batch ----------------------------------------------------------------------------------

/** An initial state's rows (engine form) as the first batch's state tasks carry them. */
export function packInitialState(rows: readonly Row[]): Uint8Array {
  return plainPackr.pack(rows);
}

/** The due timers of the shard's index: [time, data key text]. */
async function dueTimers(store: ShardStore, upTo: number | undefined): Promise<Array<{ time: number; kg: number; key: Uint8Array }>> {
  if (upTo === undefined) return [];
  const entries = await store.rangeKeys(...timersUpTo(upTo));
  return entries.map((k) => {
    const { timeMs, kg, key } = decodeIndexKey(k);
    return { time: timeMs, kg, key: new Uint8Array(key) };
  });
}

export async function transformWithState(
  task: StateTask,
  op: TransformWithStateOp,
  store: ShardStore,
  cache: StateCache,
  changes: ShardChange[],
  c: ProcessorCounters,
): Promise<{ rows: Row[]; metrics: ProcessorMetrics }> {
  const exported = await loadProcessor(op);
  const schema = task.stateInputSchema;
  const keyTypes = op.keys.map((k) => exprType(k, schema)) as KeyType[];
  const keyToUser = op.keyNames.map((name, i) => ({ name, convert: createToExternalConverter(keyTypes[i] as DataType) }));
  const keyObject = (values: unknown[]): Row => {
    const key: Row = {};
    keyToUser.forEach((k, i) => {
      key[k.name] = k.convert(values[i]);
    });
    return key;
  };
  const eventTime = op.timeMode === 'eventTime' && task.hasWatermark ? op.eventTimeColumn : null;
  const times: BatchTimes = { processingTimeMs: task.batchTimestampMs ?? Date.now(), watermarkMs: task.hasWatermark ? task.watermarkMs : undefined };
  const run = new ProcessorRun(op, times, task);
  // A GroupState key is one row (its value, or a timeout alone); a processor's, its variables' rows.
  const rowCount = op.api === 'transformWithState' ? stateRows : (s: KeyStateData) => (s.vars.size > 0 || s.timers.length > 0 ? 1 : 0);
  const ttl = op.variables.some((v) => v.ttlMs !== undefined);
  /** An entry's stored value is now `value` (undefined: none): what it held, and the cache's share. */
  const settle = (e: KeyEntry, value: Uint8Array | undefined): void => {
    cache.processorBytes -= decodedBytes(e.prior);
    e.prior = value;
    e.priorTimers = e.state.timers.length > 0 ? [...e.state.timers] : NO_TIMERS;
    e.priorExpiry = ttl ? leastExpiry(e.state) : null;
    e.priorRows = rowCount(e.state);
    if (value === undefined) {
      decoded.delete(e.id);
      return;
    }
    decoded.set(e.id, e);
    cache.processorBytes += decodedBytes(value);
  };

  // 1. Rows by key, late ones dropped. A key's bytes decide its key group, so they name it alone;
  // its data key is made once.
  // A key the shard's worker keeps decoded is that same entry, batch after batch (a failed task
  // drops the whole cache, so an entry never holds what was not committed).
  const entries = new Map<string, KeyEntry>();
  cache.processor ??= new Map<string, KeyEntry>();
  const decoded = cache.processor;
  const entryOf = (kg: number, keyBytes: Uint8Array): KeyEntry => {
    const id = keyString(keyBytes);
    let e = entries.get(id);
    if (e === undefined) {
      e = decoded.get(id);
      if (e === undefined) {
        const bytes = new Uint8Array(keyBytes);
        e = {
          id,
          kg,
          keyBytes: bytes,
          dataKey: dataKey(kg, bytes),
          key: NO_KEY,
          prior: undefined,
          state: NO_STATE,
          priorTimers: NO_TIMERS,
          priorExpiry: null,
          dirty: false,
          priorRows: 0,
        };
      } else {
        e.rows = undefined;
        e.dirty = false;
        e.counts = undefined;
        e.initialized = undefined;
      }
      entries.set(id, e);
    }
    return e;
  };
  const late = task.lateWatermarkMs ?? task.watermarkMs;
  for (const block of task.blocks) {
    for (const [kg, keyBytes, rows] of decodeGroupBlock(block.data)) {
      let kept = rows;
      if (eventTime !== null) {
        kept = rows.filter((r) => {
          const t = r[eventTime] as number | null;
          return t === null || t === undefined || t > late;
        });
        c.dropped += rows.length - kept.length;
        if (kept.length === 0) continue;
      }
      const e = entryOf(kg, keyBytes);
      if (e.rows === undefined) e.rows = kept;
      else for (const r of kept) e.rows.push(r);
    }
  }

  // 2. What is due: timers by the time mode's clock, expiries by processing time.
  const timerClock = op.timeMode === 'processingTime' ? times.processingTimeMs : op.timeMode === 'eventTime' ? times.watermarkMs : undefined;
  const fromIndex = await dueTimers(store, timerClock === undefined ? undefined : timerClock - timerSlack(op));
  for (const t of fromIndex) entryOf(t.kg, t.key);
  if (ttl) for (const k of await store.rangeKeys(...expiriesUpTo(times.processingTimeMs))) entryOf(decodeIndexKey(k).kg, new Uint8Array(decodeIndexKey(k).key));

  // 3. Initial state rows of this shard's partitions (the query's first batch).
  const initial: Array<{ entry: KeyEntry; row: Row }> = [];
  if (op.initialState?.rows) {
    const s = op.initialState;
    const keys = s.keys.map((k) => compileExpr(k, s.schema));
    const partitions = new Set(task.partitions);
    for (const row of plainPackr.unpack(s.rows as Uint8Array) as Row[]) {
      const keyBytes = encodeKey(
        keys.map((k) => normalize(k(row))),
        keyTypes,
      );
      const kg = keyGroupOf(keyBytes, task.layout.keyGroups);
      if (!partitions.has(partitionOfKeyGroup(kg, task.layout))) continue;
      initial.push({ entry: entryOf(kg, keyBytes), row });
    }
  }

  // 2b. Every key the batch touches, read once: the worker's decoded entries, else one getMany.
  const all = [...entries.values()];
  const unknown = all.filter((e) => e.key === NO_KEY);
  const stored = await store.getMany(unknown.map((e) => e.dataKey));
  unknown.forEach((e, i) => {
    e.key = Object.freeze(keyObject(decodeKey(e.keyBytes, keyTypes)));
    const value = stored[i];
    e.state = value === undefined ? emptyKeyState() : decodeKeyState(value);
    settle(e, value);
  });

  const rows: Row[] = [];
  const toOutput = udfResultConverter({ struct: op.outputSchema }, op.processor);
  const emit = (out: unknown): void => {
    if (out === null || out === undefined) return;
    if (typeof (out as Iterable<unknown>)[Symbol.iterator] !== 'function' || typeof out === 'string') {
      throw new SluiceError(
        'UDF_RESULT_TYPE_MISMATCH',
        `processor '${op.processor.exportName}' of ${op.processor.moduleUrl} returned ${describeValue(out)}, not an iterable of rows`,
        {
          file: op.processor.moduleUrl,
        },
      );
    }
    // Taking the rows runs the processor (a generator's body): its errors are the user's.
    user(op, () => {
      for (const r of out as Iterable<unknown>) {
        if (r === null || typeof r !== 'object' || Array.isArray(r) || r instanceof Date) {
          throw new SluiceError(
            'UDF_RESULT_TYPE_MISMATCH',
            `processor '${op.processor.exportName}' of ${op.processor.moduleUrl} emitted ${describeValue(r)}, not a row (an object of the output schema's fields)`,
            {
              file: op.processor.moduleUrl,
            },
          );
        }
        rows.push(toOutput(r) as Row);
      }
    });
  };
  // Engine rows are what user code sees unless a column needs converting (a TIMESTAMP becomes a Date).
  const external = externalRows(schema);
  const userRows = (list: Row[]): IterableIterator<Row> => (external === undefined ? list : list.map(external)).values();

  const calls =
    op.api === 'transformWithState' ? processorCalls(op, exported as new () => UserProcessor, run) : groupStateCalls(op, exported as GroupFunction, run);
  calls.open();
  try {
    // 3b. Initial state.
    for (const { entry, row } of initial) {
      run.current = entry;
      const toUser = externalRows(op.initialState?.schema as Schema);
      calls.initial(entry, toUser === undefined ? row : toUser(row));
    }
    // 4. Keys with rows, in the order their rows came.
    for (const entry of all) {
      if (entry.rows === undefined) continue;
      run.current = entry;
      emit(calls.rows(entry, userRows(entry.rows)));
    }
    // A GroupState's keys with an initial state and no rows are called too, as Spark's cogroup does.
    for (const entry of all) {
      if (entry.rows !== undefined || entry.initialized !== true) continue;
      run.current = entry;
      emit(calls.rows(entry, userRows([])));
    }
    // 5. Due timers, by time: those in the index that are still registered, and those registered in this batch.
    if (timerClock !== undefined) {
      // A key's timers are distinct times and every key is read once: no timer comes twice.
      const due: Array<{ time: number; entry: KeyEntry }> = [];
      for (const e of all) for (const t of e.state.timers) if (timerDue(op, t, timerClock)) due.push({ time: t, entry: e });
      due.sort((a, b) => a.time - b.time || Buffer.compare(a.entry.dataKey, b.entry.dataKey));
      for (const { time, entry } of due) {
        if (!entry.state.timers.includes(time)) continue; // deleted by an earlier timer of the batch
        run.metrics.numExpiredTimers += 1;
        run.current = entry;
        if (op.api === 'transformWithState') {
          emit(calls.timer(entry, time));
          // Spark deletes a fired timer once its handler's rows are taken (listTimers still has it there).
          run.deleteTimer(time);
        } else {
          entry.state.timers.splice(entry.state.timers.indexOf(time), 1);
          entry.dirty = true;
          emit(calls.timer(entry, time));
        }
      }
    }
  } finally {
    run.current = undefined;
  }
  calls.close();

  // 6. Expired values go; each changed key is written once, with its index entries.
  for (const e of all) {
    const removed = ttl ? dropExpired(e.state, (x) => ttlExpired(x, times.processingTimeMs)) : 0;
    if (removed > 0) {
      run.metrics.numValuesRemovedDueToTTLExpiry += removed;
      run.removals += removed;
      e.dirty = true;
    }
    if (e.dirty) settle(e, writeKey(e, changes, c, rowCount) ?? undefined);
  }
  // Over its budget, the cache is dropped whole (LevelDB holds everything).
  if (cache.processorBytes > cache.budgetBytes) {
    cache.processor = undefined;
    cache.processorBytes = 0;
  }
  // transformWithState counts its state operations, as Spark's handle does.
  if (op.api === 'transformWithState') {
    c.updated += run.updates;
    c.removed += run.removals;
  }
  return { rows, metrics: run.metrics };
}

/** Whether timer `t` is due at `clock`: a transformWithState timer at or before it; a GroupState timeout strictly before (Spark's FlatMapGroupsWithStateExec). */
function timerDue(op: TransformWithStateOp, t: number, clock: number): boolean {
  return op.api === 'transformWithState' ? t <= clock : t < clock;
}

/** How far below the clock the index is read: timeouts are due strictly before it. */
function timerSlack(op: TransformWithStateOp): number {
  return op.api === 'transformWithState' ? 0 : 1;
}

const normalize = (v: unknown): unknown => (v === 0 ? 0 : v === undefined ? null : v);

const externalConverters = new WeakMap<Schema, { convert: ((row: Row) => Row) | undefined }>();

/** Engine rows of `schema` to what user code sees; undefined when no column needs converting. */
function externalRows(schema: Schema): ((row: Row) => Row) | undefined {
  let c = externalConverters.get(schema);
  if (c === undefined) {
    const plain = schema.every((f) => isAtomicType(f.type) && f.type !== 'timestamp' && f.type !== 'date');
    const fields = schema.map((f) => ({ name: f.name, convert: createToExternalConverter(f.type) }));
    c = {
      convert: plain
        ? undefined
        : (r) => {
            const out: Row = {};
            for (const f of fields) out[f.name] = f.convert(r[f.name]);
            return out;
          },
    };
    externalConverters.set(schema, c);
  }
  return c.convert;
}

/** Writes a key's new value (returned; null: the key is gone) and the changes of its index entries. */
function writeKey(e: KeyEntry, changes: ShardChange[], c: ProcessorCounters, rowsOf: (s: KeyStateData) => number): Uint8Array | null {
  const value = encodeKeyState(e.state);
  const prior = e.prior ?? null;
  if (e.counts === 'removed') c.removed += 1;
  else if (e.counts === 'updated') c.updated += 1;
  if (value === null && prior === null) return null;
  changes.push({ key: e.dataKey, value, prior });
  c.rowDelta += (value === null ? 0 : rowsOf(e.state)) - e.priorRows;
  const now = new Set(e.state.timers);
  const before = new Set(e.priorTimers);
  for (const t of before) if (!now.has(t)) changes.push({ key: timerIndexKey(t, e.kg, e.keyBytes), value: null, prior: EMPTY });
  for (const t of now) if (!before.has(t)) changes.push({ key: timerIndexKey(t, e.kg, e.keyBytes), value: EMPTY, prior: null });
  const expiry = value === null ? null : leastExpiry(e.state);
  if (expiry !== e.priorExpiry) {
    if (e.priorExpiry !== null) changes.push({ key: ttlIndexKey(e.priorExpiry, e.kg, e.keyBytes), value: null, prior: EMPTY });
    if (expiry !== null) changes.push({ key: ttlIndexKey(expiry, e.kg, e.keyBytes), value: EMPTY, prior: null });
  }
  return value;
}

const EMPTY = new Uint8Array(0);
const NO_TIMERS: readonly number[] = [];
/** Placeholders of an entry until the batch reads its key (every entry gets its own before any use). */
const NO_KEY: Row = Object.freeze({});
const NO_STATE: KeyStateData = Object.freeze({ timers: [], vars: new Map() });
/**
 * Memory a decoded key takes, for the cache's budget: its entry's objects (the entry, its key bytes
 * and data key, key object, state and its map, measured at about 700 bytes for a one-LONG state),
 * and its values, decoded, at about 8 times their stored bytes.
 */
const DECODED_BYTES_PER_KEY = 768;
const DECODED_BYTES_PER_BYTE = 8;
const decodedBytes = (value: Uint8Array | undefined): number => (value === undefined ? 0 : DECODED_BYTES_PER_KEY + value.length * DECODED_BYTES_PER_BYTE);

/**
 * When the shard next needs a batch that has no data (processing-time mode): its least timer, or
 * the least expiry of a value with a time to live, read after the batch's commit; undefined: none.
 */
export async function processorWakeMs(store: ShardStore, op: TransformWithStateOp): Promise<number | undefined> {
  if (op.timeMode !== 'processingTime') return undefined;
  let wake: number | undefined;
  const [first] = await store.rangeKeys(...allTimers(), 1);
  if (first !== undefined) wake = decodeIndexKey(first).timeMs + timerSlack(op);
  if (op.variables.some((v) => v.ttlMs !== undefined)) {
    const [ttl] = await store.rangeKeys(...allExpiries(), 1);
    if (ttl !== undefined) {
      const at = decodeIndexKey(ttl).timeMs - TTL_BASE;
      wake = wake === undefined ? at : Math.min(wake, at);
    }
  }
  return wake;
}

// ---- the two APIs ------------------------------------------------------------------------------

interface Calls {
  open(): void;
  initial(entry: KeyEntry, row: Row): void;
  rows(entry: KeyEntry, rows: IterableIterator<Row>): unknown;
  timer(entry: KeyEntry, time: number): unknown;
  close(): void;
}

/** transformWithState: a processor instance per task, as Spark deserializes one per partition. */
function processorCalls(op: TransformWithStateOp, Processor: new () => UserProcessor, run: ProcessorRun): Calls {
  let p: UserProcessor | undefined;
  const values = run.timerValues();
  return {
    open() {
      p = user(op, () => new Processor());
      run.initializing = true;
      try {
        user(op, () => p?.init?.(run.handle(), op.outputMode, op.timeMode));
      } finally {
        run.initializing = false;
      }
    },
    initial(entry, row) {
      if (typeof p?.handleInitialState !== 'function') {
        throw invalid(`processor '${op.processor.exportName}' has no handleInitialState, which an initialState needs`);
      }
      user(op, () => p?.handleInitialState?.(entry.key, row, values));
    },
    rows: (entry, rows) => user(op, () => p?.handleInputRows(entry.key, rows, values)),
    timer(entry, time) {
      if (typeof p?.handleExpiredTimer !== 'function') return undefined;
      const expired: ExpiredTimerInfo = { expiryTimeMs: time, getExpiryTimeInMs: () => time };
      return user(op, () => p?.handleExpiredTimer?.(entry.key, values, expired));
    },
    close() {
      user(op, () => p?.close?.());
    },
  };
}

/**
 * flatMapGroupsWithState and mapGroupsWithState: the function, called with a GroupState per key.
 * What the call did is applied once its rows are all taken (the function may update state as it
 * yields them), as Spark's FlatMapGroupsWithStateExec does: a removal without a timeout deletes
 * the key; else the key is written when its state was updated or removed, or its timeout changed.
 */
function groupStateCalls(op: TransformWithStateOp, fn: GroupFunction, run: ProcessorRun): Calls {
  const variable = op.variables[0] as StateVariable;
  const toEngine = stateConverter(GROUP_STATE, variable.schema);
  const toUser = createToExternalConverter(variable.schema);
  const call = (entry: KeyEntry, rows: IterableIterator<Row>, timedOutAt: number | undefined): unknown => {
    const d = entry.state.vars.get(GROUP_STATE);
    const state = new GroupState(
      d?.kind === 'value' ? { value: toUser(d.entry[0]) } : undefined,
      {
        timeMode: op.timeMode,
        timedOut: timedOutAt !== undefined,
        processingTimeMs: run.times.processingTimeMs,
        watermarkMs: run.times.watermarkMs,
        hasWatermark: op.eventTimeColumn !== null,
      },
      toEngine,
    );
    const out = user(op, () => {
      const r = fn(entry.key, rows, state);
      if (op.api === 'mapGroupsWithState') return [r];
      // Spark's NullPointerException, a user function error.
      if (r === null || r === undefined) throw new TypeError(`${op.processor.exportName} returned ${String(r)}, not an iterable of rows`);
      return [...(r as Iterable<Row>)];
    });
    const before = timedOutAt ?? entry.state.timers[0];
    const timeout = state.timeoutMs;
    if (state.removed && timeout === undefined) {
      entry.state.vars.delete(GROUP_STATE);
      entry.state.timers = [];
      entry.dirty = true;
      entry.counts = 'removed';
    } else if (state.updatedValue !== undefined || state.removed || timeout !== before) {
      if (state.removed) entry.state.vars.delete(GROUP_STATE);
      else if (state.updatedValue !== undefined) entry.state.vars.set(GROUP_STATE, { kind: 'value', entry: [state.updatedValue, null] });
      // The timeout is reset at every call: what this call set, or none.
      entry.state.timers = timeout === undefined ? [] : [timeout];
      entry.dirty = true;
      entry.counts = 'updated';
    }
    return out;
  };
  return {
    open() {},
    initial(entry, row) {
      if (entry.initialized === true) {
        // Spark's FlatMapGroupsWithStateExec.foundDuplicateInitialKeyException.
        throw invalid(
          'The initial state provided contained multiple rows(state) with the same key. Make sure to de-duplicate the initial state before passing it.',
        );
      }
      entry.initialized = true;
      const column = op.initialState?.stateColumn;
      // Stored as it is, not counted as an update (Spark's putState before the call).
      entry.state.vars.set(GROUP_STATE, { kind: 'value', entry: [toEngine(column === undefined ? row : row[column]), null] });
      entry.dirty = true;
    },
    rows: (entry, rows) => call(entry, rows, undefined),
    timer: (entry, time) => call(entry, [][Symbol.iterator](), time),
    close() {},
  };
}
