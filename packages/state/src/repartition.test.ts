import { describe, expect, it } from 'vitest';
import { contiguousAssignment, type StateLayout } from './layout.js';
import { movesBetween, planRepartition, planShardAssignment, shardOfKeyGroupIn, type AssignedLayout } from './repartition.js';

const G = 4096;
const created = (partitions: number, shards: number): AssignedLayout => {
  const l: StateLayout = { keyGroups: G, partitions, shards };
  return { ...l, shardOfPartition: contiguousAssignment(l) };
};
const fraction = (from: AssignedLayout, to: StateLayout) => planRepartition(from, to).numKeyGroupsMoved / G;

describe('planRepartition', () => {
  it('200 -> 100 partitions on 2 shards moves nothing', () => {
    const plan = planRepartition(created(200, 2), { keyGroups: G, partitions: 100, shards: 2 });
    expect(plan.moves).toEqual([]);
    expect(plan.touchedShards).toEqual([]);
  });

  it('with the shard count unchanged, moves only key groups at shard boundaries', () => {
    for (const [n, np, s] of [
      [200, 7, 2],
      [200, 64, 2],
      [7, 200, 2],
      [100, 33, 4],
      [64, 7, 3],
    ] as const) {
      const from = created(n, s);
      const plan = planRepartition(from, { keyGroups: G, partitions: np, shards: s });
      // Each moved range starts or ends at an old shard boundary.
      const boundaries = new Set<number>();
      for (let kg = 1; kg < G; kg++) if (shardOfKeyGroupIn(kg, from) !== shardOfKeyGroupIn(kg - 1, from)) boundaries.add(kg);
      expect(plan.moves.length).toBeLessThanOrEqual(boundaries.size);
      for (const m of plan.moves) {
        expect(boundaries.has(m.kgStart) || boundaries.has(m.kgEnd), `${n}->${np} on ${s}: ${JSON.stringify(m)}`).toBe(true);
      }
    }
  });

  it('moves about the least that balances the shards when their count changes', () => {
    expect(fraction(created(200, 2), { keyGroups: G, partitions: 200, shards: 3 })).toBeLessThanOrEqual(0.34);
    expect(fraction(created(200, 4), { keyGroups: G, partitions: 200, shards: 5 })).toBeLessThanOrEqual(0.21);
    expect(fraction(created(200, 4), { keyGroups: G, partitions: 200, shards: 8 })).toBeLessThanOrEqual(0.51);
    expect(fraction(created(200, 2), { keyGroups: G, partitions: 200, shards: 1 })).toBeCloseTo(0.5, 2);
    expect(fraction(created(200, 3), { keyGroups: G, partitions: 200, shards: 3 })).toBe(0);
  });

  it('balances every shard to within one partition, over chains of changes', () => {
    let layout = created(200, 2);
    for (const [n, s] of [
      [100, 2],
      [7, 2],
      [64, 3],
      [64, 1],
      [200, 5],
      [13, 13],
      [4096, 7],
    ] as const) {
      const table = planShardAssignment(layout, { keyGroups: G, partitions: n, shards: s });
      const counts = Array.from({ length: s }, (_, shard) => table.filter((x) => x === shard).length);
      expect(table).toHaveLength(n);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      layout = { keyGroups: G, partitions: n, shards: s, shardOfPartition: table };
    }
  });

  it('lists the moves as ranges between the shards that give and receive, and none for the same layout', () => {
    const from = created(200, 2);
    const plan = planRepartition(from, { keyGroups: G, partitions: 200, shards: 3 });
    expect(plan.touchedShards).toEqual([0, 1, 2]);
    expect(plan.moves.every((m) => m.to === 2 && m.kgStart < m.kgEnd)).toBe(true);
    expect(plan.moves.reduce((k, m) => k + m.kgEnd - m.kgStart, 0)).toBe(plan.numKeyGroupsMoved);
    expect(movesBetween(plan.layout, plan.layout)).toEqual({ moves: [], touchedShards: [], numKeyGroupsMoved: 0 });
  });

  it('refuses another key-group count', () => {
    expect(() => planRepartition(created(8, 2), { keyGroups: 1024, partitions: 8, shards: 2 })).toThrow(RangeError);
  });
});
