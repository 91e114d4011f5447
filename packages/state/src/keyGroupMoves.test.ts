import { describe, expect, it } from 'vitest';
import { clearKeyGroups, copyKeyGroups, indexKeysOf } from './keyGroupMoves.js';
import { dataKey, dataRange, decodeDataKey, indexKey, indexRange } from './layout.js';
import { openMemoryShard, MemoryVolume } from './MemoryShardStore.js';
import type { ShardStore } from './ShardStore.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** A shard holding keys k0..k(n-1), key group i % 8, each with an index entry at time i. */
async function filled(n: number): Promise<ShardStore> {
  const store = await openMemoryShard(new MemoryVolume('from'));
  const changes = [];
  for (let i = 0; i < n; i++) {
    changes.push({ key: dataKey(i % 8, bytes(`k${i}`)), value: bytes(`v${i}`), prior: null });
    changes.push({ key: indexKey(i, i % 8, bytes(`k${i}`)), value: new Uint8Array(0), prior: null });
  }
  await store.commit(4, changes, n, 0);
  return store;
}

const kgsOf = async (store: ShardStore) => {
  const [gte, lt] = dataRange();
  return (await store.range(gte, lt)).map(([k]) => decodeDataKey(k).kg);
};

describe('moving key groups between shards', () => {
  it('copies the data and index entries of the ranges, counts rows and bytes, and keeps the target marker', async () => {
    const from = await filled(40);
    const to = await openMemoryShard(new MemoryVolume('to'));
    const r = await copyKeyGroups(from, [
      {
        to,
        ranges: [
          [2, 4],
          [6, 7],
        ],
      },
    ]);
    expect(r.rows).toBe(15);
    expect(r.bytes).toBeGreaterThan(15 * 5);
    expect(new Set(await kgsOf(to))).toEqual(new Set([2, 3, 6]));
    expect((await indexKeysOf(to, [[0, 8]])).length).toBe(15);
    expect(to.numRows).toBe(15);
    expect(to.marker).toBe(-1);
  });

  it('sends each target its own ranges, data and index entries, from one scan of the source', async () => {
    const from = await filled(40);
    const a = await openMemoryShard(new MemoryVolume('a'));
    const b = await openMemoryShard(new MemoryVolume('b'));
    const r = await copyKeyGroups(from, [
      { to: a, ranges: [[0, 2]] },
      {
        to: b,
        ranges: [
          [4, 5],
          [7, 8],
        ],
      },
    ]);
    expect(r.rows).toBe(20);
    expect(r.sourceKeys.index.length).toBe(20);
    expect(r.sourceKeys.data.length).toBe(20);
    expect(new Set(await kgsOf(a))).toEqual(new Set([0, 1]));
    expect(new Set(await kgsOf(b))).toEqual(new Set([4, 7]));
    expect((await indexKeysOf(a, [[0, 8]])).length).toBe(10);
    expect((await indexKeysOf(a, [[0, 2]])).length).toBe(10);
    expect((await indexKeysOf(b, [[0, 8]])).length).toBe(10);
    expect(
      (
        await indexKeysOf(b, [
          [4, 5],
          [7, 8],
        ])
      ).length,
    ).toBe(10);
  });

  it('is idempotent: a copy done twice (a resumed repartition) leaves one copy', async () => {
    const from = await filled(40);
    const to = await openMemoryShard(new MemoryVolume('to'));
    await copyKeyGroups(from, [{ to, ranges: [[0, 2]] }]);
    await copyKeyGroups(from, [{ to, ranges: [[0, 2]] }]);
    expect(to.numRows).toBe(10);
    const [gte, lt] = indexRange();
    expect((await to.range(gte, lt)).length).toBe(10);
  });

  it('clears the ranges at the source (garbage collection), again without effect', async () => {
    const from = await filled(40);
    expect(await clearKeyGroups(from, [[0, 4]])).toBe(20);
    expect(await clearKeyGroups(from, [[0, 4]])).toBe(0);
    expect(new Set(await kgsOf(from))).toEqual(new Set([4, 5, 6, 7]));
    expect((await indexKeysOf(from, [[0, 8]])).length).toBe(20);
    expect(from.numRows).toBe(20);
  });

  it('after a reset, the shard is at the control batch with no undo records', async () => {
    const from = await filled(4);
    await from.resetMarker(9);
    expect(from.marker).toBe(9);
    expect(await from.rollbackIfAt(9).catch((e: { code: string }) => e.code)).toBe('STATE_UNDO_MISSING');
  });

  /** The fixture's index time of a row: i for key k<i> (decoded from the data key). */
  const timeOfKey = (dk: Uint8Array): number => Number(new TextDecoder().decode(decodeDataKey(dk).key).slice(1));
  const indexOf = async (store: ShardStore) => (await store.range(...indexRange())).map(([k]) => Buffer.from(k).toString('hex')).sort();

  it("with the operator's index time, writes each row's index entry beside it and reads no index of the source", async () => {
    const from = await filled(40);
    let indexReads = 0;
    const counting: ShardStore = Object.assign(Object.create(from) as ShardStore, {
      range: (gte: Uint8Array, lt: Uint8Array, limit?: number) => {
        if (gte[0] === 0x02) indexReads++;
        return from.range(gte, lt, limit);
      },
    });
    const viaTime = await openMemoryShard(new MemoryVolume('via-time'));
    const viaScan = await openMemoryShard(new MemoryVolume('via-scan'));
    const r = await copyKeyGroups(
      counting,
      [
        {
          to: viaTime,
          ranges: [
            [2, 4],
            [6, 7],
          ],
        },
      ],
      undefined,
      timeOfKey,
    );
    expect(indexReads).toBe(0);
    await copyKeyGroups(from, [
      {
        to: viaScan,
        ranges: [
          [2, 4],
          [6, 7],
        ],
      },
    ]);
    expect(await indexOf(viaTime)).toEqual(await indexOf(viaScan));
    expect(r.sourceKeys.index.map((k) => Buffer.from(k).toString('hex')).sort()).toEqual(await indexOf(viaScan));
    expect(viaTime.numRows).toBe(15);
  });

  it('a row whose index time is not known (null: none; undefined: unknown) falls back to the scan, with the same result', async () => {
    const from = await filled(40);
    const to = await openMemoryShard(new MemoryVolume('fallback'));
    const viaScan = await openMemoryShard(new MemoryVolume('fallback-scan'));
    let n = 0;
    await copyKeyGroups(from, [{ to, ranges: [[0, 8]] }], undefined, (dk) => (++n === 7 ? undefined : timeOfKey(dk)));
    await copyKeyGroups(from, [{ to: viaScan, ranges: [[0, 8]] }]);
    expect(await indexOf(to)).toEqual(await indexOf(viaScan));
    // null: the row has no index entry.
    const none = await openMemoryShard(new MemoryVolume('none'));
    const r = await copyKeyGroups(from, [{ to: none, ranges: [[0, 8]] }], undefined, () => null);
    expect(await indexOf(none)).toEqual([]);
    expect(r.sourceKeys.index).toEqual([]);
  });

  it('clears with the keys the copy read: the same result as a scan, and the row count follows', async () => {
    const from = await filled(40);
    const to = await openMemoryShard(new MemoryVolume('known-to'));
    const { sourceKeys } = await copyKeyGroups(from, [{ to, ranges: [[0, 4]] }], undefined, timeOfKey);
    expect(await clearKeyGroups(from, [[0, 4]], undefined, sourceKeys)).toBe(20);
    expect(new Set(await kgsOf(from))).toEqual(new Set([4, 5, 6, 7]));
    expect((await indexKeysOf(from, [[0, 4]])).length).toBe(0);
    expect((await indexKeysOf(from, [[0, 8]])).length).toBe(20);
    expect(from.numRows).toBe(20);
  });
});
