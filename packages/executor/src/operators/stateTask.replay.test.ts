/**
 * The reduce side of stateful batches (runStateTask), continued: a retried or replayed batch is
 * exact, markers are sparse, deduplication, and a small batch over a large state writes O(1)
 * entries. The harness is stateTaskTestKit.ts.
 */
import { describe, expect, it } from 'vitest';
import { PREFIX_INDEX, shardOfPartition } from '@sluice/state';
import { partitionPartials, sortRows } from './mapSideTestKit.js';
import type { StateLayoutMsg } from '../task/messages.js';
import type { Row } from '../schema/types.js';
import {
  CACHES,
  freshShards,
  type Query,
  type Batch,
  type Outcome,
  shuffle,
  run,
  counts,
  contents,
  stateOf,
  dedupValues,
  S,
  SCHEMA,
  r,
  windowed,
  agg,
  query,
  BATCHES,
  m,
  dataKeysRead,
  h,
  reads,
  useFreshShards,
  expectExactReplay,
  withoutMemory,
  CACHE_OFF,
} from './stateTaskTestKit.js';

useFreshShards();

// ---- 3. retries and replays -------------------------------------------------------------------

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
  { batchId: 2, watermarkMs: 15 * S, tasks: [] },
  { batchId: 3, watermarkMs: 15 * S, tasks: [[r(16, 'a'), r(21, 'b')], [r(40, 'd')]] },
];

const retryCases: Array<[string, Query, Batch[]]> = [
  ['aggregation, append', query(windowed, 'append'), BATCHES],
  ['aggregation, update', query(windowed, 'update'), BATCHES],
  ['aggregation, complete', query(windowed, 'complete'), BATCHES],
  ['aggregation, append, 2 shards', query(windowed, 'append', { layout: { keyGroups: 16, partitions: 4, shards: 2 } }), BATCHES],
  ['dropDuplicates(id, ts)', query({ kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: 'ts' }, 'append'), DEDUP_BATCHES],
  [
    'dropDuplicatesWithinWatermark(id)',
    query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append'),
    DEDUP_BATCHES,
  ],
];

describe('runStateTask: a retried or replayed batch is exact', () => {
  for (const [cache, cacheBytes] of CACHES) {
    for (const [name, q, batches] of retryCases) {
      it(`${name} (${cache}): every batch run twice gives the rows, metrics and state bytes of one run`, () => expectExactReplay(q, batches, cacheBytes));
    }

    it(`an attempt that failed before or after its commit is retried exactly (${cache})`, async () => {
      await freshShards(cacheBytes);
      const q = query(windowed, 'update');
      const once: Outcome[] = [];
      for (const b of BATCHES) once.push(await run(q, b));
      const bytes = contents(h.volume(0));

      await freshShards(cacheBytes);
      await run(q, BATCHES[0]!); // opens the shard
      const outcomes: Outcome[] = [once[0]!];
      for (const b of BATCHES.slice(1)) {
        for (const when of ['before', 'after'] as const) {
          h.store().failNextCommit = when;
          await expect(run(q, b)).rejects.toThrow(/injected/);
        }
        outcomes.push(await run(q, b, 0, 2));
      }
      expect(withoutMemory(outcomes)).toEqual(withoutMemory(once));
      expect(contents(h.volume(0))).toEqual(bytes);
    });
  }

  it('a new attempt at the committed batch N (marker N) restores N-1 first, then redoes N exactly', async () => {
    const q = query(windowed, 'append');
    await run(q, BATCHES[0]!);
    const first = await run(q, BATCHES[1]!, 0, 0);
    const store = h.store();
    expect(store.marker).toBe(1);
    const afterFirst = contents(store.memory.volume);

    const from = store.calls.length;
    const second = await run(q, BATCHES[1]!, 0, 3);
    const rb = store.since(from)[0];
    expect(rb).toMatchObject({ op: 'rollback', batchId: 1, rolledBack: true, markerAfter: 0 });
    // After the rollback the shard holds batch 0's state: a0, b10, a20, no c30.
    expect(rb?.op === 'rollback' && rb.contentsAfter.filter((e) => e.startsWith('01')).length).toBe(3);
    expect(second.rows).toEqual(first.rows);
    expect(counts(second.state)).toEqual(counts(first.state));
    expect(contents(store.memory.volume)).toEqual(afterFirst);
    expect(store.memory.stats.rollbacks).toBe(1);
  });
});

// ---- 4. sparse markers ------------------------------------------------------------------------

describe('runStateTask: sparse markers', () => {
  it('a shard skipped in batch N, committed in N+1: a retry of N+1 restores N-1 (not N) and nothing older', async () => {
    const layout: StateLayoutMsg = { keyGroups: 16, partitions: 4, shards: 2 };
    const q = query(windowed, 'update', { layout });
    const shardOf = (id: string) => shardOfPartition(partitionPartials([r(1, id)], windowed, SCHEMA, layout).blocks[0]!.partition, layout);
    const ids = Array.from({ length: 50 }, (_, i) => `k${i}`);
    const [s0a, s0b] = ids.filter((id) => shardOf(id) === 0);
    const [s1a, s1b] = ids.filter((id) => shardOf(id) === 1);
    const batch = (batchId: number, rows: Row[]): Batch => ({ batchId, watermarkMs: 0, tasks: [rows] });

    const b0 = batch(0, [r(1, s0a!, 1), r(1, s1a!, 1)]);
    const b1 = batch(1, [r(1, s0b!, 1)]);
    const b2 = batch(2, [r(1, s1a!, 5), r(1, s1b!, 7)]);
    for (const s of [0, 1]) expect((await run(q, b0, s)).rows).toHaveLength(1);
    const shard1After0 = contents(h.volume(1));

    // Batch 1 has nothing for shard 1 (and nothing expires): it does not commit.
    expect((await run(q, b1, 0)).rows).toEqual(sortRows([agg(0, s0b!, 1, 1)]));
    const skipped = await run(q, b1, 1);
    expect(skipped.rows).toEqual(sortRows([]));
    expect(counts(skipped.state)).toEqual(m(1, 0, 0, 0));
    expect(h.store(1).marker).toBe(0);
    expect(h.store(1).memory.stats.commits).toBe(1);
    expect(contents(h.volume(1))).toEqual(shard1After0);

    // Batch 2 commits shard 1 (its undo records prior marker 0) and skips shard 0.
    const first = await run(q, b2, 1);
    expect(first.rows).toEqual(sortRows([agg(0, s1a!, 2, 6), agg(0, s1b!, 1, 7)]));
    expect(counts(first.state)).toEqual(m(2, 2, 0, 0));
    expect(h.store(1).marker).toBe(2);
    expect(await run(q, b2, 0)).toMatchObject({ rows: [] });
    expect(h.store(0).marker).toBe(1);
    const shard1After2 = contents(h.volume(1));

    // A retry of batch 2 on shard 1 rolls back to marker 0 and exactly the state after batch 0.
    const from = h.store(1).calls.length;
    const again = await run(q, b2, 1, 1);
    const rb = h.store(1).since(from)[0];
    expect(rb).toMatchObject({ op: 'rollback', batchId: 2, rolledBack: true, markerAfter: 0 });
    // (undo(0) was pruned by batch 2's commit, so compare everything but undo records)
    const noUndo = (c: string[]) => c.filter((e) => !e.startsWith('03'));
    expect(rb?.op === 'rollback' && noUndo(rb.contentsAfter)).toEqual(noUndo(shard1After0));
    expect(again).toEqual({ ...first, state: { ...first.state, commitTimeMs: again.state.commitTimeMs } });
    expect(contents(h.volume(1))).toEqual(shard1After2);

    // A retry of batch 2 on shard 0 (marker 1) rolls nothing back and commits nothing.
    const from0 = h.store(0).calls.length;
    expect(await run(q, b2, 0, 1)).toMatchObject({ rows: [], state: m(2, 0, 0, 0) });
    expect(h.store(0).since(from0)[0]).toMatchObject({ op: 'rollback', rolledBack: false, markerAfter: 1 });
    expect(h.store(0).memory.stats).toMatchObject({ commits: 2, rollbacks: 0 });
  });
});

// ---- 5. deduplication -------------------------------------------------------------------------

describe('runStateTask: deduplication', () => {
  it('dropDuplicates without an event-time column keeps every key forever', async () => {
    const q = query({ kind: 'dropDuplicates', columns: ['id'], eventTimeColumn: null }, 'append');
    const b0 = await run(q, {
      batchId: 0,
      watermarkMs: 0,
      tasks: [
        [r(1, 'a', 1), r(2, 'a', 2)],
        [r(3, 'b', 3), r(4, 'a', 4)],
      ],
    });
    // the first row of a key in task order
    expect(b0.rows).toEqual(sortRows([r(1, 'a', 1), r(3, 'b', 3)]));
    expect(counts(b0.state)).toEqual(m(2, 2, 0, 0));
    const b1 = await run(q, { batchId: 1, watermarkMs: 1e9, tasks: [[r(1, 'a', 9), r(0, 'c', 5)]] });
    expect(b1.rows).toEqual(sortRows([r(0, 'c', 5)]));
    expect(counts(b1.state)).toEqual(m(3, 1, 0, 0));
    // no expiry: no index entries, and no index scan either
    expect(await dedupValues(h.store(), ['string'])).toEqual([JSON.stringify([['a'], null]), JSON.stringify([['b'], null]), JSON.stringify([['c'], null])]);
    expect(await stateOf(h.store(), ['string'])).toMatchObject({ index: [] });
    expect(h.store().calls.filter((c) => c.op === 'range')).toEqual([]);
  });

  it('dropDuplicates with the event-time column: late rows dropped and counted, state expires at <= the watermark', async () => {
    const q = query({ kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: 'ts' }, 'append');
    const b0 = await run(q, {
      batchId: 0,
      watermarkMs: 0,
      tasks: [
        [r(10, 'a', 1), r(10, 'a', 2)],
        [r(20, 'b', 3), r(10, 'a', 4)],
      ],
    });
    expect(b0.rows).toEqual(sortRows([r(10, 'a', 1), r(20, 'b', 3)]));
    expect(counts(b0.state)).toEqual(m(2, 2, 0, 0));
    // (a,10) is late at 15 s, in both tasks; (b,20) is a duplicate; (c,30) is new; (a,10) expires.
    const b1 = await run(q, {
      batchId: 1,
      watermarkMs: 15 * S,
      tasks: [
        [r(10, 'a', 5), r(30, 'c', 6)],
        [r(20, 'b', 7), r(10, 'a', 8)],
      ],
    });
    expect(b1.rows).toEqual(sortRows([r(30, 'c', 6)]));
    // Late rows count per map-side record (Spark counts per row; a task sends a key once).
    expect(counts(b1.state)).toEqual(m(2, 1, 1, 2));
    expect(await stateOf(h.store(), ['string', 'timestamp'])).toMatchObject({ index: [20 * S, 30 * S] });
    // (b,20) expires exactly at watermark 20.
    const b2 = await run(q, { batchId: 2, watermarkMs: 20 * S, tasks: [[r(16, 'a', 8)]] });
    expect(b2.rows).toEqual(sortRows([]));
    expect(counts(b2.state)).toEqual(m(1, 0, 1, 1));
    const b3 = await run(q, { batchId: 3, watermarkMs: 20 * S, tasks: [[r(21, 'a', 9)]] });
    expect(b3.rows).toEqual(sortRows([r(21, 'a', 9)]));
    expect(counts(b3.state)).toEqual(m(2, 1, 0, 0));
  });

  it('dropDuplicatesWithinWatermark: a key is held until first time + delay <= watermark, then passes again', async () => {
    const q = query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append');
    const outcomes: Outcome[] = [];
    for (const b of DEDUP_BATCHES) outcomes.push(await run(q, b));
    // 0: a@5 (expires 15), b@20 (expires 30).
    expect(outcomes[0]!.rows).toEqual(sortRows([r(5, 'a'), r(20, 'b')]));
    expect(counts(outcomes[0]!.state)).toEqual(m(2, 2, 0, 0));
    // 1 (wm 10): a@12 is a duplicate, c@8 is late, d@30 is new (expires 40).
    expect(outcomes[1]!.rows).toEqual(sortRows([r(30, 'd')]));
    expect(counts(outcomes[1]!.state)).toEqual(m(3, 1, 0, 1));
    // 2 (wm 15, no data): a expires (15 <= 15).
    expect(outcomes[2]!.rows).toEqual(sortRows([]));
    expect(counts(outcomes[2]!.state)).toEqual(m(2, 0, 1, 0));
    // 3 (wm 15): a@16 passes again; b and d are still held.
    expect(outcomes[3]!.rows).toEqual(sortRows([r(16, 'a')]));
    expect(counts(outcomes[3]!.state)).toEqual(m(3, 1, 0, 0));
    // the value holds the expiry: first event time + delay
    expect(await dedupValues(h.store(), ['string'])).toEqual([
      JSON.stringify([['a'], 26 * S]),
      JSON.stringify([['b'], 30 * S]),
      JSON.stringify([['d'], 40 * S]),
    ]);
    expect(await stateOf(h.store(), ['string'])).toMatchObject({ index: [26 * S, 30 * S, 40 * S] });
  });

  it('dropDuplicatesWithinWatermark: a late row of a key in one task does not hide an on-time row of it in another', async () => {
    // Spark filters late rows before deduplicating, so e@25 is the key's first row.
    const q = query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append');
    const out = await run(q, { batchId: 0, watermarkMs: 10 * S, tasks: [[r(5, 'e', 1)], [r(25, 'e', 2)]] });
    expect(out.rows).toEqual(sortRows([r(25, 'e', 2)]));
    expect(counts(out.state)).toEqual(m(1, 1, 0, 1));
  });

  // Known gap (mapSide.ts, not the reduce side): the map side keeps one row per key per task
  // without knowing the watermark, so a late first row hides an on-time row of the same key in the
  // same task. Spark emits e@25 here. This test flips to passing when the map side is fixed.
  it('dropDuplicatesWithinWatermark: a late row does not hide an on-time row of its key in the same task', async () => {
    const q = query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append');
    // The driver gives a deduplication's map tasks the batch watermark as their late threshold.
    const tasks = [[r(5, 'e', 1), r(25, 'e', 2)]];
    const out = await run(q, { batchId: 0, watermarkMs: 10 * S, tasks }, 0, 0, shuffle(q, tasks, 10 * S));
    expect(out.rows).toEqual(sortRows([r(25, 'e', 2)]));
  });
});

// ---- 6. a small batch over a large state ------------------------------------------------------

describe('runStateTask: a 1-row batch over 100k keys writes O(1) entries', () => {
  const q = query(windowed, 'update', { layout: { keyGroups: 4096, partitions: 8, shards: 1 } });
  const rows = Array.from({ length: 100_000 }, (_, i) => r(1000, `k${i}`, 1));
  const seedBlocks = shuffle(q, [rows.slice(0, 50_000), rows.slice(50_000)]);

  for (const [cache, cacheBytes] of CACHES) {
    it(`updates one key, then adds one key, each in a handful of entries (${cache})`, async () => {
      await freshShards(cacheBytes);
      const seed = await run(q, { batchId: 0, watermarkMs: 0, tasks: [] }, 0, 0, seedBlocks);
      expect(counts(seed.state)).toEqual(m(100_000, 100_000, 0, 0));
      const store = h.store();
      // data + index per key, undo(0), marker
      expect(store.memory.stats.entriesPerCommit).toEqual([200_002]);

      let from = store.calls.length;
      const existing = await run(q, { batchId: 1, watermarkMs: 500 * S, tasks: [[r(1001, 'k7', 5)]] });
      expect(existing.rows).toEqual([agg(1000, 'k7', 2, 6)]);
      expect(counts(existing.state)).toEqual(m(100_000, 1, 0, 0));
      // the data entry, undo(1), the marker, the pruned undo(0)
      expect(store.memory.stats.entriesPerCommit.at(-1)).toBe(4);
      expect(dataKeysRead(store.since(from))).toBeLessThanOrEqual(1);
      expect(reads(store.since(from)).filter((c) => 'range' in c)).toEqual([{ range: 0, prefix: PREFIX_INDEX }]);

      from = store.calls.length;
      const added = await run(q, { batchId: 2, watermarkMs: 500 * S, tasks: [[r(1001, 'new', 5)]] });
      expect(added.rows).toEqual([agg(1000, 'new', 1, 5)]);
      expect(counts(added.state)).toEqual(m(100_001, 1, 0, 0));
      // data + index entry, undo(2), the marker, the pruned undo(1)
      expect(store.memory.stats.entriesPerCommit.at(-1)).toBe(5);
      // The cache, made when the shard was empty, holds every key: a key it lacks is new, unread.
      expect(dataKeysRead(store.since(from))).toBe(cacheBytes === CACHE_OFF ? 1 : 0);
      expect(reads(store.since(from)).filter((c) => 'range' in c)).toEqual([{ range: 0, prefix: PREFIX_INDEX }]);
      expect(store.numRows).toBe(100_001);
    }, 60_000);
  }
});
