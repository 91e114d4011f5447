/**
 * The join of a stream's rows with a static table, broadcast, in the workers: the table's rows
 * reach each worker once per query run, in a SharedArrayBuffer every task message shares
 * (operators/broadcast.ts, the driver's part), and are indexed by key once per worker. Keys match
 * as Spark's equi-join: a null key matches nothing; NaN matches NaN, and -0 matches 0.
 */
import { SluiceError } from '@sluice/state';
import type { Op } from './types.js';
import type { Row, Schema } from '../schema/types.js';
import { compileExpr } from '../expressions/compileExpr.js';
import { plainPackr as packr } from '../task/packers.js';
import type { UdfRegistry } from '../expressions/udfs.js';

type JoinOp = Extract<Op, { kind: 'join' }>;

/** The table's rows by key, per broadcast (a new one each query run). */
const indexes = new Map<string, Map<string, Row[]>>();

/** The key of a row's join columns, or undefined when one of them is null (it matches nothing). */
function keyOf(row: Row, keys: readonly string[]): string | undefined {
  return keyOfValues(keys.map((k) => row[k]));
}

/** The index key of join key values, or undefined when one of them is null (it matches nothing). */
export function keyOfValues(values: readonly unknown[]): string | undefined {
  for (const v of values) if (v === null || v === undefined) return undefined;
  // JSON: -0 prints as 0, and NaN as null, which no real null reaches (those return above).
  return JSON.stringify(values);
}

/** The static side's rows by keyOfValues of their keys, indexed once per worker and broadcast. */
export function indexOf(op: JoinOp): Map<string, Row[]> {
  let index = indexes.get(op.broadcastId);
  if (index !== undefined) return index;
  if (op.broadcast === undefined) {
    throw new SluiceError('UNSUPPORTED_OPERATION', `join ${op.broadcastId} reached a worker without its static side`);
  }
  const rows = packr.unpack(new Uint8Array(op.broadcast)) as Row[];
  index = new Map();
  for (const r of rows) {
    const key = keyOf(r, op.rightKeys ?? op.keys);
    if (key === undefined) continue;
    const list = index.get(key);
    if (list === undefined) index.set(key, [r]);
    else list.push(r);
  }
  // Runs of stopped queries leave theirs behind: keep the few latest.
  if (indexes.size >= 16) indexes.delete(indexes.keys().next().value as string);
  indexes.set(op.broadcastId, index);
  return index;
}

/**
 * The rows a stream row joins into (none, one, or one per matching table row). `leftSchema` is
 * the stream's; a residual condition is evaluated over the stream row and the table row together.
 */
export function compileJoin(op: JoinOp, leftSchema: Schema, udfs: UdfRegistry): (row: Row) => Row[] {
  const index = indexOf(op);
  const right = op.rightSchema.map((f) => f.name).filter((n) => op.rightKeys !== undefined || !op.keys.includes(n));
  const joined = (left: Row, r: Row | undefined): Row => {
    const out: Row = { ...left };
    for (const n of right) out[n] = r === undefined ? null : (r[n] ?? null);
    return out;
  };
  const residual = op.residual && compileExpr(op.residual, [...leftSchema, ...op.rightSchema], udfs);
  const matches = (row: Row): Row[] | undefined => {
    const key = keyOf(row, op.keys);
    const found = key === undefined ? undefined : index.get(key);
    if (found === undefined || residual === undefined) return found;
    const kept = found.filter((r) => residual({ ...r, ...row }) === true);
    return kept.length > 0 ? kept : undefined;
  };
  switch (op.how) {
    case 'inner':
      return (row) => matches(row)?.map((r) => joined(row, r)) ?? [];
    case 'left_outer':
      return (row) => matches(row)?.map((r) => joined(row, r)) ?? [joined(row, undefined)];
    case 'left_semi':
      return (row) => (matches(row) !== undefined ? [row] : []);
    case 'left_anti':
      return (row) => (matches(row) === undefined ? [row] : []);
  }
}
