/**
 * indexTimeOf against what the state tasks wrote: after batches of a windowed aggregation and of
 * the deduplications, every stored row's index time read back from the row is the time of its
 * index entry, and a row without one reads as null.
 */
import { describe, expect, it } from 'vitest';
import { dataRange, decodeDataKey, decodeIndexKey, indexRange } from '@sluice/state';
import { indexTimeOf } from './registry.js';
import { operatorUsesWatermark } from './registry.js';
import type { StatefulOp } from './types.js';
import { BATCHES, freshShards, h, query, r, run, S, SCHEMA, useFreshShards, windowed, type Batch, type Query } from './stateTaskTestKit.js';

useFreshShards();

const DEDUP_BATCHES: Batch[] = [
  {
    batchId: 0,
    watermarkMs: 0,
    tasks: [
      [r(5, 'a'), r(7, 'a')],
      [r(20, 'b'), r(6, 'a')],
    ],
  },
  { batchId: 1, watermarkMs: 10 * S, tasks: [[r(12, 'a'), r(8, 'c')], [r(30, 'd')]] },
];

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

async function timesAfter(q: Query, batches: Batch[]): Promise<{ fromRows: Record<string, number | null | undefined>; fromIndex: Record<string, number> }> {
  await freshShards();
  for (const b of batches) await run(q, b);
  const store = h.store();
  const timeOf = indexTimeOf(q.op, SCHEMA, operatorUsesWatermark(q.op, true, q.outputMode));
  const fromRows = Object.fromEntries((await store.range(...dataRange())).map(([k, v]) => [hex(k), timeOf(k, v)]));
  const fromIndex = Object.fromEntries(
    (await store.range(...indexRange())).map(([k]) => {
      const { timeMs, kg, key } = decodeIndexKey(k);
      return [hex(Uint8Array.of(1, kg >>> 8, kg & 0xff, ...key)), timeMs];
    }),
  );
  return { fromRows, fromIndex };
}

describe('indexTimeOf', () => {
  it.each([
    ['a windowed aggregation (append)', query(windowed, 'append'), BATCHES],
    ['a windowed aggregation (complete: index entries all the same)', query(windowed, 'complete'), BATCHES],
    ['dropDuplicates over an event time', query({ kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: 'ts' }, 'append'), DEDUP_BATCHES],
    [
      'dropDuplicatesWithinWatermark (first time + delay)',
      query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append'),
      DEDUP_BATCHES,
    ],
  ] as const)("%s: the time each stored row reads back is its index entry's", async (_name, q, batches) => {
    const { fromRows, fromIndex } = await timesAfter(q, [...batches]);
    expect(Object.keys(fromRows).length).toBeGreaterThan(0);
    const expected = Object.fromEntries(Object.keys(fromRows).map((k) => [k, fromIndex[k] ?? null]));
    expect(fromRows).toEqual(expected);
    expect(Object.values(fromRows).some((t) => t !== null)).toBe(true);
  });

  it('a deduplication without event time, and an aggregation without an event-time key, have no index entries: null', async () => {
    const plain: StatefulOp = {
      kind: 'aggregate',
      keys: [{ op: 'col', name: 'id' }],
      keyNames: ['id'],
      aggs: [{ fn: 'count', arg: null, name: 'count' }],
      eventTimeKey: null,
    };
    for (const q of [query(plain, 'update'), query({ kind: 'dropDuplicates', columns: ['id'], eventTimeColumn: null }, 'append')]) {
      const { fromRows, fromIndex } = await timesAfter(q, q.op.kind === 'aggregate' ? [...BATCHES] : [...DEDUP_BATCHES]);
      expect(fromIndex).toEqual({});
      expect(Object.values(fromRows).length).toBeGreaterThan(0);
      expect(Object.values(fromRows).every((t) => t === null)).toBe(true);
    }
  });

  it('a deduplication value of the format before dedupState.ts reads as unknown: the repartition scans then', () => {
    const timeOf = indexTimeOf({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 1 }, SCHEMA, true);
    const key = Uint8Array.of(1, 0, 3, 1, 0x61, 0, 0);
    expect(decodeDataKey(key).kg).toBe(3);
    expect(timeOf(key, Uint8Array.of(0x92, 0x91, 0xa1, 0x61, 0xc0))).toBeUndefined();
  });
});
