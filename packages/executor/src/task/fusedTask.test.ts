/**
 * A state task that carries its batch's map tasks (a small batch of a one-shard query) gives the
 * rows, metrics and state that the map tasks and the state task run apart give, and reports each
 * map task's facts.
 */
import { describe, expect, it } from 'vitest';
import type { MapTask, StateResult } from './messages.js';
import { decodeRows, encodeRows } from './rowCodec.js';
import runTask from './worker.js';
import { sortRows } from '../operators/mapSideTestKit.js';
import { BATCHES, counts, freshShards, h, query, run, SCHEMA, stateOf, stateTask, useFreshShards, windowed, WINDOWED_KEY, type Batch, type Outcome } from '../operators/stateTaskTestKit.js';

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

  it('fails with the map task coded error of a bad plan', async () => {
    const q = query(windowed, 'update');
    const b = BATCHES[0] as Batch;
    const [first] = mapTasks(b, q);
    const bad = { ...first, ops: [{ kind: 'filter', cond: { op: 'col', name: 'nope' } }] } as MapTask;
    expect(await runTask({ ...stateTask(q, b, 0, new Map()), maps: [bad] })).toMatchObject({ ok: false, error: { code: 'UNRESOLVED_COLUMN', column: 'nope' } });
  });
});
