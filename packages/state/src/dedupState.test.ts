import { describe, expect, it } from 'vitest';
import { decodeDedupValue, encodeDedupValue } from './dedupState.js';

describe('the deduplication state value', () => {
  it('is the version byte, then the expiry when the key has one', () => {
    expect([...encodeDedupValue(null)]).toEqual([1]);
    expect([...encodeDedupValue(26_000)]).toEqual([1, 0x40, 0xd9, 0x64, 0, 0, 0, 0, 0]);
    expect(decodeDedupValue(encodeDedupValue(null))).toEqual({ expiryMs: null });
    expect(decodeDedupValue(encodeDedupValue(1_700_000_000_123))).toEqual({ expiryMs: 1_700_000_000_123 });
  });

  it('reads a value of the format before it (a msgpack pair) as seen, and anything else as STATE_STORE_CORRUPT', () => {
    // msgpack of [['a'], null], as earlier Sluice wrote it.
    expect(decodeDedupValue(Uint8Array.of(0x92, 0x91, 0xa1, 0x61, 0xc0))).toEqual({ expiryMs: undefined });
    expect(() => decodeDedupValue(Uint8Array.of(7, 1))).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
  });
});
