/**
 * Compact encoding of an aggregation's buffers as one state value. The reduce side writes one value
 * per changed key every batch (100k a batch in the seed query), so this avoids a general-purpose
 * encoder's per-call overhead: a tag byte per buffer, then its payload.
 *
 *   0 null   1 number (f64)   2 [sum, count] (2 × f64)   3 true   4 false   5 string (u32 length, UTF-8)
 */
import { ByteBuffer, SluiceError } from '@sluice/state';
import type { AggBuffer } from './aggregates.js';

const scratch = new ByteBuffer(1 << 16);

export function encodeBuffers(buffers: readonly AggBuffer[]): Uint8Array {
  const o = scratch;
  o.pos = 0;
  for (const b of buffers) {
    o.ensure(17);
    if (b === null) o.buf[o.pos++] = 0;
    else if (typeof b === 'number') {
      o.buf[o.pos] = 1;
      o.view.setFloat64(o.pos + 1, b, true);
      o.pos += 9;
    } else if (Array.isArray(b)) {
      o.buf[o.pos] = 2;
      o.view.setFloat64(o.pos + 1, b[0], true);
      o.view.setFloat64(o.pos + 9, b[1], true);
      o.pos += 17;
    } else if (typeof b === 'boolean') o.buf[o.pos++] = b ? 3 : 4;
    else {
      const text = Buffer.from(b, 'utf8');
      o.ensure(5);
      o.buf[o.pos] = 5;
      o.view.setUint32(o.pos + 1, text.length, true);
      o.pos += 5;
      o.append(text);
    }
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
    } else if (tag === 5) {
      const n = v.getUint32(pos + 1, true);
      out.push(Buffer.from(data.buffer, data.byteOffset + pos + 5, n).toString('utf8'));
      pos += 5 + n;
    } else {
      throw new SluiceError('STATE_STORE_CORRUPT', `an aggregation state value has an unknown tag ${String(tag)}`);
    }
  }
  return out;
}
