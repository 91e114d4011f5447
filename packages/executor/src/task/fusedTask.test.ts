/**
 * A state task that carries its batch's map tasks (a small batch) gives the rows, metrics and
 * state that the map tasks and the state task run apart give, reports each map task's facts, and
 * hands back the blocks of other shards' partitions.
 */
import { describe, expect, it } from 'vitest';
import type { MapTask, ShuffleBlock, StateResult } from './messages.js';
import { decodeRows, encodeRows } from './rowCodec.js';
import runTask from './worker.js';
import { sortRows } from '../operators/mapSideTestKit.js';
import {
  BATCHES,
  counts,
  freshShards,
  h,
  query,
  run,
  SCHEMA,
  stateOf,
  stateTask,
  useFreshShards,
  windowed,
  WINDOWED_KEY,
  type Batch,
  type Outcome,
} from '../operators/stateTaskTestKit.js';

useFreshShards();

const mapTasks = (b: Batch, q: ReturnType<typeof query>): MapTask[] =>
  b.tasks.map((rows, partition) => ({
    kind: 'map',
    queryId: 'q',
    runId: 'r',
    batchId: b.batchId,
    partition,
    attempt: 0,
    input: { type: 'rows', data: encodeRows(rows) },
    inputSchema: SCHEMA,
    ops: [],
    stateful: q.op,
    layout: q.layout,
    lateThresholdMs: null,
  }));

describe('a state task carrying its map tasks', () => {
  it('gives what the map stage and the state stage give apart, batch after batch', async () => {
    const q = query(windowed, 'update');
    const apart: Outcome[] = [];
    for (const b of BATCHES) apart.push(await run(q, b));
    const stateApart = await stateOf(h.store(), WINDOWED_KEY);

    await freshShards();
    for (const [i, b] of BATCHES.entries()) {
      const result = (await runTask({ ...stateTask(q, b, 0, new Map()), maps: mapTasks(b, q) })) as StateResult;
      expect(result.ok, `batch ${b.batchId}`).toBe(true);
      expect(sortRows(decodeRows(result.rows as Uint8Array)), `batch ${b.batchId}`).toEqual(apart[i]!.rows);
      expect(counts(result.state), `batch ${b.batchId}`).toEqual(counts(apart[i]!.state));
      expect(result.maps?.map((m) => m.numInputRows)).toEqual(b.tasks.map((rows) => rows.length));
      expect(result.maps?.every((m) => !('blocks' in m))).toBe(true);
    }
    expect(await stateOf(h.store(), WINDOWED_KEY)).toEqual(stateApart);
  });

  it("with two shards: the first shard hands back the other's blocks, and both give what they give apart", async () => {
    const q = query(windowed, 'update', { layout: { keyGroups: 16, partitions: 4, shards: 2 } });
    const apart: Outcome[][] = [];
    for (const b of BATCHES) apart.push([await run(q, b, 0), await run(q, b, 1)]);
    const stateApart = [await stateOf(h.store(0), WINDOWED_KEY), await stateOf(h.store(1), WINDOWED_KEY)];

    await freshShards();
    let handedOn = 0;
    for (const [i, b] of BATCHES.entries()) {
      const first = (await runTask({ ...stateTask(q, b, 0, new Map()), maps: mapTasks(b, q) })) as StateResult;
      const byPartition = new Map<number, ShuffleBlock[]>();
      for (const block of first.otherBlocks ?? []) byPartition.set(block.partition, [...(byPartition.get(block.partition) ?? []), block]);
      handedOn += first.otherBlocks?.length ?? 0;
      const second = (await runTask(stateTask(q, b, 1, byPartition))) as StateResult;
      [first, second].forEach((r, shard) => {
        expect(sortRows(decodeRows(r.rows as Uint8Array)), `batch ${b.batchId} shard ${shard}`).toEqual(apart[i]![shard]!.rows);
        expect(counts(r.state), `batch ${b.batchId} shard ${shard}`).toEqual(counts(apart[i]![shard]!.state));
      });
    }
    expect(handedOn).toBeGreaterThan(0);
    expect([await stateOf(h.store(0), WINDOWED_KEY), await stateOf(h.store(1), WINDOWED_KEY)]).toEqual(stateApart);
  });

  it('fails with the map task coded error of a bad plan', async () => {
    const q = query(windowed, 'update');
    const b = BATCHES[0] as Batch;
    const [first] = mapTasks(b, q);
    const bad = { ...first, ops: [{ kind: 'filter', cond: { op: 'col', name: 'nope' } }] } as MapTask;
    expect(await runTask({ ...stateTask(q, b, 0, new Map()), maps: [bad] })).toMatchObject({ ok: false, error: { code: 'UNRESOLVED_COLUMN', column: 'nope' } });
  });
});
