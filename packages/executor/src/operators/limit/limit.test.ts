/**
 * The streaming limit's batch (task.ts) on a state task: the first rows in block order, the count
 * in state, no commit once the limit is reached, and after an aggregation in complete mode a limit
 * of each batch without state. Retries and replays are in operators.replay.test.ts.
 */
import { dataRange, valueHeader, ValueKind } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { decodeGroupBlock } from '../../shuffle/shuffleCodec.js';
import { decodeRows } from '../../task/rowCodec.js';
import { decodeLimitValue, encodeLimitValue } from './task.js';
import { partitionPartials } from '../mapSideTestKit.js';
import { runStateTask } from '../stateTask.js';
import { type Batch, counts, h, LAYOUT, m, query, type Query, r, SCHEMA, shuffle, stateTask, useFreshShards } from '../stateTaskTestKit.js';
import type { StatefulOp } from '../types.js';
import type { Row } from '../../schema/types.js';

useFreshShards();

const limitOp = (n: number, afterAggregation = false): StatefulOp => ({ kind: 'limit', n, afterAggregation });

/** One state task per shard of `q`, in shard order: its rows in the order it emitted them, and its metrics. */
async function runBatch(q: Query, b: Batch): Promise<{ rows: Row[]; metrics: Array<ReturnType<typeof counts>> }> {
  const byPartition = shuffle(q, b.tasks);
  const rows: Row[] = [];
  const metrics: Array<ReturnType<typeof counts>> = [];
  for (let shard = 0; shard < q.layout.shards; shard++) {
    const result = await runStateTask(stateTask(q, b, shard, byPartition), new Map());
    rows.push(...decodeRows(result.rows as Uint8Array));
    metrics.push(counts(result.state));
  }
  return { rows, metrics };
}

/** The state of every shard: its data values, decoded. */
async function counted(q: Query): Promise<number[]> {
  const out: number[] = [];
  for (let shard = 0; shard < q.layout.shards; shard++) {
    const store = h.stores.get(h.dir(shard));
    if (store) for (const [, v] of await store.memory.range(...dataRange())) out.push(decodeLimitValue(v));
  }
  return out;
}

describe('limit: the map side', () => {
  it("sends a task's first n rows, in order, as one record", () => {
    const rows = [r(5, 'e'), r(1, 'a'), r(3, 'c'), r(2, 'b')];
    const partials = partitionPartials(rows, limitOp(3), SCHEMA, LAYOUT);
    expect(partials.numRecords).toBe(3);
    expect(partials.blocks).toHaveLength(1);
    const records = decodeGroupBlock((partials.blocks[0] as { data: Uint8Array }).data);
    expect(records.map(([, , groupRows]) => groupRows)).toEqual([[r(5, 'e'), r(1, 'a'), r(3, 'c')]]);
  });

  it('limit(0) sends nothing', () => {
    const partials = partitionPartials([r(1, 'a')], limitOp(0), SCHEMA, LAYOUT);
    expect(partials).toEqual({ blocks: [], numRecords: 0, numLate: 0 });
  });
});

describe('limit: the batch', () => {
  const q = query(limitOp(5), 'append', { hasWatermark: false, layout: { keyGroups: 16, partitions: 4, shards: 2 } });

  it('emits the first rows in batch order (map task, then row), keeps the count, and stops at n', async () => {
    const b0 = await runBatch(q, {
      batchId: 0,
      watermarkMs: 0,
      tasks: [
        [r(5, 'e'), r(1, 'a')],
        [r(3, 'c'), r(2, 'b')],
      ],
    });
    expect(b0.rows).toEqual([r(5, 'e'), r(1, 'a'), r(3, 'c'), r(2, 'b')]);
    // One shard holds the count, one state row updated; the other has nothing.
    expect(b0.metrics.filter((x) => x.numRowsTotal === 1)).toEqual([m(1, 1, 0, 0)]);
    expect(await counted(q)).toEqual([4]);

    const b1 = await runBatch(q, { batchId: 1, watermarkMs: 0, tasks: [[r(9, 'y')], [r(7, 'x'), r(8, 'z')]] });
    expect(b1.rows).toEqual([r(9, 'y')]);
    expect(await counted(q)).toEqual([5]);

    const markers = [0, 1].map((s) => h.stores.get(h.dir(s))?.marker);
    const b2 = await runBatch(q, { batchId: 2, watermarkMs: 0, tasks: [[r(10, 'w')]] });
    expect(b2.rows).toEqual([]);
    expect(b2.metrics.filter((x) => x.numRowsTotal === 1)).toEqual([m(1, 0, 0, 0)]);
    // Nothing changed, so no shard committed batch 2.
    expect([0, 1].map((s) => h.stores.get(h.dir(s))?.marker)).toEqual(markers);
    expect(await counted(q)).toEqual([5]);
  });

  it('after an aggregation in complete mode: the first n rows of each batch, and no state', async () => {
    const complete = query(limitOp(2, true), 'complete', { hasWatermark: false });
    for (const batchId of [0, 1]) {
      const out = await runBatch(complete, { batchId, watermarkMs: 0, tasks: [[r(1, 'a'), r(2, 'b'), r(3, 'c')]] });
      expect(out.rows).toEqual([r(1, 'a'), r(2, 'b')]);
      expect(out.metrics).toEqual([m(0, 0, 0, 0)]);
    }
    expect(await counted(complete)).toEqual([]);
    expect(h.store().marker).toBe(-1);
  });

  it('the same limit in append mode after an aggregation keeps its count', async () => {
    const append = query(limitOp(2, true), 'append', { hasWatermark: false });
    const b0 = await runBatch(append, { batchId: 0, watermarkMs: 0, tasks: [[r(1, 'a')]] });
    const b1 = await runBatch(append, { batchId: 1, watermarkMs: 0, tasks: [[r(2, 'b'), r(3, 'c')]] });
    expect([...b0.rows, ...b1.rows]).toEqual([r(1, 'a'), r(2, 'b')]);
    expect(await counted(append)).toEqual([2]);
  });
});

describe('limit: the state value', () => {
  it('round-trips the count, and a value of an unknown format is STATE_STORE_CORRUPT', () => {
    expect(decodeLimitValue(encodeLimitValue(12345))).toBe(12345);
    expect(valueHeader(encodeLimitValue(7))).toMatchObject({ kind: ValueKind.limit, indexTime: null, rows: 1 });
    expect(() => decodeLimitValue(Uint8Array.of(2, 0, 0, 0, 0, 0, 0, 0, 0))).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
    expect(() => decodeLimitValue(Uint8Array.of(1))).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
  });
});
