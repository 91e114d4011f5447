/**
 * Canonical encoding of state keys by schema type. Two keys are the same state key exactly when
 * their encodings are byte-equal, and the key group is the hash of these bytes, so the encoding
 * must not depend on how JavaScript happens to represent a value: 5 and 5n, a Date and its epoch
 * milliseconds, -0 and 0, every NaN, and struct objects with different property order all encode
 * the same. Raw msgpack of JS values is not canonical for any of these.
 *
 * Layout, per value (then concatenated for a tuple):
 *   null / undefined      0x00
 *   number-like           0x01 + 8-byte big-endian double, bits flipped so byte order = numeric order
 *                         (-0 is written as 0, NaN as the one quiet NaN)
 *   bigint not exactly a double
 *                         0x02 + sign (0x00 negative, 0x01 positive) + u32 BE length + magnitude BE
 *   string                0x01 + UTF-8 with 0x00 written as 0x00 0x01 + terminator 0x00 0x00
 *   boolean               0x01 + 0x00 | 0x01
 *   struct                0x01 + each field in the order of the type (never the object's order)
 *   array                 0x01 + u32 BE element count + each element
 *   map                   0x01 + u32 BE entry count + each key and value, in the map's order
 * DATE (days since the epoch) is number-like; INTERVAL is 0x01 + its months, days and ms, each number-like.
 * Every value encoding is prefix-free (self-delimiting), so a tuple encoding is unambiguous:
 * ('a','bc') and ('ab','c') differ. Strings are encoded as WTF-8 (lone surrogates as their 3-byte
 * form) so that two different JS strings never share an encoding, as TextEncoder's U+FFFD would.
 *
 * This format is pinned by every checkpoint through the key-group hash: do not change it.
 */
import { ByteBuffer } from './byteBuffer.js';
import { SluiceError } from './errors.js';

export type KeyType =
  | 'string'
  | 'int'
  | 'long'
  | 'double'
  | 'boolean'
  | 'timestamp'
  | 'date'
  | 'interval'
  | 'null'
  | { struct: Array<{ name: string; type: KeyType }> }
  | { array: KeyType }
  | { map: { key: KeyType; value: KeyType } };

const TAG_NULL = 0x00;
const TAG_PRESENT = 0x01;
const TAG_BIGINT = 0x02;

type Writer = ByteBuffer;

// encodeKey runs once per row: one scratch writer per thread, copied out at the end.
const scratch = new ByteBuffer(256);

/**
 * The canonical encoding written value by value into a reused buffer (`buf[0, pos)`), for loops
 * that must not allocate per key; the bytes are those encodeKey gives for the same values.
 */
export class KeyWriter {
  private readonly w = new ByteBuffer(256);
  get buf(): Uint8Array {
    return this.w.buf;
  }
  get pos(): number {
    return this.w.pos;
  }
  reset(): void {
    this.w.pos = 0;
  }
  null(): void {
    this.w.byte(TAG_NULL);
  }
  /** The start of a present struct; its fields follow in the type's order. */
  struct(): void {
    this.w.byte(TAG_PRESENT);
  }
  number(n: number): void {
    writeNumber(this.w, n, 'double');
  }
  value(v: unknown, t: KeyType): void {
    writeValue(this.w, v, t);
  }
}

/** Canonical bytes of a key tuple; `values[i]` is read as `types[i]`. */
export function encodeKey(values: readonly unknown[], types: readonly KeyType[]): Uint8Array {
  if (values.length !== types.length) {
    throw new SluiceError('INVALID_STATE_KEY', `a state key has ${values.length} values for ${types.length} key columns`);
  }
  const w = scratch;
  w.pos = 0;
  for (let i = 0; i < types.length; i++) writeValue(w, values[i], types[i] as KeyType);
  return w.buf.slice(0, w.pos);
}

function writeValue(w: Writer, v: unknown, t: KeyType): void {
  if (v === null || v === undefined) {
    w.byte(TAG_NULL);
    return;
  }
  if (typeof t === 'object' && 'array' in t) {
    if (!Array.isArray(v)) throw mismatch(v, 'array');
    writeCount(w, v.length);
    for (const x of v) writeValue(w, x, t.array);
    return;
  }
  if (typeof t === 'object' && 'map' in t) {
    if (!Array.isArray(v)) throw mismatch(v, 'map');
    writeCount(w, v.length);
    for (const [k, x] of v as Array<[unknown, unknown]>) {
      writeValue(w, k, t.map.key);
      writeValue(w, x, t.map.value);
    }
    return;
  }
  if (typeof t === 'object') {
    if (typeof v !== 'object') throw mismatch(v, 'struct');
    w.byte(TAG_PRESENT);
    const obj = v as Record<string, unknown>;
    for (const f of t.struct) writeValue(w, obj[f.name], f.type);
    return;
  }
  switch (t) {
    case 'string':
      if (typeof v !== 'string') throw mismatch(v, t);
      w.byte(TAG_PRESENT);
      writeString(w, v);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') throw mismatch(v, t);
      w.ensure(2);
      w.buf[w.pos++] = TAG_PRESENT;
      w.buf[w.pos++] = v ? 1 : 0;
      return;
    case 'int':
    case 'long':
    case 'double':
    case 'timestamp':
    case 'date':
      writeNumber(w, v, t);
      return;
    case 'interval': {
      // [months, days, ms], three numbers.
      if (!Array.isArray(v) || v.length !== 3) throw mismatch(v, t);
      w.byte(TAG_PRESENT);
      for (const x of v) writeNumber(w, x, 'double');
      return;
    }
    case 'null':
      throw mismatch(v, t);
    default:
      throw new SluiceError('INVALID_STATE_KEY', `unknown key type ${JSON.stringify(t)}`);
  }
}

/** A present array's or map's header: the tag, then its element count (u32 BE). */
function writeCount(w: Writer, n: number): void {
  w.ensure(5);
  w.buf[w.pos++] = TAG_PRESENT;
  w.view.setUint32(w.pos, n);
  w.pos += 4;
}

function writeNumber(w: Writer, v: unknown, t: KeyType): void {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (v instanceof Date) n = v.getTime();
  else if (typeof v === 'bigint') {
    n = Number(v);
    // A bigint that is exactly a double is that double, so 5n and 5 are one key; any other bigint
    // gets its own tag, so it can never merge with a nearby double.
    if (!Number.isFinite(n) || BigInt(n) !== v) {
      writeBigInt(w, v);
      return;
    }
  } else throw mismatch(v, t);
  w.ensure(9);
  w.buf[w.pos++] = TAG_PRESENT;
  if (Number.isNaN(n)) {
    w.view.setUint32(w.pos, 0x7ff80000);
    w.view.setUint32(w.pos + 4, 0);
  } else {
    w.view.setFloat64(w.pos, n === 0 ? 0 : n);
  }
  const p = w.pos;
  if ((w.buf[p] as number) & 0x80) {
    for (let i = p; i < p + 8; i++) w.buf[i] = ~(w.buf[i] as number) & 0xff;
  } else {
    w.buf[p] = (w.buf[p] as number) ^ 0x80;
  }
  w.pos += 8;
}

function writeBigInt(w: Writer, v: bigint): void {
  const neg = v < 0n;
  let hex = (neg ? -v : v).toString(16);
  if (hex.length & 1) hex = `0${hex}`;
  const len = hex.length >> 1;
  w.ensure(6 + len);
  w.buf[w.pos++] = TAG_BIGINT;
  w.buf[w.pos++] = neg ? 0 : 1;
  w.view.setUint32(w.pos, len);
  w.pos += 4;
  for (let i = 0; i < len; i++) w.buf[w.pos++] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
}

function writeString(w: Writer, s: string): void {
  // At most 3 bytes per UTF-16 unit (a 4-byte sequence consumes 2 units), 2 for an escaped NUL,
  // plus the terminator.
  w.ensure(s.length * 3 + 2);
  const b = w.buf;
  let p = w.pos;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c === 0) {
        b[p++] = 0x00;
        b[p++] = 0x01;
      } else b[p++] = c;
    } else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6);
      b[p++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          b[p++] = 0xf0 | (c >> 18);
          b[p++] = 0x80 | ((c >> 12) & 0x3f);
          b[p++] = 0x80 | ((c >> 6) & 0x3f);
          b[p++] = 0x80 | (c & 0x3f);
          continue;
        }
      }
      // BMP character or lone surrogate (WTF-8).
      b[p++] = 0xe0 | (c >> 12);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    }
  }
  b[p++] = 0x00;
  b[p++] = 0x00;
  w.pos = p;
}

function mismatch(v: unknown, t: KeyType | 'struct' | 'array' | 'map'): SluiceError {
  const shown = typeof v === 'object' ? Object.prototype.toString.call(v) : `${typeof v} ${String(v)}`;
  const kind = typeof t !== 'object' ? t : 'array' in t ? 'array' : 'map' in t ? 'map' : 'struct';
  return new SluiceError('INVALID_STATE_KEY', `a state key value ${shown} is not of type ${kind}`);
}

/**
 * Values of a key tuple from its canonical bytes: numbers for every numeric type (timestamps as
 * epoch ms), a bigint only where no double equals it, plain objects for structs, null for absent.
 * encodeKey(decodeKey(k, types), types) equals k.
 */
export function decodeKey(bytes: Uint8Array, types: readonly KeyType[]): unknown[] {
  const r = { pos: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = types.map((t) => readValue(bytes, view, r, t));
  if (r.pos !== bytes.length) throw corruptKey();
  return out;
}

function corruptKey(): SluiceError {
  return new SluiceError('STATE_STORE_CORRUPT', 'a state key does not decode with the key schema');
}

const numScratch = new Uint8Array(8);
const numScratchView = new DataView(numScratch.buffer);

function readValue(b: Uint8Array, view: DataView, r: { pos: number }, t: KeyType): unknown {
  if (r.pos >= b.length) throw corruptKey();
  const tag = b[r.pos++];
  if (tag === TAG_NULL) return null;
  if (typeof t === 'object' && 'array' in t) {
    const n = readCount(tag, b, view, r);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(readValue(b, view, r, t.array));
    return out;
  }
  if (typeof t === 'object' && 'map' in t) {
    const n = readCount(tag, b, view, r);
    const out: Array<[unknown, unknown]> = [];
    for (let i = 0; i < n; i++) out.push([readValue(b, view, r, t.map.key), readValue(b, view, r, t.map.value)]);
    return out;
  }
  if (typeof t === 'object') {
    if (tag !== TAG_PRESENT) throw corruptKey();
    const obj: Record<string, unknown> = {};
    for (const f of t.struct) obj[f.name] = readValue(b, view, r, f.type);
    return obj;
  }
  if (tag === TAG_BIGINT) {
    if (t === 'string' || t === 'boolean' || t === 'null') throw corruptKey();
    if (r.pos + 5 > b.length) throw corruptKey();
    const neg = b[r.pos] === 0;
    const len = view.getUint32(r.pos + 1);
    r.pos += 5;
    if (r.pos + len > b.length) throw corruptKey();
    let v = 0n;
    for (let i = 0; i < len; i++) v = (v << 8n) | BigInt(b[r.pos + i] as number);
    r.pos += len;
    return neg ? -v : v;
  }
  if (tag !== TAG_PRESENT) throw corruptKey();
  switch (t) {
    case 'boolean': {
      if (r.pos >= b.length) throw corruptKey();
      return b[r.pos++] === 1;
    }
    case 'string':
      return readString(b, r);
    case 'interval':
      return [readValue(b, view, r, 'double'), readValue(b, view, r, 'double'), readValue(b, view, r, 'double')];
    case 'null':
      throw corruptKey();
    default: {
      if (r.pos + 8 > b.length) throw corruptKey();
      // Into one scratch buffer: a decode allocates nothing (update mode decodes every key it emits).
      const p = r.pos;
      if ((b[p] as number) & 0x80) {
        for (let i = 0; i < 8; i++) numScratch[i] = b[p + i] as number;
        numScratch[0] = (numScratch[0] as number) ^ 0x80;
      } else for (let i = 0; i < 8; i++) numScratch[i] = ~(b[p + i] as number) & 0xff;
      r.pos += 8;
      return numScratchView.getFloat64(0);
    }
  }
}

function readCount(tag: number | undefined, b: Uint8Array, view: DataView, r: { pos: number }): number {
  if (tag !== TAG_PRESENT || r.pos + 4 > b.length) throw corruptKey();
  const n = view.getUint32(r.pos);
  r.pos += 4;
  return n;
}

function readString(b: Uint8Array, r: { pos: number }): string {
  const units: number[] = [];
  let p = r.pos;
  for (;;) {
    if (p >= b.length) throw corruptKey();
    const c = b[p++] as number;
    if (c === 0) {
      const next = b[p++];
      if (next === 0x00) break;
      if (next !== 0x01) throw corruptKey();
      units.push(0);
    } else if (c < 0x80) units.push(c);
    else if (c < 0xe0) units.push(((c & 0x1f) << 6) | ((b[p++] as number) & 0x3f));
    else if (c < 0xf0) {
      units.push(((c & 0x0f) << 12) | (((b[p++] as number) & 0x3f) << 6) | ((b[p++] as number) & 0x3f));
    } else {
      const cp = ((c & 0x07) << 18) | (((b[p++] as number) & 0x3f) << 12) | (((b[p++] as number) & 0x3f) << 6) | ((b[p++] as number) & 0x3f);
      units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
    }
  }
  r.pos = p;
  let s = '';
  for (let i = 0; i < units.length; i += 4096) s += String.fromCharCode(...units.slice(i, i + 4096));
  return s;
}
