/**
 * Spark's Generate: explode, posexplode and inline (and their `_outer` forms) turn a row into one
 * row per element of an array or entry of a map, the generated columns after the row's own.
 */
import type { Op } from './types.js';
import type { Row, Schema } from '../schema/types.js';
import { compileExpr } from '../expressions/compileExpr.js';
import { exprType, generatorFields } from '../expressions/exprTypes.js';
import { isMapType } from '../schema/values.js';
import type { UdfRegistry } from '../expressions/udfs.js';

/** Operators that may turn one row into several, so their tasks run over rows, not column batches. */
export function expandsRows(op: Op): boolean {
  return op.kind === 'join' || op.kind === 'generate';
}

export function compileGenerate(op: Extract<Op, { kind: 'generate' }>, schema: Schema, udfs: UdfRegistry): (row: Row) => Row[] {
  const value = compileExpr(op.expr, schema, udfs);
  const type = exprType(op.expr, schema);
  const outer = op.fn.endsWith('_outer');
  const withPos = op.fn.startsWith('posexplode');
  const inline = op.fn.startsWith('inline');
  const names = op.names;
  const fields = inline ? generatorFields(op.fn, type, op.expr).map((f) => f.name) : [];
  // The generated values of one element, in the order of `names`.
  const parts: (x: unknown, i: number) => unknown[] = inline
    ? (x) => fields.map((f) => (x == null ? null : ((x as Row)[f] ?? null)))
    : isMapType(type)
      ? (x, i) => (withPos ? [i, (x as unknown[])[0], (x as unknown[])[1]] : [(x as unknown[])[0], (x as unknown[])[1]])
      : (x, i) => (withPos ? [i, x] : [x]);
  const make = (row: Row, values: unknown[]): Row => {
    const out: Row = { ...row };
    for (let j = 0; j < names.length; j++) out[names[j]!] = values[j] ?? null;
    return out;
  };
  const nulls = names.map(() => null);
  return (row) => {
    const xs = value(row) as unknown[] | null;
    if (xs == null || xs.length === 0) return outer ? [make(row, nulls)] : [];
    const out = new Array<Row>(xs.length);
    for (let i = 0; i < xs.length; i++) out[i] = make(row, parts(xs[i], i));
    return out;
  };
}
