import { describe, expect, it } from 'vitest';
import { decodeBuffers, encodeBuffers } from './aggBufferCodec.js';

describe('aggregation buffer codec', () => {
  it('round-trips every buffer shape', () => {
    const buffers = [null, 3, -0.5, [10.25, 4] as [number, number], true, false, '', 'zürich 🚀', Number.MAX_SAFE_INTEGER];
    expect(decodeBuffers(encodeBuffers(buffers))).toEqual(buffers);
  });

  it('returns an independent copy each time', () => {
    const a = encodeBuffers([1]);
    const b = encodeBuffers([2]);
    expect(decodeBuffers(a)).toEqual([1]);
    expect(decodeBuffers(b)).toEqual([2]);
    expect(a.length).toBe(9);
  });

  it('refuses an unknown tag as corrupt state', () => {
    expect(() => decodeBuffers(new Uint8Array([9]))).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
  });
});
