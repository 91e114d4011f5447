import type { Row } from '../../schema/types.js';
import { createToExternalConverter } from '../../schema/values.js';
import type { StateVariable, TransformWithStateOp } from '../types.js';
import { GroupState, GROUP_STATE } from './groupState.js';
import type { ExpiredTimerInfo } from './api.js';
import { invalid, stateConverter, user, type GroupFunction, type UserProcessor } from './declare.js';
import type { ProcessorRun, KeyEntry } from './handle.js';

// ---- the two APIs ------------------------------------------------------------------------------

export interface Calls {
  open(): void;
  initial(entry: KeyEntry, row: Row): void;
  rows(entry: KeyEntry, rows: IterableIterator<Row>): unknown;
  timer(entry: KeyEntry, time: number): unknown;
  close(): void;
}

/** transformWithState: a processor instance per task, as Spark deserializes one per partition. */
export function processorCalls(op: TransformWithStateOp, Processor: new () => UserProcessor, run: ProcessorRun): Calls {
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
export function groupStateCalls(op: TransformWithStateOp, fn: GroupFunction, run: ProcessorRun): Calls {
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
