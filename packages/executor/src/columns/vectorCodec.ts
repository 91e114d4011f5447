/**
 * Column vectors in bytes: how a batch's columns cross a shuffle and sit in a state value without
 * one object per row. A vector of `count` values is
 *
 *   [kind u8: 0 num, 1 bool, 2 str, 3 any][nulls u8: 0 none, 1 a mask follows][mask: count bytes]
 *   num   count f64
 *   bool  count u8
 *   str   [dictionary size u32], each entry [utf8 length u32][utf8], then count i32 codes into it
 *   any   [length u32][msgpack array of the values] (plainPackr)
 *
 * little-endian throughout (the numbers are copied as the platform holds them: every platform
 * Node.js runs Sluice on is little-endian, and the module refuses to load on one that is not). A
 * str vector written from rows picked out of a batch carries only the dictionary entries those
 * rows use. Vectors read back own their arrays (nothing points into the bytes).
 */
import { endianness } from 'node:os';
import type { ByteBuffer } from '@sluice/state';
import { plainPackr } from '../task/packers.js';
import type { Vector } from './vectors.js';

if (endianness() !== 'LE') throw new Error('Sluice stores column vectors little-endian and needs a little-endian platform');

const KIND_CODE = { num: 0, bool: 1, str: 2, any: 3 } as const;
const encoder = new TextEncoder();

/** Per dictionary entry, its code in the vector being written (-1: not used yet); reset after each vector. */
let remap = new Int32Array(1024).fill(-1);

/**
 * Appends the vector's values at rows `idx[0..count)` (all of its first `count` rows when `idx`
 * is null) to `out`.
 */
export function writeVector(out: ByteBuffer, v: Vector, idx: Int32Array | null, count: number): void {
  out.ensure(2);
  out.buf[out.pos] = KIND_CODE[v.kind];
  const nulls = v.kind === 'any' ? null : v.nulls;
  out.buf[out.pos + 1] = nulls === null ? 0 : 1;
  out.pos += 2;
  if (nulls !== null) writeBytes(out, nulls, idx, count);
  switch (v.kind) {
    case 'num': {
      out.ensure(8 * count);
      if (idx === null) out.buf.set(new Uint8Array(v.values.buffer, v.values.byteOffset, 8 * count), out.pos);
      else {
        const view = out.view;
        const values = v.values;
        for (let k = 0, p = out.pos; k < count; k++, p += 8) view.setFloat64(p, values[idx[k]!]!, true);
      }
      out.pos += 8 * count;
      return;
    }
    case 'bool':
      writeBytes(out, v.values, idx, count);
      return;
    case 'str':
      writeStrings(out, v.dict, v.codes, v.nulls, idx, count);
      return;
    case 'any': {
      const values: unknown[] = new Array(count);
      for (let k = 0; k < count; k++) values[k] = v.values[idx === null ? k : idx[k]!] ?? null;
      const bytes = plainPackr.pack(values);
      out.ensure(4 + bytes.length);
      out.view.setUint32(out.pos, bytes.length, true);
      out.buf.set(bytes, out.pos + 4);
      out.pos += 4 + bytes.length;
    }
  }
}

function writeBytes(out: ByteBuffer, bytes: Uint8Array, idx: Int32Array | null, count: number): void {
  out.ensure(count);
  if (idx === null) out.buf.set(bytes.subarray(0, count), out.pos);
  else {
    const b = out.buf;
    for (let k = 0, p = out.pos; k < count; k++, p++) b[p] = bytes[idx[k]!]!;
  }
  out.pos += count;
}

/** The dictionary entries the rows use, in order of first use, then the rows' codes into it (0 for a null). */
function writeStrings(out: ByteBuffer, dict: readonly string[], codes: Int32Array, nulls: Uint8Array | null, idx: Int32Array | null, count: number): void {
  if (remap.length < dict.length) remap = new Int32Array(Math.max(dict.length, remap.length * 2)).fill(-1);
  const used: number[] = [];
  const mine = new Int32Array(count);
  for (let k = 0; k < count; k++) {
    const i = idx === null ? k : idx[k]!;
    if (nulls !== null && nulls[i] === 1) continue;
    const c = codes[i]!;
    let m = remap[c]!;
    if (m < 0) {
      m = used.length;
      remap[c] = m;
      used.push(c);
    }
    mine[k] = m;
  }
  out.ensure(4);
  out.view.setUint32(out.pos, used.length, true);
  out.pos += 4;
  for (const c of used) {
    writeUtf8(out, dict[c]!);
    remap[c] = -1;
  }
  out.ensure(4 * count);
  out.buf.set(new Uint8Array(mine.buffer, 0, 4 * count), out.pos);
  out.pos += 4 * count;
}

/** [utf8 length u32][utf8]; a short all-ASCII string is copied by hand (cheaper than an encoder call). */
export function writeUtf8(out: ByteBuffer, s: string): void {
  out.ensure(4 + 3 * s.length);
  const b = out.buf;
  const start = out.pos + 4;
  let p = start;
  if (s.length > 32) p += encoder.encodeInto(s, b.subarray(start)).written;
  else {
    for (let i = 0; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      if (ch >= 0x80) {
        p = start + encoder.encodeInto(s, b.subarray(start)).written;
        break;
      }
      b[p++] = ch;
    }
  }
  out.view.setUint32(out.pos, p - start, true);
  out.pos = p;
}

/** A cursor over a byte layout: the bytes, a view of them, and where the next read starts. */
export interface Reader {
  bytes: Uint8Array;
  view: DataView;
  pos: number;
}

export function readerOf(bytes: Uint8Array, pos = 0): Reader {
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), pos };
}

/** Reads a vector of `count` values written by writeVector; throws a RangeError or TypeError on bytes that are not one. */
export function readVector(r: Reader, count: number): Vector {
  const kind = r.bytes[r.pos];
  const hasNulls = r.bytes[r.pos + 1];
  r.pos += 2;
  const nulls = hasNulls === 1 ? takeBytes(r, count) : null;
  switch (kind) {
    case 0: {
      const values = new Float64Array(count);
      new Uint8Array(values.buffer).set(slice(r, 8 * count));
      return { kind: 'num', length: count, values, nulls };
    }
    case 1:
      return { kind: 'bool', length: count, values: takeBytes(r, count), nulls };
    case 2: {
      const size = r.view.getUint32(r.pos, true);
      r.pos += 4;
      const dict: string[] = new Array(size);
      for (let i = 0; i < size; i++) dict[i] = readUtf8(r);
      const codes = new Int32Array(count);
      new Uint8Array(codes.buffer).set(slice(r, 4 * count));
      for (let k = 0; k < count; k++)
        if (codes[k]! >>> 0 >= size && nulls?.[k] !== 1) throw new RangeError(`a string code ${codes[k]} past the dictionary's ${size} entries`);
      return { kind: 'str', length: count, dict, codes, nulls };
    }
    case 3: {
      const len = r.view.getUint32(r.pos, true);
      r.pos += 4;
      const values = plainPackr.unpack(slice(r, len)) as unknown;
      if (!Array.isArray(values) || values.length !== count)
        throw new TypeError(`a column of ${count} values holds ${Array.isArray(values) ? values.length : 'no list'}`);
      return { kind: 'any', length: count, values };
    }
    default:
      throw new TypeError(`column kind ${kind} is none of 0-3`);
  }
}

/** The next `n` bytes, as a view (checked to be there). */
function slice(r: Reader, n: number): Uint8Array {
  if (r.pos + n > r.bytes.length) throw new RangeError(`${n} bytes at ${r.pos} run past the end (${r.bytes.length})`);
  const out = r.bytes.subarray(r.pos, r.pos + n);
  r.pos += n;
  return out;
}

/** The next `n` bytes, copied. */
function takeBytes(r: Reader, n: number): Uint8Array {
  return slice(r, n).slice();
}

/** A string written by writeUtf8; a short all-ASCII one is made by hand (cheaper than a decoder call). */
export function readUtf8(r: Reader): string {
  const len = r.view.getUint32(r.pos, true);
  r.pos += 4;
  const b = slice(r, len);
  if (len <= 32) {
    let ascii = true;
    for (let i = 0; i < len; i++) if (b[i]! >= 0x80) ascii = false;
    if (ascii) return String.fromCharCode.apply(null, b as unknown as number[]);
  }
  return Buffer.from(b.buffer, b.byteOffset, len).toString('utf8');
}
