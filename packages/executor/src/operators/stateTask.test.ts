/**
 * The reduce side of stateful batches (runStateTask): a windowed aggregation's rows, state and
 * metrics per output mode, and eviction that costs what it evicts. The harness is
 * stateTaskTestKit.ts; retries, replays, sparse markers and deduplication are in
 * stateTask.replay.test.ts. Tests that depend on reads run with the worker's decoded-state cache
 * off (a 0-byte budget) and on.
 */
import { describe, expect, it } from 'vitest';
import { PREFIX_INDEX } from '@sluice/state';
import { sortRows } from './mapSideTestKit.js';
import type { StatefulOp } from './types.js';
import type { Row } from '../schema/types.js';
import {
  CACHE_OFF,
  CACHES,
  freshShards,
  run,
  counts,
  stateOf,
  S,
  col,
  r,
  windowed,
  WINDOWED_KEY,
  win,
  agg,
  query,
  BATCHES,
  m,
  dataKeysRead,
  h,
  reads,
  useFreshShards,
} from './stateTaskTestKit.js';

useFreshShards();

// ---- 1. aggregation ---------------------------------------------------------------------------

describe('runStateTask: windowed aggregation', () => {
  it('append: emits a window once, when it expires; late keys are dropped and counted', async () => {
    const q = query(windowed, 'append');
    const expected: Array<[Row[], ReturnType<typeof m>]> = [
      [[], m(3, 3, 0, 0)],
      [[agg(0, 'a', 3, 6)], m(3, 2, 1, 2)],
      [[agg(10, 'b', 2, 11)], m(2, 0, 1, 0)],
      [[], m(2, 1, 0, 1)],
      [[agg(20, 'a', 2, 6)], m(1, 0, 1, 0)],
    ];
    for (const [i, b] of BATCHES.entries()) {
      const out = await run(q, b);
      expect(out.rows, `batch ${b.batchId}`).toEqual(expected[i]![0]);
      expect(counts(out.state), `batch ${b.batchId}`).toEqual(expected[i]![1]);
    }
    // Only c30 is left, with its index entry; every batch changed something, so every batch committed.
    expect(await stateOf(h.store(), WINDOWED_KEY)).toEqual({ keys: [JSON.stringify([win(30), 'c'])], index: [40 * S] });
    expect(h.store().memory.stats.commits).toBe(5);
    expect(h.store().marker).toBe(4);
  });

  it('update: emits the keys each batch changed; expiry removes without emitting', async () => {
    const q = query(windowed, 'update');
    const expected: Array<[Row[], ReturnType<typeof m>]> = [
      [[agg(0, 'a', 3, 6), agg(20, 'a', 1, 5), agg(10, 'b', 1, 10)], m(3, 3, 0, 0)],
      [[agg(10, 'b', 2, 11), agg(30, 'c', 1, 7)], m(3, 2, 1, 2)],
      [[], m(2, 0, 1, 0)],
      [[agg(20, 'a', 2, 6)], m(2, 1, 0, 1)],
      [[], m(1, 0, 1, 0)],
    ];
    for (const [i, b] of BATCHES.entries()) {
      const out = await run(q, b);
      expect(out.rows, `batch ${b.batchId}`).toEqual(sortRows(expected[i]![0]));
      expect(counts(out.state), `batch ${b.batchId}`).toEqual(expected[i]![1]);
    }
  });

  it('complete: emits the whole result every batch, neither dropping late keys nor evicting', async () => {
    const q = query(windowed, 'complete');
    const after1 = [agg(0, 'a', 5, 206), agg(10, 'b', 2, 11), agg(20, 'a', 1, 5), agg(0, 'c', 1, 100), agg(30, 'c', 1, 7)];
    const after3 = [agg(0, 'a', 5, 206), agg(10, 'b', 4, 211), agg(20, 'a', 2, 6), agg(0, 'c', 1, 100), agg(30, 'c', 1, 7)];
    const expected: Array<[Row[], ReturnType<typeof m>]> = [
      [[agg(0, 'a', 3, 6), agg(10, 'b', 1, 10), agg(20, 'a', 1, 5)], m(3, 3, 0, 0)],
      [after1, m(5, 4, 0, 0)],
      [after1, m(5, 0, 0, 0)],
      [after3, m(5, 2, 0, 0)],
      [after3, m(5, 0, 0, 0)],
    ];
    for (const [i, b] of BATCHES.entries()) {
      const out = await run(q, b);
      expect(out.rows, `batch ${b.batchId}`).toEqual(sortRows(expected[i]![0]));
      expect(counts(out.state), `batch ${b.batchId}`).toEqual(expected[i]![1]);
    }
    // The no-data batches changed nothing, so they did not commit: the marker stays sparse.
    expect(h.store().memory.stats.commits).toBe(3);
    expect(h.store().marker).toBe(3);
  });

  it('without a watermark nothing is late and nothing expires, even with a large batch watermark', async () => {
    const q = query(windowed, 'update', { hasWatermark: false });
    await run(q, BATCHES[0]!);
    const out = await run(q, { batchId: 1, watermarkMs: 1e9, tasks: [[r(1, 'a', 1)]] });
    expect(out.rows).toEqual(sortRows([agg(0, 'a', 4, 7)]));
    expect(counts(out.state)).toEqual(m(3, 1, 0, 0));
  });

  it('without a window, a key is late and expires by its watermarked column (<= the watermark)', async () => {
    const op: StatefulOp = {
      kind: 'aggregate',
      keys: [col('ts'), col('id')],
      keyNames: ['ts', 'id'],
      aggs: [{ fn: 'count', arg: null, name: 'count' }],
      eventTimeKey: 0,
    };
    const q = query(op, 'append');
    expect(counts((await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(5, 'a'), r(5, 'a'), r(10, 'b')], [r(11, 'c')]] })).state)).toEqual(m(3, 3, 0, 0));
    // ts 10 is late at watermark 10 (dropped); ts 5 and ts 10 expire; ts 11 stays.
    const out = await run(q, { batchId: 1, watermarkMs: 10 * S, tasks: [[r(10, 'b'), r(12, 'd')]] });
    expect(out.rows).toEqual(
      sortRows([
        { ts: 5 * S, id: 'a', count: 2 },
        { ts: 10 * S, id: 'b', count: 1 },
      ]),
    );
    expect(counts(out.state)).toEqual(m(2, 1, 2, 1));
    expect(await stateOf(h.store(), ['timestamp', 'string'])).toEqual({
      keys: [JSON.stringify([11 * S, 'c']), JSON.stringify([12 * S, 'd'])],
      index: [11 * S, 12 * S],
    });
  });
});

// ---- 2. eviction cost -------------------------------------------------------------------------

/** What a batch read: keys asked of getMany, entries returned by range (with the key prefix). */
describe('runStateTask: eviction costs what it evicts', () => {
  for (const [cache, cacheBytes] of CACHES) {
    it(`reads the 3 expired index entries and at most their 3 data keys out of 10,003 keys (${cache})`, async () => {
      await freshShards(cacheBytes);
      const q = query(windowed, 'append', { layout: { keyGroups: 256, partitions: 8, shards: 1 } });
      const far = Array.from({ length: 10_000 }, (_, i) => r(1000 + (i % 10), `k${i}`, 1));
      const near = [r(1, 'x', 1), r(2, 'y', 2), r(3, 'z', 3)];
      const seed = await run(q, { batchId: 0, watermarkMs: 0, tasks: [far.slice(0, 5000), [...far.slice(5000), ...near]] });
      expect(counts(seed.state)).toEqual(m(10_003, 10_003, 0, 0));

      const store = h.store();
      const from = store.calls.length;
      const commitsBefore = store.memory.stats.entriesPerCommit.length;
      const out = await run(q, { batchId: 1, watermarkMs: 10 * S, tasks: [] });
      expect(out.rows).toEqual([agg(0, 'x', 1, 1), agg(0, 'y', 1, 2), agg(0, 'z', 1, 3)]);
      expect(counts(out.state)).toEqual(m(10_000, 0, 3, 0));

      const calls = store.since(from);
      expect(calls[0]).toMatchObject({ op: 'rollback', rolledBack: false });
      // One scan: the index up to the watermark, which holds exactly the 3 expired keys.
      expect(calls.filter((c) => c.op === 'range')).toEqual([{ op: 'range', prefix: PREFIX_INDEX, returned: 3 }]);
      // Data reads: only (some of) those 3 keys; without a cache, exactly them.
      const keysRead = dataKeysRead(calls);
      expect(keysRead).toBeLessThanOrEqual(3);
      if (cacheBytes === CACHE_OFF) expect(keysRead).toBe(3);
      // One commit: 3 data and 3 index deletions, undo(1), the marker, and the pruned undo(0).
      expect(store.memory.stats.entriesPerCommit.slice(commitsBefore)).toEqual([3 * 2 + 2 + 1]);
      expect(store.entriesPerCommit.at(-1)).toBe(9);

      // A next batch with nothing expiring reads an empty index range and does not commit.
      const from2 = store.calls.length;
      const idle = await run(q, { batchId: 2, watermarkMs: 10 * S, tasks: [] });
      expect(counts(idle.state)).toEqual(m(10_000, 0, 0, 0));
      expect(reads(store.since(from2)).filter((c) => 'range' in c)).toEqual([{ range: 0, prefix: PREFIX_INDEX }]);
      expect(dataKeysRead(store.since(from2))).toBe(0);
      expect(store.memory.stats.commits).toBe(2);
    });
  }
});
