import { describe, expect, it } from 'vitest';
import { murmur3Value, xxhash64Value } from './sparkHashes.js';

describe("Spark's hashes", () => {
  it("give Spark's values for its documented examples: hash('Spark', array(123), 2) and xxhash64 of the same", () => {
    const fold = <T>(f: (v: unknown, t: never, seed: T) => T, seed: T): T =>
      [
        ['Spark', 'string'],
        [[123], { array: 'int' }],
        [2, 'int'],
      ].reduce((h, [v, t]) => f(v, t as never, h), seed);
    expect(fold(murmur3Value, 42)).toBe(-1321691492);
    expect(BigInt.asIntN(64, fold(xxhash64Value, 42n))).toBe(5602566077635097486n);
  });

  it('hash longer strings through every block size of XxHash64', () => {
    // Lengths 0..40 exercise the 32-byte stripes, the 8- and 4-byte steps and the single bytes; equal text hashes equally.
    const seen = new Set<bigint>();
    for (let n = 0; n <= 40; n++) seen.add(xxhash64Value('x'.repeat(n), 'string'));
    expect(seen.size).toBe(41);
    expect(xxhash64Value('abc', 'string')).toBe(xxhash64Value('abc', 'string'));
  });
});
