/**
 * A processor's shuffle blocks (shuffleCodec.ts): each key's group, bytes and rows come back in
 * order, keys of any length and groups of any size, and an empty block is no records.
 */
import { describe, expect, it } from 'vitest';
import { encodeKey } from '@sluice/state';
import { AggregateBlockWriter, decodeAggregateBlock, decodeGroupBlock, encodeGroupBlock, forEachAggregateRecord, type GroupRecord } from './shuffleCodec.js';
import { ShuffleWriter } from './ShuffleWriter.js';

describe('processor blocks', () => {
  it("round-trip each key's group, bytes and rows, in order", () => {
    const records: GroupRecord[] = [
      [
        7,
        encodeKey(['a'], ['string']),
        [
          { k: 'a', v: 1 },
          { k: 'a', v: 2 },
        ],
      ],
      [65535, encodeKey(['x'.repeat(300)], ['string']), [{ k: 'x'.repeat(300), v: null }]],
      [0, encodeKey([null], ['string']), [{ k: null, v: 3 }]],
    ];
    const back = decodeGroupBlock(encodeGroupBlock(records));
    expect(back.map(([kg, key, rows]) => [kg, [...key], rows])).toEqual(records.map(([kg, key, rows]) => [kg, [...key], rows]));
    expect(decodeGroupBlock(new Uint8Array(0))).toEqual([]);
  });

  it('are written one per partition by the shuffle writer, every row once', () => {
    const writer = new ShuffleWriter({ keyGroups: 64, partitions: 4, shards: 2 }, ['long']);
    for (let k = 0; k < 50; k++) writer.addGroup([k], [{ id: k }, { id: k }]);
    const blocks = writer.finish();
    expect(blocks.map((b) => b.partition)).toEqual([...blocks.map((b) => b.partition)].sort((a, b) => a - b));
    const rows = blocks.flatMap((b) => decodeGroupBlock(b.data).flatMap(([, , r]) => r.map((x) => x.id)));
    expect(rows.sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 50 }, (_, k) => [k, k]).flat());
  });
});

describe('aggregation blocks', () => {
  it('carry buffers and keys over 64 KiB (a collect_set of many values) whole', () => {
    const writer = new AggregateBlockWriter();
    const big = { g: Array.from({ length: 30_000 }, (_, i) => i * 1000) };
    const longKey = encodeKey(['k'.repeat(70_000)], ['string']);
    writer.add(3, longKey, 1234, [5, big]);
    writer.add(4, encodeKey(['small'], ['string']), null, [1, { g: [1] }]);
    const records = decodeAggregateBlock(writer.finish(), ['string']);
    expect(records.map(([kg, , values, buffers]) => [kg, values, buffers])).toEqual([
      [3, ['k'.repeat(70_000)], [5, big]],
      [4, ['small'], [1, { g: [1] }]],
    ]);
    const times: Array<number | null> = [];
    forEachAggregateRecord(writer.finish(), (_key, t) => times.push(t));
    expect(times).toEqual([1234, null]);
  });
});
