import { describe, expect, it } from 'vitest';
import { ByteBuffer } from './byteBuffer.js';

describe('ByteBuffer', () => {
  it('grows past its capacity keeping what was written, and its view follows the new buffer', () => {
    const b = new ByteBuffer(4);
    b.append(new Uint8Array([1, 2, 3]));
    b.ensure(8);
    b.view.setUint32(b.pos, 0xdeadbeef);
    b.pos += 4;
    b.byte(9);
    expect([...b.bytes()]).toEqual([1, 2, 3, 0xde, 0xad, 0xbe, 0xef, 9]);
    expect(b.buf.length).toBeGreaterThanOrEqual(8);
    b.pos = 0;
    expect(b.bytes()).toHaveLength(0);
  });
});
