import { describe, expect, it } from 'vitest';
import { SluiceError } from './errors.js';
import { inShard, valueHeader, valueHeaderBytes, ValueKind, valuePayloadStart, withValueHeader, writeValueHeader } from './stateValue.js';

describe('the state value header', () => {
  it('records the kind, version, index time and row count, and where the payload starts', () => {
    const payload = Uint8Array.of(9, 8, 7);
    for (const [indexTime, rows] of [
      [null, 1],
      [1_700_000_000_123, 1],
      [undefined, 1],
      [-5, 40_000],
      [null, 0],
    ] as const) {
      const v = withValueHeader(ValueKind.joinRows, 3, indexTime, rows, payload);
      const h = valueHeader(v);
      expect(h).toEqual({ kind: ValueKind.joinRows, version: 3, indexTime, rows, start: valueHeaderBytes(indexTime, rows) });
      expect(valuePayloadStart(v)).toBe(h?.start);
      expect([...v.subarray(h?.start)]).toEqual([9, 8, 7]);
    }
  });

  it('writes in place, little-endian, at any offset', () => {
    const bytes = new Uint8Array(20);
    const end = writeValueHeader(bytes, new DataView(bytes.buffer), 2, ValueKind.aggregate, 1, 1, 2);
    expect(end).toBe(18);
    expect([...bytes.subarray(2, 18)]).toEqual([0xf5, 1, 1, 5, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 2, 0, 0, 0]);
  });

  it('answers undefined for a value written before the header', () => {
    expect(valueHeader(Uint8Array.of(0x53, 0, 0))).toBeUndefined();
    expect(valueHeader(Uint8Array.of(0x92, 0xc0, 0))).toBeUndefined();
    expect(valueHeader(new Uint8Array(0))).toBeUndefined();
  });

  it('is STATE_STORE_CORRUPT for a damaged header, and names the shard once the task adds it', () => {
    for (const bad of [Uint8Array.of(0xf5, 1), Uint8Array.of(0xf5, 1, 1, 3), Uint8Array.of(0xf5, 1, 1, 1, 0, 0)]) {
      expect(() => valueHeader(bad)).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
    }
    let err: unknown;
    try {
      valueHeader(Uint8Array.of(0xf5, 1, 1, 1));
    } catch (e) {
      err = inShard(e, '/ck/state/0/3');
    }
    expect(err).toMatchObject({
      code: 'STATE_STORE_CORRUPT',
      file: '/ck/state/0/3',
      message: expect.stringMatching(/^state shard \/ck\/state\/0\/3: a state value has a damaged header/),
    });
    const named = new SluiceError('STATE_STORE_CORRUPT', 'x', { file: '/elsewhere' });
    expect(inShard(named, '/ck/state/0/3')).toBe(named);
  });
});
