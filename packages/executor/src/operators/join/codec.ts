/**
 * A join side's stored value: its rows of one key, their matched flags, and the time of its index
 * entry (the least expiry of its rows); and the state keys a side's rows live under.
 */
import { ByteBuffer, corruptStateValue, expectValueHeader, valueHeaderBytes, ValueKind, writeValueHeader, type ValueHeader } from '@sluice/state';
import { readerOf, readVector, writeUtf8, writeVector } from '../../columns/vectorCodec.js';
import type { Vector } from '../../columns/vectors.js';
import { plainPackr as packr } from '../../task/packers.js';
import type { Row, Schema } from '../../schema/types.js';
import { RowArena } from './arena.js';
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

/** The value of a key whose rows are `rows[0..n)` of `arena`, in order. */
export function encodeJoinRows(indexTime: number | null, arena: RowArena, rows: Int32Array, n: number): Uint8Array {
  const out = scratch;
  out.pos = valueHeaderBytes(indexTime, n);
  out.ensure(n);
  for (let i = 0; i < n; i++) out.buf[out.pos + i] = arena.matched[rows[i]!]!;
  out.pos += n;
  for (let k = 0; k < arena.columns.length; k++) writeArenaColumn(out, arena, k, rows, n);
  const value = out.buf.slice(0, out.pos);
  writeValueHeader(value, undefined, 0, ValueKind.joinRows, VERSION, indexTime, n);
  return value;
}

/**
 * Reads a stored value's rows into `arena` (appended in order, matched flags set, expiry left to
 * the caller) and returns its index time, its row numbers, and whether its bytes are the ones
 * encodeJoinRows writes for them (a value of version 2; an older one is written again only when
 * its key changes).
 */
export function loadJoinValue(value: Uint8Array, arena: RowArena): { indexTime: number | null; rows: number[]; current: boolean } {
  const h = expectValueHeader(value, ValueKind.joinRows, VERSION, WHAT);
  const schema = arena.schema;
  const rows: number[] = [];
  if (h !== undefined && h.version >= 2) {
    if (h.indexTime === undefined) throw corruptStateValue(WHAT, 'has no index time: the state was written by another query, or is damaged');
    const n = h.rows;
    const r = readerOf(value, h.start + n);
    let vectors: Vector[];
    try {
      if (h.start + n > value.length) throw new RangeError(`${n} matched flags run past the end`);
      vectors = schema.map(() => readVector(r, n));
    } catch (e) {
      throw wrongColumns(`columns that do not decode (${(e as Error).message})`, schema);
    }
    if (r.pos !== value.length) throw wrongColumns(`${value.length - r.pos} bytes past its columns`, schema);
    for (let i = 0; i < n; i++) {
      const row = arena.alloc();
      arena.setFromVectors(row, vectors, i);
      arena.matched[row] = value[h.start + i] === 1 ? 1 : 0;
      rows.push(row);
    }
    return { indexTime: h.indexTime, rows, current: true };
  }
  const { indexTime, count, values, first } = unpackJoinValue(value, h);
  if (values.length - first !== count * (schema.length + 1)) throw wrongColumns(`${count} rows in ${values.length - first} values`, schema);
  for (let i = first; i < values.length; i += schema.length + 1) {
    const row: Row = {};
    for (let k = 0; k < schema.length; k++) row[(schema[k] as Schema[number]).name] = values[i + 1 + k];
    const r = arena.alloc();
    arena.setFromRow(r, row);
    arena.matched[r] = values[i] === 1 ? 1 : 0;
    rows.push(r);
  }
  return { indexTime, rows, current: false };
}

/** A key's rows as [row, matched] pairs, and its value (tests, and the places that want rows). */
export function encodeJoinValue(indexTime: number | null, stored: readonly Stored[], schema: Schema): Uint8Array {
  const arena = new RowArena(schema);
  const rows = Int32Array.from(stored, ([row, matched]) => {
    const r = arena.alloc();
    arena.setFromRow(r, row);
    arena.matched[r] = matched ? 1 : 0;
    return r;
  });
  return encodeJoinRows(indexTime, arena, rows, rows.length);
}

export function decodeJoinValue(value: Uint8Array, schema: Schema): { indexTime: number | null; rows: Stored[] } {
  const arena = new RowArena(schema);
  const { indexTime, rows } = loadJoinValue(value, arena);
  return { indexTime, rows: rows.map((r) => [arena.row(r), arena.matched[r] === 1]) };
}

const wrongColumns = (what: string, schema: Schema): Error =>
  corruptStateValue(
    WHAT,
    `holds ${what}, which rows of this side's ${schema.length} columns (${schema.map((f) => f.name).join(', ')}) cannot fill: the state was written by another query, or is damaged`,
  );

/**
 * Column k of the rows, as vectorCodec.ts writes a vector: a number or boolean column as such, a
 * column of strings as a string vector (its dictionary the rows' strings in order), any other as
 * msgpack.
 */
function writeArenaColumn(out: ByteBuffer, arena: RowArena, k: number, rows: Int32Array, n: number): void {
  const c = arena.columns[k]!;
  if (c.kind !== 'obj') {
    let nulls = 0;
    for (let i = 0; i < n; i++) nulls += c.nulls[rows[i]!]!;
    out.ensure(2 + (nulls > 0 ? n : 0) + 8 * n);
    out.buf[out.pos] = c.kind === 'num' ? 0 : 1;
    out.buf[out.pos + 1] = nulls > 0 ? 1 : 0;
    out.pos += 2;
    if (nulls > 0) {
      for (let i = 0; i < n; i++) out.buf[out.pos + i] = c.nulls[rows[i]!]!;
      out.pos += n;
    }
    if (c.kind === 'num') {
      for (let i = 0; i < n; i++) out.view.setFloat64(out.pos + 8 * i, c.nulls[rows[i]!] === 1 ? 0 : c.values[rows[i]!]!, true);
      out.pos += 8 * n;
    } else {
      for (let i = 0; i < n; i++) out.buf[out.pos + i] = c.values[rows[i]!]!;
      out.pos += n;
    }
    return;
  }
  let nulls = 0;
  let strings = arena.schema[k]!.type === 'string';
  for (let i = 0; i < n && strings; i++) {
    const v = c.values[rows[i]!];
    if (v === null || v === undefined) nulls += 1;
    else if (typeof v !== 'string') strings = false;
  }
  if (!strings) {
    const values: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) values[i] = c.values[rows[i]!] ?? null;
    writeVector(out, { kind: 'any', length: n, values }, null, n);
    return;
  }
  out.ensure(6 + n);
  out.buf[out.pos] = 2;
  out.buf[out.pos + 1] = nulls > 0 ? 1 : 0;
  out.pos += 2;
  if (nulls > 0) {
    for (let i = 0; i < n; i++) out.buf[out.pos + i] = typeof c.values[rows[i]!] === 'string' ? 0 : 1;
    out.pos += n;
  }
  out.view.setUint32(out.pos, n - nulls, true);
  out.pos += 4;
  for (let i = 0; i < n; i++) {
    const v = c.values[rows[i]!];
    if (typeof v === 'string') writeUtf8(out, v);
  }
  out.ensure(4 * n);
  for (let i = 0, code = 0; i < n; i++) out.view.setInt32(out.pos + 4 * i, typeof c.values[rows[i]!] === 'string' ? code++ : 0, true);
  out.pos += 4 * n;
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
