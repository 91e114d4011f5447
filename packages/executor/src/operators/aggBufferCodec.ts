/**
 * Compact encoding of an aggregation's buffers as one state value. The reduce side writes one value
 * per changed key every batch (100k a batch in the seed query), so this avoids a general-purpose
 * encoder's per-call overhead: a tag byte per buffer, then its payload.
 *
 *   0 null   1 number (f64)   2 [sum, count] (2 × f64)   3 true   4 false   5 string (u32 length, UTF-8)
 *   6 any other buffer ({ g: value }: u32 length, msgpack of the value)
 */
import { ByteBuffer, SluiceError } from '@sluice/state';
import type { AggBuffer } from './aggregates.js';
import type { GenericBuffer } from './moreAggregates.js';
import { plainPackr as packr } from '../task/packers.js';

const scratch = new ByteBuffer(1 << 16);

// The writers below put one buffer at `pos` of `bytes` (room for maxBufferBytes is the caller's)
// and return its end. Every encoder of a value uses them: encodeBuffers over buffer objects, the
// reduce side over cells (aggCells.ts), the map side over typed arrays (accumulators.ts).

/** A number (tag 1) or null (tag 0). */
export function writeNumberOrNull(x: number | null, bytes: Uint8Array, view: DataView, pos: number): number {
  if (x === null) {
    bytes[pos] = 0;
    return pos + 1;
  }
  bytes[pos] = 1;
  view.setFloat64(pos + 1, x, true);
  return pos + 9;
}

/** An average's [sum, count] (tag 2). */
export function writeAvg(sum: number, count: number, bytes: Uint8Array, view: DataView, pos: number): number {
  bytes[pos] = 2;
  view.setFloat64(pos + 1, sum, true);
  view.setFloat64(pos + 9, count, true);
  return pos + 17;
}

// A generic buffer's msgpack, kept from maxBufferBytes to the writeBuffer that follows it.
let lastGeneric: { b: object; bytes: Uint8Array } | undefined;
function genericBytes(b: GenericBuffer): Uint8Array {
  if (lastGeneric?.b !== b) lastGeneric = { b, bytes: packr.pack(b.g) };
  return lastGeneric.bytes;
}

export function readGeneric(bytes: Uint8Array): GenericBuffer {
  return { g: packr.unpack(bytes) };
}

/** Any buffer. */
export function writeBuffer(b: AggBuffer, bytes: Uint8Array, view: DataView, pos: number): number {
  if (b === null || typeof b === 'number') return writeNumberOrNull(b, bytes, view, pos);
  if (Array.isArray(b)) return writeAvg(b[0], b[1], bytes, view, pos);
  if (typeof b === 'object') {
    const packed = genericBytes(b);
    bytes[pos] = 6;
    view.setUint32(pos + 1, packed.length, true);
    bytes.set(packed, pos + 5);
    lastGeneric = undefined;
    return pos + 5 + packed.length;
  }
  if (typeof b === 'boolean') {
    bytes[pos] = b ? 3 : 4;
    return pos + 1;
  }
  const n = Buffer.from(bytes.buffer, bytes.byteOffset + pos + 5, bytes.length - pos - 5).write(b, 'utf8');
  bytes[pos] = 5;
  view.setUint32(pos + 1, n, true);
  return pos + 5 + n;
}

/** Most bytes writeBuffer takes for `b` (a UTF-16 unit takes at most 3 bytes of UTF-8). */
export function maxBufferBytes(b: AggBuffer): number {
  if (b !== null && typeof b === 'object' && !Array.isArray(b)) return 5 + genericBytes(b).length;
  return typeof b === 'string' ? 5 + 3 * b.length : 17;
}

export function encodeBuffers(buffers: readonly AggBuffer[]): Uint8Array {
  const o = scratch;
  o.pos = 0;
  for (const b of buffers) {
    o.ensure(maxBufferBytes(b));
    o.pos = writeBuffer(b, o.buf, o.view, o.pos);
  }
  return o.bytes().slice();
}

export function decodeBuffers(data: Uint8Array): AggBuffer[] {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out: AggBuffer[] = [];
  let pos = 0;
  while (pos < data.length) {
    const tag = data[pos];
    if (tag === 0) {
      out.push(null);
      pos += 1;
    } else if (tag === 1) {
      out.push(v.getFloat64(pos + 1, true));
      pos += 9;
    } else if (tag === 2) {
      out.push([v.getFloat64(pos + 1, true), v.getFloat64(pos + 9, true)]);
      pos += 17;
    } else if (tag === 3 || tag === 4) {
      out.push(tag === 3);
      pos += 1;
    } else if (tag === 5 || tag === 6) {
      const n = v.getUint32(pos + 1, true);
      out.push(tag === 5 ? Buffer.from(data.buffer, data.byteOffset + pos + 5, n).toString('utf8') : readGeneric(data.subarray(pos + 5, pos + 5 + n)));
      pos += 5 + n;
    } else {
      throw new SluiceError('STATE_STORE_CORRUPT', `an aggregation state value has an unknown tag ${String(tag)}`);
    }
  }
  return out;
}
