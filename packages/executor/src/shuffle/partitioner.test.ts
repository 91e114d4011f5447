/**
 * The partition function of a stateless shuffle, pinned by fixed vectors: the workers' exchange
 * tasks and the driver's split of a join's static side both call it, and a change of these numbers
 * would send equal keys to different partitions across a version (a replayed batch is planned
 * again, but the vectors keep the function from changing by accident).
 */
import { describe, expect, it } from 'vitest';
import { murmur3_x86_32, encodeKey } from '@sluice/state';
import { partitionRows, shufflePartition } from './partitioner.js';

describe('shufflePartition', () => {
  it.each([
    [[1], ['long'], 7, 4],
    [['a'], ['string'], 200, 66],
    [['k123'], ['string'], 200, 162],
    [['a', 2], ['string', 'long'], 16, 10],
    [[true], ['boolean'], 3, 0],
    [[1_700_000_000_000], ['timestamp'], 10, 2],
    [[null], ['long'], 7, 6],
  ] as const)('%j as %j of %i partitions is %i', (values, types, partitions, expected) => {
    expect(shufflePartition(values, types, partitions)).toBe(expected);
    // It is murmur3-32 of the canonical key encoding, the bytes state keys hash by.
    expect(murmur3_x86_32(encodeKey(values, types)) % partitions).toBe(expected);
  });

  it('places a number by its value whatever its column type, -0 with 0, and every NaN together', () => {
    const p = (v: unknown, t: 'int' | 'long' | 'double') => shufflePartition([v], [t], 7);
    expect(new Set([p(1, 'int'), p(1, 'long'), p(1.0, 'double')])).toEqual(new Set([4]));
    expect(p(-0, 'double')).toBe(p(0, 'double'));
    expect(p(Number.NaN, 'double')).toBe(p(0 / 0, 'double'));
  });

  it('partitionRows splits rows by their key columns as shufflePartition places them', () => {
    const schema = [
      { name: 'id', type: 'long' as const, nullable: true },
      { name: 'name', type: 'string' as const, nullable: true },
    ];
    const rows = Array.from({ length: 50 }, (_, i) => ({ id: i % 9, name: `n${i}` }));
    const parts = partitionRows(rows, ['id'], schema, 4);
    expect(parts.flat()).toHaveLength(50);
    parts.forEach((part, p) => {
      for (const r of part) expect(shufflePartition([r.id], ['long'], 4)).toBe(p);
    });
  });
});
