/**
 * Arbitrary state per key, on the state shard that owns the keys (Spark's TransformWithStateExec
 * and FlatMapGroupsWithStateExec): a user processor is called with each key's rows, then with each
 * timer that is due, and keeps typed state variables per key (state.ts has their layout).
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
import { dataKey, decodeIndexKey, decodeKey, encodeKey, keyGroupOf, partitionOfKeyGroup, SluiceError, type KeyType, type ShardStore } from '@sluice/state';
import { compileExpr } from '../../expressions/compileExpr.js';
import { exprType } from '../../expressions/exprTypes.js';
import { describeValue, udfResultConverter } from '../../expressions/udfs.js';
import { decodeGroupBlock } from '../../shuffle/shuffleCodec.js';
import type { DataType, Row, Schema } from '../../schema/types.js';
import { createToExternalConverter, isAtomicType } from '../../schema/values.js';
import {
  allExpiries,
  allTimers,
  decodeKeyState,
  dropExpired,
  emptyKeyState,
  encodeKeyState,
  expiriesUpTo,
  leastExpiry,
  timerIndexKey,
  timersUpTo,
  TTL_BASE,
  ttlIndexKey,
  stateRows,
  type KeyStateData,
} from './state.js';
import { keyString } from '../stateCache.js';
import { forEachKeyPage, type StateContext } from '../stateContext.js';
import type { StateWriter } from '../stateWriter.js';
import type { TransformWithStateOp } from '../types.js';
import { loadProcessor, user, type GroupFunction, type UserProcessor } from './declare.js';
import { ProcessorRun, ttlExpired, type BatchTimes, type KeyEntry } from './handle.js';
import { groupStateCalls, processorCalls } from './calls.js';
import { initialStateRows } from './plan.js';

// ---- the batch ----------------------------------------------------------------------------------

/** The keys of index entries in `range` (due timers, or ended times to live), a page at a time. */
async function forEachIndexedKey(store: ShardStore, range: [Uint8Array, Uint8Array], fn: (kg: number, key: Uint8Array) => void): Promise<void> {
  await forEachKeyPage(store, range, async (page) => {
    for (const ik of page) {
      const { kg, key } = decodeIndexKey(ik);
      fn(kg, new Uint8Array(key));
    }
  });
}

export async function transformWithState(ctx: StateContext, op: TransformWithStateOp): Promise<Row[]> {
  const { task, store, cache, counters: c, writer } = ctx;
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
  // Late rows drop in event-time mode (the operator uses the watermark then).
  const eventTime = ctx.watermark !== undefined ? op.eventTimeColumn : null;
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
  for (const block of task.blocks) {
    for (const [kg, keyBytes, rows] of decodeGroupBlock(block.data)) {
      let kept = rows;
      if (eventTime !== null) {
        kept = rows.filter((r) => !ctx.isLate(r[eventTime] as number | null));
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
  if (timerClock !== undefined) await forEachIndexedKey(store, timersUpTo(timerClock - timerSlack(op)), entryOf);
  if (ttl) await forEachIndexedKey(store, expiriesUpTo(times.processingTimeMs), entryOf);

  // 3. Initial state rows of this shard's partitions (the query's first batch).
  const initial: Array<{ entry: KeyEntry; row: Row }> = [];
  if (op.initialState?.rows) {
    const s = op.initialState;
    const keys = s.keys.map((k) => compileExpr(k, s.schema));
    const partitions = new Set(task.partitions);
    for (const row of initialStateRows(s.rows as Uint8Array)) {
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
  const stored = await writer.read(unknown.map((e) => e.dataKey));
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
    if (e.dirty) settle(e, writeKey(e, writer, ctx, rowCount) ?? undefined);
  }
  // transformWithState counts its state operations, as Spark's handle does.
  if (op.api === 'transformWithState') {
    c.updated += run.updates;
    c.removed += run.removals;
  }
  ctx.customMetrics = { ...run.metrics };
  return rows;
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
function writeKey(e: KeyEntry, writer: StateWriter, ctx: StateContext, rowsOf: (s: KeyStateData) => number): Uint8Array | null {
  const c = ctx.counters;
  const rows = rowsOf(e.state);
  const value = encodeKeyState(e.state, rows);
  if (e.counts === 'removed') c.removed += 1;
  else if (e.counts === 'updated') c.updated += 1;
  if (value === null && e.prior === undefined) return null;
  // The entry records the value the shard holds (read in this batch, or kept decoded since).
  writer.cached(e.dataKey, e.prior ?? null);
  if (value === null) writer.delete(e.dataKey);
  else writer.put(e.dataKey, value);
  c.rowDelta += (value === null ? 0 : rows) - e.priorRows;
  const now = new Set(e.state.timers);
  const before = new Set(e.priorTimers);
  for (const t of before) if (!now.has(t)) writer.removeIndex(timerIndexKey(t, e.kg, e.keyBytes));
  for (const t of now) if (!before.has(t)) writer.addIndex(timerIndexKey(t, e.kg, e.keyBytes));
  const expiry = value === null ? null : leastExpiry(e.state);
  if (expiry !== e.priorExpiry) {
    if (e.priorExpiry !== null) writer.removeIndex(ttlIndexKey(e.priorExpiry, e.kg, e.keyBytes));
    if (expiry !== null) writer.addIndex(ttlIndexKey(expiry, e.kg, e.keyBytes));
  }
  return value;
}

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
