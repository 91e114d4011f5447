import { describe, expect, it } from 'vitest';
import {
  dataKey,
  dataKeyOf,
  dataRange,
  decodeDataKey,
  decodeIndexKey,
  indexKeyTime,
  indexKey,
  indexRange,
  indexRangeUpTo,
  keyGroupOf,
  keyGroupRange,
  keyGroupsDataRange,
  contiguousAssignment,
  partitionOfKeyGroup,
  partitionsIn,
  shardOfPartition,
  undoKey,
  batchIdOfUndoKey,
  validateLayout,
  type StateLayout,
} from './layout.js';
import { encodeKey } from './keyEncoding.js';
import { shardOfKeyGroupIn } from './repartition.js';
import { murmur3_x86_32 } from './murmur3.js';

const cmp = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b);
const inRange = (k: Uint8Array, [gte, lt]: [Uint8Array, Uint8Array]) => cmp(k, gte) >= 0 && cmp(k, lt) < 0;

const layouts: StateLayout[] = [
  { keyGroups: 1, partitions: 1, shards: 1 },
  { keyGroups: 10, partitions: 3, shards: 2 },
  { keyGroups: 4096, partitions: 200, shards: 8 },
  { keyGroups: 4096, partitions: 4096, shards: 7 },
  { keyGroups: 4096, partitions: 7, shards: 7 },
  { keyGroups: 1000, partitions: 999, shards: 1 },
  { keyGroups: 65536, partitions: 300, shards: 16 },
  { keyGroups: 65536, partitions: 65536, shards: 65535 },
];

describe('layout', () => {
  it.each(layouts)('gives every key group one partition and every partition one shard: %o', (layout) => {
    validateLayout(layout);
    const { keyGroups: g, partitions: n, shards: s } = layout;
    // Plain comparisons collected into one list: expect() per key group is too slow at 65536.
    const wrong: string[] = [];
    // Partition ranges tile [0, G) in order, each non-empty, and agree with partitionOfKeyGroup.
    let next = 0;
    for (let p = 0; p < n; p++) {
      const [start, end] = keyGroupRange(p, layout);
      if (start !== next || end <= start) wrong.push(`partition ${p} owns [${start}, ${end})`);
      for (let kg = start; kg < end; kg++) {
        if (partitionOfKeyGroup(kg, layout) !== p) wrong.push(`key group ${kg} is not in partition ${p}`);
      }
      next = end;
    }
    if (next !== g) wrong.push(`partitions end at ${next}`);
    // Shards hold contiguous, non-empty blocks of partitions that tile [0, N).
    const assigned = { ...layout, shardOfPartition: contiguousAssignment(layout) };
    let nextP = 0;
    for (let sh = 0; sh < s; sh++) {
      const parts = partitionsIn(assigned.shardOfPartition, sh);
      if (parts.length === 0) wrong.push(`shard ${sh} is empty`);
      for (const p of parts) {
        if (p !== nextP++) wrong.push(`shard ${sh} holds partition ${p} out of order`);
        if (shardOfPartition(p, layout) !== sh) wrong.push(`partition ${p} is not in shard ${sh}`);
      }
      const kgStart = keyGroupRange(parts[0] as number, layout)[0];
      const kgEnd = keyGroupRange(parts.at(-1) as number, layout)[1];
      if (shardOfKeyGroupIn(kgStart, assigned) !== sh || shardOfKeyGroupIn(kgEnd - 1, assigned) !== sh) {
        wrong.push(`shard ${sh} key groups [${kgStart}, ${kgEnd})`);
      }
    }
    if (nextP !== n) wrong.push(`shards end at partition ${nextP}`);
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it('checks every key group of small layouts exhaustively', () => {
    for (let g = 1; g <= 40; g++)
      for (let n = 1; n <= g; n++) {
        const layout = { keyGroups: g, partitions: n, shards: 1 };
        for (let kg = 0; kg < g; kg++) {
          const p = partitionOfKeyGroup(kg, layout);
          const [start, end] = keyGroupRange(p, layout);
          if (!(kg >= start && kg < end)) expect.fail(`G=${g} N=${n}: key group ${kg} maps to partition ${p}`);
        }
      }
  });

  it('rejects invalid layouts with INVALID_CONF naming the option', () => {
    const bad: Array<[StateLayout, string]> = [
      [{ keyGroups: 0, partitions: 1, shards: 1 }, 'sluice.sql.streaming.stateStore.keyGroups'],
      [{ keyGroups: 65537, partitions: 1, shards: 1 }, 'sluice.sql.streaming.stateStore.keyGroups'],
      [{ keyGroups: 1.5, partitions: 1, shards: 1 }, 'sluice.sql.streaming.stateStore.keyGroups'],
      [{ keyGroups: 10, partitions: 11, shards: 1 }, 'sluice.sql.streaming.stateStore.partitions'],
      [{ keyGroups: 10, partitions: 0, shards: 1 }, 'sluice.sql.streaming.stateStore.partitions'],
      [{ keyGroups: 10, partitions: 4, shards: 5 }, 'sluice.sql.streaming.stateStore.shards'],
      [{ keyGroups: 10, partitions: 4, shards: 0 }, 'sluice.sql.streaming.stateStore.shards'],
    ];
    for (const [layout, option] of bad) {
      expect(() => validateLayout(layout)).toThrow(expect.objectContaining({ code: 'INVALID_CONF', option }));
    }
    expect(() => validateLayout({ keyGroups: 65536, partitions: 65536, shards: 65536 })).not.toThrow();
  });

  it('hashes the canonical key with murmur3 into [0, keyGroups)', () => {
    const key = encodeKey(['user-1'], ['string']);
    expect(keyGroupOf(key, 4096)).toBe(murmur3_x86_32(key) % 4096);
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) {
      const kg = keyGroupOf(encodeKey([i], ['long']), 16);
      counts[kg] = (counts[kg] ?? 0) + 1;
    }
    for (const c of counts) expect(c).toBeGreaterThan(800);
  });
});

describe('key builders', () => {
  const key = encodeKey(['k'], ['string']);

  it('builds data keys as [0x01][kg u16 BE][key]', () => {
    const k = dataKey(0x1234, key);
    expect(Array.from(k.subarray(0, 3))).toEqual([0x01, 0x12, 0x34]);
    expect(decodeDataKey(k)).toEqual({ kg: 0x1234, key });
    expect(inRange(k, dataRange())).toBe(true);
    expect(inRange(k, keyGroupsDataRange(0x1234, 0x1235))).toBe(true);
    expect(inRange(k, keyGroupsDataRange(0, 0x1234))).toBe(false);
    expect(inRange(dataKey(65535, key), keyGroupsDataRange(65535, 65536))).toBe(true);
    expect(() => dataKey(65536, key)).toThrow(RangeError);
  });

  it('orders index keys by numeric time, negatives first, then key group and key', () => {
    const times = [-(2 ** 53) + 1, -86_400_000, -1, 0, 1, 999, 1_700_000_000_000, 2 ** 53 - 1];
    const keys = times.flatMap((t) => [indexKey(t, 7, key), indexKey(t, 8, key)]);
    const sorted = [...keys].sort(cmp);
    expect(sorted).toEqual(keys);
    for (const k of keys) {
      expect(inRange(k, indexRange())).toBe(true);
      expect(inRange(k, dataRange())).toBe(false);
    }
    const d = decodeIndexKey(indexKey(-5, 300, key));
    expect(d.timeMs).toBe(-5);
    expect(d.kg).toBe(300);
    expect(Array.from(d.key)).toEqual(Array.from(key));
    expect(dataKeyOf(indexKey(-5, 300, key))).toEqual(dataKey(300, key));
    expect(() => indexKey(1.5, 0, key)).toThrow(RangeError);
    for (const t of [
      0,
      -1,
      -5,
      1,
      2 ** 32 - 1,
      2 ** 32,
      -(2 ** 32) - 7,
      1_700_000_000_123,
      2 ** 52 + 60_000,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
    ]) {
      expect(indexKeyTime(indexKey(t, 7, key))).toBe(t);
    }
  });

  it('selects index entries with time <= the bound', () => {
    const entries = [-10, -1, 0, 5, 6].map((t) => indexKey(t, 65535, new Uint8Array([0xff, 0xff])));
    const upTo = (t: number) => entries.filter((k) => inRange(k, indexRangeUpTo(t))).map((k) => decodeIndexKey(k).timeMs);
    expect(upTo(-11)).toEqual([]);
    expect(upTo(-10)).toEqual([-10]);
    expect(upTo(-0.5)).toEqual([-10, -1]);
    expect(upTo(0)).toEqual([-10, -1, 0]);
    expect(upTo(5)).toEqual([-10, -1, 0, 5]);
    expect(upTo(5.9)).toEqual([-10, -1, 0, 5]);
    expect(upTo(Infinity)).toEqual([-10, -1, 0, 5, 6]);
    expect(upTo(-Infinity)).toEqual([]);
    expect(upTo(2 ** 70)).toEqual([-10, -1, 0, 5, 6]);
  });

  it('orders undo keys by batch id', () => {
    const ids = [0, 1, 255, 256, 2 ** 40];
    const ks = ids.map(undoKey);
    expect([...ks].sort(cmp)).toEqual(ks);
    expect(ks.map(batchIdOfUndoKey)).toEqual(ids);
  });
});
