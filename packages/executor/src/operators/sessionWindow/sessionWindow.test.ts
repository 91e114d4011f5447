/**
 * The reduce side of a session window (task.ts): a key's sessions from several map tasks
 * meet in one task and merge; stored sessions merge with new ones; the watermark closes them;
 * metrics count sessions; a damaged value is a coded error. The harness is stateTaskTestKit.ts.
 */
import { describe, expect, it } from 'vitest';
import { dataRange, decodeDataKey } from '@sluice/state';
import type { StatefulOp } from '../types.js';
import type { Row } from '../../schema/types.js';
import { counts, h, query, r, run, S, col, useFreshShards } from '../stateTaskTestKit.js';

useFreshShards();

/** count(*) and sum(n) per session of 10 s per id. */
const sessions: StatefulOp = {
  kind: 'aggregate',
  keys: [{ op: 'call', fn: 'session_window', args: [col('ts'), { op: 'lit', value: '10 seconds', type: 'interval' }] }, col('id')],
  keyNames: ['session_window', 'id'],
  aggs: [
    { fn: 'count', arg: null, name: 'count' },
    { fn: 'sum', arg: col('n'), name: 'sum' },
  ],
  eventTimeKey: 0,
};

const session = (startS: number, endS: number, id: string, count: number, sum: number): Row => ({
  session_window: { start: startS * S, end: endS * S },
  id,
  count,
  sum,
});
const m = (numRowsTotal: number, numRowsUpdated: number, numRowsRemoved: number, numRowsDroppedByWatermark: number) => ({
  numRowsTotal,
  numRowsUpdated,
  numRowsRemoved,
  numRowsDroppedByWatermark,
});

describe('runStateTask: session windows', () => {
  it('append: sessions of one key from several map tasks merge; stored ones merge with new ones; the watermark closes them', async () => {
    const q = query(sessions, 'append');
    // a: [0, 10) and [15, 25) from two tasks; b: [3, 13).
    let out = await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(0, 'a', 1), r(3, 'b', 2)], [r(15, 'a', 4)]] });
    expect(out.rows).toEqual([]);
    expect(counts(out.state)).toEqual(m(3, 3, 0, 0));
    // a at 8 bridges its two sessions: [0, 25), one stored session absorbed into the other.
    out = await run(q, { batchId: 1, watermarkMs: 0, tasks: [[r(8, 'a', 8)]] });
    expect(out.rows).toEqual([]);
    expect(counts(out.state)).toEqual(m(2, 1, 1, 0));
    // The watermark at 20 closes b's session (ends at 13) and drops a row whose session ends at 12;
    // a's session ends at 25 and stays.
    out = await run(q, { batchId: 2, watermarkMs: 20 * S, tasks: [[r(2, 'a', 100)]] });
    expect(out.rows).toEqual([session(3, 13, 'b', 1, 2)]);
    expect(counts(out.state)).toEqual(m(1, 0, 1, 1));
    out = await run(q, { batchId: 3, watermarkMs: 25 * S, tasks: [] });
    expect(out.rows).toEqual([session(0, 25, 'a', 3, 13)]);
    expect(counts(out.state)).toEqual(m(0, 0, 1, 0));
    expect(await h.store().memory.range(...dataRange())).toEqual([]);
  });

  it('complete: every session each batch, none closed', async () => {
    const q = query(sessions, 'complete');
    let out = await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(0, 'a', 1), r(30, 'a', 2)]] });
    expect(out.rows).toEqual([session(0, 10, 'a', 1, 1), session(30, 40, 'a', 1, 2)]);
    out = await run(q, { batchId: 1, watermarkMs: 100 * S, tasks: [[r(5, 'b', 3)]] });
    expect(out.rows).toEqual([session(0, 10, 'a', 1, 1), session(30, 40, 'a', 1, 2), session(5, 15, 'b', 1, 3)]);
    expect(counts(out.state)).toEqual(m(3, 1, 0, 0));
  });

  it('keeps one value per key, whatever its sessions, in one key group', async () => {
    const q = query(sessions, 'append');
    await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(0, 'a'), r(100, 'a'), r(200, 'a')], [r(300, 'a')]] });
    const stored = await h.store().memory.range(...dataRange());
    expect(stored).toHaveLength(1);
    expect(h.store().numRows).toBe(4);
    expect(decodeDataKey(stored[0]![0]).key.length).toBeGreaterThan(0);
  });

  it('a damaged stored value is STATE_STORE_CORRUPT, not a crash', async () => {
    const q = query(sessions, 'append');
    await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(0, 'a', 1)]] });
    const volume = h.volume();
    const [key] = [...volume.data.keys()].filter((k) => k.charCodeAt(0) === 0x01);
    volume.data.set(key!, volume.data.get(key!)!.subarray(0, 20));
    await h.restart();
    await expect(run(q, { batchId: 1, watermarkMs: 0, tasks: [[r(5, 'a', 1)]] })).rejects.toMatchObject({
      code: 'STATE_STORE_CORRUPT',
      message: expect.stringContaining('session window state value'),
    });
  });
});
