import { describe, expect, it } from 'vitest';
import { murmur3_x86_32 } from './murmur3.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

// Vectors from the reference C implementation (cross-checked with Python's mmh3 5.3.0).
const vectors: Array<[Uint8Array, number, number]> = [
  [new Uint8Array(0), 0, 0],
  [new Uint8Array(0), 1, 0x514e28b7],
  [new Uint8Array(0), 0xffffffff, 0x81f16f39],
  [new Uint8Array([0, 0, 0, 0]), 0, 0x2362f9de],
  [new Uint8Array([0, 0, 0]), 0, 0x85f0b427],
  [new Uint8Array([0]), 0, 0x514e28b7],
  [new Uint8Array([0xff, 0xff, 0xff, 0xff]), 0, 0x76293b50],
  [new Uint8Array([0x21, 0x43, 0x65, 0x87]), 0, 0xf55b516b],
  [new Uint8Array([0x21, 0x43, 0x65]), 0, 0x7e4a8634],
  [new Uint8Array([0x21, 0x43]), 0, 0xa0f7b07a],
  [new Uint8Array([0x21]), 0, 0x72661cf4],
  [utf8('test'), 0, 0xba6bd213],
  [utf8('abc'), 0, 0xb3dd93fa],
  [utf8('aaaa'), 0x9747b28c, 0x5a97808a],
  [utf8('Hello, world!'), 0, 0xc0363e43],
  [utf8('Hello, world!'), 1234, 0xfaf6cdb3],
  [utf8('The quick brown fox jumps over the lazy dog'), 0, 0x2e4ff723],
  [utf8('ππππ'), 0x9747b28c, 0x474dc9a8],
];

describe('murmur3_x86_32', () => {
  it.each(vectors.map(([b, s, h]) => [Buffer.from(b).toString('hex') || '(empty)', s, h, b] as const))(
    'hashes %s with seed %d to %d',
    (_hex, seed, expected, bytes) => {
      expect(murmur3_x86_32(bytes, seed)).toBe(expected);
    },
  );

  it('defaults to seed 0 and returns an unsigned 32-bit integer', () => {
    expect(murmur3_x86_32(utf8('Hello, world!'))).toBe(0xc0363e43);
    expect(murmur3_x86_32(utf8('Hello, world!'))).toBeGreaterThan(0x7fffffff);
  });

  it('reads a subarray from its own offset', () => {
    const big = utf8('xxtestyy');
    expect(murmur3_x86_32(big.subarray(2, 6))).toBe(0xba6bd213);
  });
});
