/**
 * A processor as the engine loads and declares it: its module's export, its errors (a user's
 * throw is UDF_FAILED naming the module), and the state variables its init declares (the driver
 * runs init once to learn them; each worker checks its declaration against the plan's).
 */
import { isSluiceError, SluiceError } from '@sluice/state';
import { describeValue, importUdfModule, udfFailed } from '../../expressions/udfs.js';
import type { DataType } from '../../schema/types.js';
import { createStrictConverter, typeName } from '../../schema/values.js';
import { parseDataType, parseSchema } from '../../schema/schema.js';
import type { StateVariable, TimeMode, TransformWithStateOp } from '../types.js';
import type { FlatMapGroupsWithStateFunction, MapGroupsWithStateFunction, StatefulProcessor, StatefulProcessorHandle } from './api.js';

// ---- the processor and its errors ---------------------------------------------------------------

/** A transformWithState processor, as users write it (every method but handleInputRows optional). */
export type UserProcessor = StatefulProcessor;

/** The function of flatMapGroupsWithState or mapGroupsWithState. */
export type GroupFunction = FlatMapGroupsWithStateFunction | MapGroupsWithStateFunction;

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
export function user<T>(op: TransformWithStateOp, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw isSluiceError(e) ? e : udfFailed(e, op.processor);
  }
}

export function invalid(message: string): SluiceError {
  return new SluiceError('STATEFUL_PROCESSOR_INVALID_OPERATION', message);
}

/** Engine form of a value for variable `name` of `type`, strictly: else STATE_VALUE_TYPE_MISMATCH naming it. */
export function stateConverter(name: string, type: DataType, what = 'value'): (v: unknown) => unknown {
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

// ---- the variables a processor declares (api.ts has their types) -------------------------------

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

export function ttlOf(name: string, options: { ttlMs?: number } | undefined): number | undefined {
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
export function preInitVariable(name: string): unknown {
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

export function withTtl<V extends StateVariable>(v: V, ttlMs: number | undefined): V {
  return ttlMs === undefined ? v : { ...v, ttlMs };
}
