/**
 * A join side's stored value: its rows of one key, their matched flags, and the time of its index
 * entry (the least expiry of its rows); and the state keys a side's rows live under.
 */
import { corruptStateValue, expectValueHeader, ValueKind } from '@sluice/state';
import { packWithValueHeader, plainPackr as packr } from '../../task/packers.js';
import type { Row, Schema } from '../../schema/types.js';
import type { JoinSide } from './plan.js';

// ---- state values ------------------------------------------------------------------------------

/** A stored row and whether it has matched a row of the other side. */
export type Stored = [row: Row, matched: boolean];

/**
 * A side's rows of one key: the state value header (kind `joinRows`: the index time, or null, and
 * the row count), then one msgpack array (plainPackr) of, for each row, its matched flag (0 or 1)
 * and its values in the side's schema order, engine form. Values written before the header are
 * one msgpack array [index time or null, row count, then the rows as above].
 */
const VERSION = 1;
const WHAT = 'join state';

export function encodeJoinValue(indexTime: number | null, rows: readonly Stored[], schema: Schema): Uint8Array {
  const out: unknown[] = [];
  for (const [row, matched] of rows) {
    out.push(matched ? 1 : 0);
    for (const f of schema) out.push(row[f.name] ?? null);
  }
  return packWithValueHeader(packr, out, ValueKind.joinRows, VERSION, indexTime, rows.length);
}

export function decodeJoinValue(value: Uint8Array, schema: Schema): { indexTime: number | null; rows: Stored[] } {
  const { indexTime, count, values, first } = unpackJoinValue(value);
  if (values.length - first !== count * (schema.length + 1)) {
    throw corruptStateValue(
      WHAT,
      `holds ${count} rows in ${values.length - first} values, which rows of this side's ${schema.length} columns (${schema.map((f) => f.name).join(', ')}) cannot fill: the state was written by another query, or is damaged`,
    );
  }
  const rows: Stored[] = [];
  for (let i = first; i < values.length; i += schema.length + 1) {
    const row: Row = {};
    for (let k = 0; k < schema.length; k++) row[(schema[k] as Schema[number]).name] = values[i + 1 + k];
    rows.push([row, values[i] === 1]);
  }
  return { indexTime, rows };
}

/** The header of a stored value (the one before it: the array's first two items), and its array. */
function unpackJoinValue(value: Uint8Array): { indexTime: number | null; count: number; values: unknown[]; first: number } {
  const h = expectValueHeader(value, ValueKind.joinRows, VERSION, WHAT);
  let a: unknown;
  try {
    a = packr.unpack(h === undefined ? value : value.subarray(h.start));
  } catch (e) {
    throw corruptStateValue(WHAT, `does not decode: ${(e as Error).message}`);
  }
  if (h !== undefined) {
    if (!Array.isArray(a) || h.indexTime === undefined)
      throw corruptStateValue(WHAT, 'is not a list of rows: the state was written by another query, or is damaged');
    return { indexTime: h.indexTime, count: h.rows, values: a, first: 0 };
  }
  if (!Array.isArray(a) || a.length < 2 || !(a[0] === null || typeof a[0] === 'number') || !Number.isInteger(a[1])) {
    throw corruptStateValue(WHAT, 'is not [index time, row count, rows...]: the state was written by another query, or is damaged');
  }
  return { indexTime: a[0] as number | null, count: a[1] as number, values: a, first: 2 };
}

/** The index time a stored value records (a repartition writes each moved value's index entry beside it). */
export const joinIndexTimeOf = (value: Uint8Array): number | null => unpackJoinValue(value).indexTime;

/** The rows a stored value holds (a repartition counts rows, not keys). */
export const joinRowsIn = (value: Uint8Array): number => unpackJoinValue(value).count;

/** The string a key's rows are known by in a task and in the cache (per side): key group and key bytes, latin1. */
export function stateId(keyGroup: number, keyBytes: Uint8Array): string {
  let s = String.fromCharCode(keyGroup >>> 8, keyGroup & 0xff);
  for (let i = 0; i < keyBytes.length; i += 4096) s += String.fromCharCode.apply(null, keyBytes.subarray(i, i + 4096) as unknown as number[]);
  return s;
}

/** The key part of a side's state data key: [side u8][key bytes] (the data key puts it under the key group). */
export function sideKey(side: JoinSide, keyBytes: Uint8Array): Uint8Array {
  const key = new Uint8Array(keyBytes.length + 1);
  key[0] = side;
  key.set(keyBytes, 1);
  return key;
}
