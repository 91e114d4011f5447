import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey, type KeyType } from './keyEncoding.js';
import { SluiceError } from './errors.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const enc = (values: unknown[], types: KeyType[]) => hex(encodeKey(values, types));

const windowType: KeyType = {
  struct: [
    { name: 'start', type: 'timestamp' },
    { name: 'end', type: 'timestamp' },
  ],
};

describe('encodeKey', () => {
  it('keeps tuples apart that concatenate to the same text', () => {
    expect(enc(['a', 'bc'], ['string', 'string'])).not.toBe(enc(['ab', 'c'], ['string', 'string']));
    expect(enc(['', 'a'], ['string', 'string'])).not.toBe(enc(['a', ''], ['string', 'string']));
    expect(enc(['a\0', 'b'], ['string', 'string'])).not.toBe(enc(['a', '\0b'], ['string', 'string']));
    expect(enc(['a\0\0', ''], ['string', 'string'])).not.toBe(enc(['a', '\0\0'], ['string', 'string']));
  });

  it('keeps null apart from empty and zero values', () => {
    expect(enc([null], ['string'])).not.toBe(enc([''], ['string']));
    expect(enc([null], ['long'])).not.toBe(enc([0], ['long']));
    expect(enc([null], ['boolean'])).not.toBe(enc([false], ['boolean']));
    expect(enc([null, 'x'], ['string', 'string'])).not.toBe(enc(['', 'x'], ['string', 'string']));
    expect(enc([null], [windowType])).not.toBe(enc([{ start: null, end: null }], [windowType]));
  });

  it('treats undefined as null (a row may omit a field)', () => {
    expect(enc([undefined], ['string'])).toBe(enc([null], ['string']));
    expect(enc([{ start: 1 }], [windowType])).toBe(enc([{ start: 1, end: null }], [windowType]));
  });

  it('gives one encoding to -0 and 0, and to every NaN', () => {
    expect(enc([-0], ['double'])).toBe(enc([0], ['double']));
    const otherNaN = new Float64Array(new BigUint64Array([0x7ff0000000000001n]).buffer)[0];
    expect(Number.isNaN(otherNaN)).toBe(true);
    expect(enc([otherNaN], ['double'])).toBe(enc([NaN], ['double']));
    expect(enc([NaN], ['double'])).not.toBe(enc([Infinity], ['double']));
  });

  it('normalises bigint and Date to the number they equal', () => {
    expect(enc([5n], ['long'])).toBe(enc([5], ['long']));
    expect(enc([-(2n ** 60n)], ['long'])).toBe(enc([-(2 ** 60)], ['long']));
    expect(enc([new Date(1_700_000_000_123)], ['timestamp'])).toBe(enc([1_700_000_000_123], ['timestamp']));
    expect(enc([{ start: new Date(0), end: 10n }], [windowType])).toBe(enc([{ start: 0, end: 10 }], [windowType]));
  });

  it('keeps bigints that no double equals distinct from their nearest double', () => {
    const big = 2n ** 53n + 1n;
    expect(enc([big], ['long'])).not.toBe(enc([Number(big)], ['long']));
    expect(enc([big], ['long'])).not.toBe(enc([big + 1n], ['long']));
    expect(enc([-big], ['long'])).not.toBe(enc([big], ['long']));
    expect(enc([big, 1], ['long', 'long'])).not.toBe(enc([big, 2], ['long', 'long']));
  });

  it('reads struct fields in the order of the type, not of the object', () => {
    expect(enc([{ start: 1, end: 2 }], [windowType])).toBe(enc([{ end: 2, start: 1 }], [windowType]));
    expect(enc([{ start: 1, end: 2 }], [windowType])).not.toBe(enc([{ start: 2, end: 1 }], [windowType]));
  });

  it('keeps strings that TextEncoder would merge (lone surrogates) apart', () => {
    expect(enc(['\ud800'], ['string'])).not.toBe(enc(['\ufffd'], ['string']));
    expect(enc(['\ud83d\ude00'], ['string'])).toBe(hex(new Uint8Array([1, 0xf0, 0x9f, 0x98, 0x80, 0, 0])));
  });

  it('writes well-formed strings as UTF-8 with NUL escaped', () => {
    expect(enc(['hé'], ['string'])).toBe('0168c3a90000');
    expect(enc(['a\0b'], ['string'])).toBe('01610001620000');
  });

  it('does not collide over a large set of tricky tuples', () => {
    const strings = ['', 'a', 'b', 'ab', 'a\0', '\0', '\0\0', '\u0001', 'é', '\ud800', '\ufffd', null];
    const seen = new Map<string, string>();
    for (const x of strings)
      for (const y of strings)
        for (const n of [null, 0, 1, -1, 0.5, 2 ** 53, Infinity, -Infinity, NaN, 2n ** 64n]) {
          const key = enc([x, y, n], ['string', 'string', 'double']);
          const desc = JSON.stringify([x, y, typeof n === 'bigint' ? `${n}n` : String(n)]);
          const before = seen.get(key);
          if (before !== undefined) expect(desc).toBe(before);
          seen.set(key, desc);
        }
    expect(seen.size).toBe(12 * 12 * 10);
  });

  it('orders numbers, including negatives, by their bytes', () => {
    const nums = [-Infinity, -1e300, -2, -1, -0.5, 0, 0.5, 1, 2, 1e300, Infinity];
    const encoded = nums.map((n) => enc([n], ['double']));
    expect([...encoded].sort()).toEqual(encoded);
  });

  it('rejects values of the wrong type with INVALID_STATE_KEY', () => {
    for (const [v, t] of [
      [5, 'string'],
      ['5', 'long'],
      [1, 'boolean'],
      ['x', 'null'],
      [5, windowType],
    ] as Array<[unknown, KeyType]>) {
      expect(() => encodeKey([v], [t])).toThrow(expect.objectContaining({ code: 'INVALID_STATE_KEY' }));
    }
    expect(() => encodeKey([1, 2], ['long'])).toThrow(SluiceError);
  });

  it('returns a fresh array each call', () => {
    const a = encodeKey(['x'], ['string']);
    const b = encodeKey(['y'], ['string']);
    expect(hex(a)).not.toBe(hex(b));
    expect(a.buffer).not.toBe(b.buffer);
  });
});

describe('decodeKey', () => {
  it('round-trips every type', () => {
    const types: KeyType[] = ['string', 'int', 'long', 'double', 'boolean', 'timestamp', 'null', windowType, 'long'];
    const values = ['a\0é\ud800😀', 7, -(2 ** 40), -0.25, true, 1_700_000_000_000, null, { start: 0, end: null }, 2n ** 70n + 1n];
    const k = encodeKey(values, types);
    const back = decodeKey(k, types);
    expect(back).toEqual(values);
    expect(hex(encodeKey(back, types))).toBe(hex(k));
  });

  it('rejects bytes that do not match the types', () => {
    const k = encodeKey(['abc'], ['string']);
    expect(() => decodeKey(k.subarray(0, 3), ['string'])).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
    expect(() => decodeKey(k, ['string', 'string'])).toThrow(SluiceError);
  });
});
