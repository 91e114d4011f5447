/**
 * A join side's stored value: its rows of one key, their matched flags, and the time of its index
 * entry (the least expiry of its rows); and the state keys a side's rows live under.
 */
import { ByteBuffer, corruptStateValue, expectValueHeader, valueHeaderBytes, ValueKind, writeValueHeader, type ValueHeader } from '@sluice/state';
import { readerOf, readVector, writeUtf8, writeVector } from '../../columns/vectorCodec.js';
import { rowsFromVectors } from '../../columns/vectors.js';
import { plainPackr as packr } from '../../task/packers.js';
import type { DataType, Row, Schema } from '../../schema/types.js';
import { isNumberBacked } from '../../schema/values.js';
import type { JoinSide } from './plan.js';

// ---- state values ------------------------------------------------------------------------------

/** A stored row and whether it has matched a row of the other side. */
export type Stored = [row: Row, matched: boolean];

/**
 * A side's rows of one key: the state value header (kind `joinRows`: the index time, or null, and
 * the row count), then the rows as columns: their matched flags (a byte each, 0 or 1), then each
 * of the side's columns in its schema's order as vectorCodec.ts writes a vector (engine form).
 * Version 1 values held one msgpack array (plainPackr) of, for each row, its matched flag and its
 * values; values written before the header are one msgpack array [index time or null, row count,
 * then the rows as in version 1]. Both are still read.
 */
const VERSION = 2;
const WHAT = 'join state';

/** Where values are built; each is copied out at its exact size. */
const scratch = new ByteBuffer(1 << 12);

export function encodeJoinValue(indexTime: number | null, rows: readonly Stored[], schema: Schema): Uint8Array {
  const n = rows.length;
  const out = scratch;
  out.pos = valueHeaderBytes(indexTime, n);
  out.ensure(n);
  for (let i = 0; i < n; i++) out.buf[out.pos + i] = (rows[i] as Stored)[1] ? 1 : 0;
  out.pos += n;
  for (const f of schema) writeRowsColumn(out, rows, f.name, f.type);
  const value = out.buf.slice(0, out.pos);
  writeValueHeader(value, undefined, 0, ValueKind.joinRows, VERSION, indexTime, n);
  return value;
}

export function decodeJoinValue(value: Uint8Array, schema: Schema): { indexTime: number | null; rows: Stored[] } {
  const h = expectValueHeader(value, ValueKind.joinRows, VERSION, WHAT);
  if (h !== undefined && h.version >= 2) {
    if (h.indexTime === undefined) throw corruptStateValue(WHAT, 'has no index time: the state was written by another query, or is damaged');
    return { indexTime: h.indexTime, rows: readColumns(value, h.start, h.rows, schema) };
  }
  const { indexTime, count, values, first } = unpackJoinValue(value, h);
  if (values.length - first !== count * (schema.length + 1)) throw wrongColumns(`${count} rows in ${values.length - first} values`, schema);
  const rows: Stored[] = [];
  for (let i = first; i < values.length; i += schema.length + 1) {
    const row: Row = {};
    for (let k = 0; k < schema.length; k++) row[(schema[k] as Schema[number]).name] = values[i + 1 + k];
    rows.push([row, values[i] === 1]);
  }
  return { indexTime, rows };
}

const wrongColumns = (what: string, schema: Schema): Error =>
  corruptStateValue(
    WHAT,
    `holds ${what}, which rows of this side's ${schema.length} columns (${schema.map((f) => f.name).join(', ')}) cannot fill: the state was written by another query, or is damaged`,
  );

/** A version 2 value's rows. */
function readColumns(value: Uint8Array, start: number, n: number, schema: Schema): Stored[] {
  let rows: Row[];
  const r = readerOf(value, start + n);
  try {
    rows = rowsFromVectors(
      schema.map(() => readVector(r, n)),
      schema,
      n,
    );
  } catch (e) {
    throw wrongColumns(`columns that do not decode (${(e as Error).message})`, schema);
  }
  if (r.pos !== value.length) throw wrongColumns(`${value.length - r.pos} bytes past its columns`, schema);
  const out: Stored[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = [rows[i] as Row, value[start + i] === 1];
  return out;
}

/**
 * One column of `rows` as vectorCodec.ts writes a vector, straight from the rows: a number, a
 * boolean or a string column as such (a string column's dictionary is its rows' strings in order),
 * anything else, or a value that does not fit the type, as msgpack.
 */
function writeRowsColumn(out: ByteBuffer, rows: readonly Stored[], name: string, type: DataType): void {
  const n = rows.length;
  const want = isNumberBacked(type) ? 'number' : type === 'boolean' ? 'boolean' : type === 'string' ? 'string' : undefined;
  let nulls = 0;
  let fits = want !== undefined;
  for (let i = 0; i < n && fits; i++) {
    const v = (rows[i] as Stored)[0][name];
    if (v === null || v === undefined) nulls += 1;
    else if (typeof v !== want) fits = false;
  }
  if (!fits) {
    const values: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) values[i] = (rows[i] as Stored)[0][name] ?? null;
    writeVector(out, { kind: 'any', length: n, values }, null, n);
    return;
  }
  out.ensure(2 + n);
  out.buf[out.pos] = want === 'number' ? 0 : want === 'boolean' ? 1 : 2;
  out.buf[out.pos + 1] = nulls > 0 ? 1 : 0;
  out.pos += 2;
  if (nulls > 0) {
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as Stored)[0][name];
      out.buf[out.pos + i] = v === null || v === undefined ? 1 : 0;
    }
    out.pos += n;
  }
  if (want === 'number') {
    out.ensure(8 * n);
    for (let i = 0; i < n; i++) out.view.setFloat64(out.pos + 8 * i, ((rows[i] as Stored)[0][name] as number | null) ?? 0, true);
    out.pos += 8 * n;
  } else if (want === 'boolean') {
    out.ensure(n);
    for (let i = 0; i < n; i++) out.buf[out.pos + i] = (rows[i] as Stored)[0][name] === true ? 1 : 0;
    out.pos += n;
  } else {
    out.ensure(4);
    out.view.setUint32(out.pos, n - nulls, true);
    out.pos += 4;
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as Stored)[0][name];
      if (typeof v === 'string') writeUtf8(out, v);
    }
    out.ensure(4 * n);
    for (let i = 0, code = 0; i < n; i++) {
      const v = (rows[i] as Stored)[0][name];
      out.view.setInt32(out.pos + 4 * i, typeof v === 'string' ? code++ : 0, true);
    }
    out.pos += 4 * n;
  }
}

/** The header of a version 1 value (the one before it: the array's first two items), and its array. */
function unpackJoinValue(value: Uint8Array, h: ValueHeader | undefined): { indexTime: number | null; count: number; values: unknown[]; first: number } {
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
export const joinIndexTimeOf = (value: Uint8Array): number | null => {
  const h = expectValueHeader(value, ValueKind.joinRows, VERSION, WHAT);
  return h !== undefined && h.indexTime !== undefined ? h.indexTime : unpackJoinValue(value, h).indexTime;
};

/** The rows a stored value holds (a repartition counts rows, not keys). */
export const joinRowsIn = (value: Uint8Array): number => {
  const h = expectValueHeader(value, ValueKind.joinRows, VERSION, WHAT);
  return h !== undefined ? h.rows : unpackJoinValue(value, h).count;
};

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
