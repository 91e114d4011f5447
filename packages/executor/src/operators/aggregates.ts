/**
 * Aggregate functions of groupBy(...).agg(...) as partial aggregation buffers: the map side
 * updates a buffer per group and row, the reduce side merges buffers from many tasks and batches
 * into the state, and finalizes them into output values. Buffers cross threads and live in the
 * state store, so they are plain msgpack-able values:
 *
 *   count(*), count(x)   number            rows (non-null values of x)
 *   sum(x)               number | null     null until a non-null value arrives
 *   avg(x)               [sum, count]
 *   min(x), max(x)       value | null      in x's type
 *
 * SQL semantics: every aggregate skips nulls except count(*); sum, avg, min and max of no
 * non-null value are null, and count of nothing is 0.
 */
import { SluiceError } from '@sluice/state';
import { compileExpr, type Evaluator } from '../expressions/compileExpr.js';
import { exprNullable, exprType, rejectSlidingWindow, WINDOW_TYPE } from '../expressions/exprTypes.js';
import { exprSql } from '../expressions/exprNames.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { Expr } from '../expressions/types.js';
import type { AggSpec, StatefulOp } from './types.js';
import type { DataType, Schema } from '../schema/types.js';
import { createCast, isStructType, typeName } from '../schema/values.js';
import { compareValues } from '../schema/ordering.js';
import { GENERIC_AGGREGATES, genericAggregator, genericTypes, type GenericBuffer } from './moreAggregates.js';

export { compareCodePoints, compareNumbers, compareValues } from '../schema/ordering.js';

export type AggBuffer = number | string | boolean | null | [number, number] | GenericBuffer;

/**
 * The operations of one aggregate. `update` and `merge` may reuse their first argument (an avg
 * buffer is updated in place), so a buffer has one owner at a time.
 */
export interface Aggregator {
  /** Type of the finalized value. */
  resultType: DataType;
  /** Type that `update` takes values in (the argument after Spark's implicit casts). */
  inputType: DataType;
  newBuffer(): AggBuffer;
  update(buffer: AggBuffer, value: unknown): AggBuffer;
  merge(a: AggBuffer, b: AggBuffer): AggBuffer;
  finalize(buffer: AggBuffer): unknown;
}

function specSql(spec: AggSpec): string {
  return `${spec.fn}(${spec.arg === null ? '*' : exprSql(spec.arg)})`;
}

function mismatch(spec: AggSpec, why: string): SluiceError {
  return new SluiceError('DATATYPE_MISMATCH', `cannot resolve '${specSql(spec)}' due to data type mismatch: ${why}`, { column: spec.name });
}

/** The argument's type, after the implicit cast that sum and avg apply to text (Spark non-ANSI). */
function inputTypeOf(spec: AggSpec, schema: Schema): DataType {
  if (spec.arg === null) {
    if (spec.fn !== 'count') throw mismatch(spec, `${spec.fn} needs an argument`);
    return 'null';
  }
  const t = exprType(spec.arg, schema);
  if (GENERIC_AGGREGATES.has(spec.fn)) {
    const typed = genericTypes(spec, t);
    if (typeof typed === 'string') throw mismatch(spec, typed);
    return typed.input;
  }
  switch (spec.fn) {
    case 'count':
      return t;
    case 'sum':
    case 'avg':
      if (t === 'int' || t === 'long' || t === 'double') return t;
      if (t === 'string' || t === 'null') return 'double';
      throw mismatch(spec, `${spec.fn} needs a number, not ${typeName(t)}`);
    default: // min, max
      if (typeof t === 'object') throw mismatch(spec, `${spec.fn} of a ${typeName(t)} is not supported`);
      return t;
  }
}

/** The output type of an aggregate: LONG counts, LONG or DOUBLE sums, DOUBLE averages, min/max keep the type. */
export function aggResultType(spec: AggSpec, schema: Schema): DataType {
  const t = inputTypeOf(spec, schema);
  if (GENERIC_AGGREGATES.has(spec.fn)) return (genericTypes(spec, exprType(spec.arg as Expr, schema)) as { result: DataType }).result;
  switch (spec.fn) {
    case 'count':
      return 'long';
    case 'sum':
      return t === 'double' ? 'double' : 'long';
    case 'avg':
      return 'double';
    default: // min, max
      return t;
  }
}

/** Whether an aggregate's result can be null: not a count, nor a collection of values (empty when there are none). */
export function aggNullable(spec: AggSpec): boolean {
  return !['count', 'approx_count_distinct', 'collect_list', 'collect_set'].includes(spec.fn);
}

const plusNullable = (a: AggBuffer, b: AggBuffer): AggBuffer => (a === null ? b : b === null ? a : (a as number) + (b as number));

/** The buffer operations of `spec` over rows of `schema` (the schema entering the aggregation). */
export function aggregatorOf(spec: AggSpec, schema: Schema): Aggregator {
  const inputType = inputTypeOf(spec, schema);
  const resultType = aggResultType(spec, schema);
  const common = { inputType, resultType };
  if (GENERIC_AGGREGATES.has(spec.fn)) return genericAggregator(spec, inputType, resultType) as Aggregator;
  switch (spec.fn) {
    case 'count': {
      const countStar = spec.arg === null;
      return {
        ...common,
        newBuffer: () => 0,
        update: countStar ? (b) => (b as number) + 1 : (b, v) => (v == null ? b : (b as number) + 1),
        merge: (a, b) => (a as number) + (b as number),
        finalize: (b) => b,
      };
    }
    case 'sum':
      return {
        ...common,
        newBuffer: () => null,
        update: (b, v) => (v == null ? b : b === null ? (v as number) : (b as number) + (v as number)),
        merge: plusNullable,
        finalize: (b) => b,
      };
    case 'avg':
      return {
        ...common,
        newBuffer: () => [0, 0],
        update: (b, v) => {
          if (v == null) return b;
          const s = b as [number, number];
          s[0] += v as number;
          s[1] += 1;
          return s;
        },
        merge: (a, b) => {
          const x = a as [number, number];
          const y = b as [number, number];
          return [x[0] + y[0], x[1] + y[1]];
        },
        finalize: (b) => {
          const [s, n] = b as [number, number];
          return n === 0 ? null : s / n;
        },
      };
    default: {
      // min and max
      const sign = spec.fn === 'min' ? -1 : 1;
      // Keeps `a` on ties, so the first value seen wins (NaN = NaN).
      const pick = (a: AggBuffer, b: AggBuffer): AggBuffer => (a === null ? b : b === null ? a : compareValues(inputType, b, a) * sign > 0 ? b : a);
      return {
        ...common,
        newBuffer: () => null,
        update: (b, v) => pick(b, v == null ? null : (v as AggBuffer)),
        merge: pick,
        finalize: (b) => b,
      };
    }
  }
}

/** Evaluates an aggregate's argument per row, cast to its input type; null for count(*). */
export function compileAggInput(spec: AggSpec, schema: Schema, udfs: UdfRegistry = new Map()): Evaluator | null {
  if (spec.arg === null) return null;
  const from = exprType(spec.arg, schema);
  const to = inputTypeOf(spec, schema);
  const ev = compileExpr(spec.arg, schema, udfs);
  if (from !== 'string' || to !== 'double') return ev;
  const cast = createCast(from, to)!;
  return (row) => {
    const v = ev(row);
    return v == null ? null : cast(v);
  };
}

/** A grouping key that is a window (under any aliases), which the map side expands per row. */
export function windowOfKey(key: Expr): Extract<Expr, { op: 'window' }> | undefined {
  let e = key;
  while (e.op === 'alias') e = e.expr;
  return e.op === 'window' ? e : undefined;
}

/** A grouping key that is a session window (under any aliases): session_window(time, gap). */
export function sessionOfKey(key: Expr): Extract<Expr, { op: 'call' }> | undefined {
  let e = key;
  while (e.op === 'alias') e = e.expr;
  return e.op === 'call' && e.fn === 'session_window' ? e : undefined;
}

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

/**
 * Rows out of an aggregation: the keys, named by keyNames (a window key is a struct), then the
 * aggregates by name. A window key is never null: rows without a time belong to no window.
 */
export function aggregateOutputSchema(op: AggregateOp, inputSchema: Schema): Schema {
  if (op.keys.length !== op.keyNames.length) {
    throw new SluiceError('INVALID_EXPRESSION', `an aggregation has ${op.keys.length} keys but ${op.keyNames.length} key names`);
  }
  const out: Schema = op.keys.map((k, i) => {
    const name = op.keyNames[i]!;
    const win = windowOfKey(k);
    // Only a window that is itself the key may slide; one nested in a key or argument may not.
    rejectSlidingWindow(win === undefined ? k : win.expr);
    if (win !== undefined || sessionOfKey(k) !== undefined) {
      exprType(k, inputSchema);
      return { name, type: WINDOW_TYPE, nullable: false };
    }
    return { name, type: exprType(k, inputSchema), nullable: exprNullable(k, inputSchema) };
  });
  for (const spec of op.aggs) {
    if (spec.arg !== null) rejectSlidingWindow(spec.arg);
    out.push({ name: spec.name, type: aggResultType(spec, inputSchema), nullable: aggNullable(spec) });
  }
  const seen = new Set<string>();
  for (const f of out) {
    // Rows are objects keyed by name, so two outputs with one name cannot both exist.
    if (seen.has(f.name))
      throw new SluiceError('COLUMN_ALREADY_EXISTS', `the aggregation outputs column '${f.name}' twice; alias one of them`, { column: f.name });
    seen.add(f.name);
  }
  const sessions = op.keys.filter((k) => sessionOfKey(k) !== undefined).length;
  if (op.keys.filter((k) => windowOfKey(k) !== undefined).length + sessions > 1) {
    throw new SluiceError(
      'UNSUPPORTED_OPERATION',
      'an aggregation can group by at most one window or session window (several would be a cartesian product, as Spark says)',
    );
  }
  return out;
}

/** Event time of an aggregation key: a window's end, or the watermarked column's value. */
export function eventTimeOfKey(op: AggregateOp, keyTypes: readonly DataType[]): ((keyValues: unknown[]) => number) | undefined {
  const i = op.eventTimeKey;
  if (i === null) return undefined;
  // A window (an expression, or a column holding one) carries its end; a timestamp itself.
  if (isStructType(keyTypes[i] as DataType)) return (kv) => (kv[i] as { end: number }).end;
  return (kv) => kv[i] as number;
}
