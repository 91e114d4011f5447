import { describe, expect, it } from 'vitest';
import { decodeDedupValue, encodeDedupValue } from './dedupState.js';

describe('the deduplication state value', () => {
  it('is the state value header of kind dedup, with the expiry as its index time when the key has one', () => {
    expect([...encodeDedupValue(null)]).toEqual([0xf5, 3, 2, 0]);
    expect([...encodeDedupValue(26_000)]).toEqual([0xf5, 3, 2, 1, 0, 0, 0, 0, 0, 0x64, 0xd9, 0x40]);
    expect(decodeDedupValue(encodeDedupValue(null))).toEqual({ expiryMs: null });
    expect(decodeDedupValue(encodeDedupValue(1_700_000_000_123))).toEqual({ expiryMs: 1_700_000_000_123 });
  });

  it('reads the values of the formats before the header', () => {
    // Version 1: the version byte, then the expiry big-endian.
    expect(decodeDedupValue(Uint8Array.of(1))).toEqual({ expiryMs: null });
    expect(decodeDedupValue(Uint8Array.of(1, 0x40, 0xd9, 0x64, 0, 0, 0, 0, 0))).toEqual({ expiryMs: 26_000 });
    // msgpack of [['a'], null], as earlier Sluice wrote it: seen, expiry unknown.
    expect(decodeDedupValue(Uint8Array.of(0x92, 0x91, 0xa1, 0x61, 0xc0))).toEqual({ expiryMs: undefined });
  });

  it('is STATE_STORE_CORRUPT for an unknown format, another kind, or a newer version', () => {
    const corrupt = expect.objectContaining({ code: 'STATE_STORE_CORRUPT' });
    expect(() => decodeDedupValue(Uint8Array.of(7, 1))).toThrow(corrupt);
    expect(() => decodeDedupValue(Uint8Array.of(0xf5, 1, 1, 0))).toThrow(/kind 1, not 3/);
    expect(() => decodeDedupValue(Uint8Array.of(0xf5, 3, 9, 0))).toThrow(/version 9, newer/);
  });
});
