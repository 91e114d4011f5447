/**
 * Which batches are fused (IncrementalExecution.runFused), seen in the tasks the driver sends: a
 * fused batch sends no map task, its map tasks ride in shard 0's state task (`maps`). A small
 * batch of a query with one stateful operator is fused whatever the operator's kind; one with
 * several operators runs its map stage on its own.
 */
import { GroupStateTimeout, type TaskRequest } from '@sluice/executor';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DataFrame } from '../api/DataFrame.js';
import { statefulProcessor } from '../api/functions/udfs.js';
import { Session } from '../api/Session.js';
import { TaskScheduler } from '../scheduler/TaskScheduler.js';

const fixture = (name: string) => new URL(`../../../../test/fixtures/${name}`, import.meta.url);

let session: Session;
beforeAll(async () => {
  session = await Session.create({ conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 } });
});
afterAll(async () => {
  await session.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Rows {k STRING, v LONG} into a new memory stream, read as a streaming DataFrame. */
function stream(name: string, rows: Array<{ k: string; v: number }>): DataFrame {
  session.memoryStream(name, 'k STRING, v LONG').addData(rows);
  return session.readStream.format('memory').load(name);
}

/** Runs `df` to the end of its input; returns the rows its sink holds and the tasks of each call the query made to the scheduler. */
async function run(name: string, df: DataFrame, mode: 'append' | 'update'): Promise<{ rows: unknown[]; calls: TaskRequest[][] }> {
  const spy = vi.spyOn(TaskScheduler.prototype, 'runTasks');
  const q = await df.writeStream.format('memory').queryName(name).outputMode(mode).start();
  await q.processAllAvailable();
  await q.stop();
  const calls = spy.mock.calls.map(([tasks]) => [...tasks] as TaskRequest[]).filter((tasks) => tasks[0]?.queryId === q.id && tasks[0].kind !== 'release');
  const rows = (await session.memoryTable(name)).map((r) => JSON.stringify(r)).sort();
  return { rows, calls };
}

const input = [
  { k: 'a', v: 1 },
  { k: 'b', v: 2 },
  { k: 'a', v: 3 },
];

/** One query per kind of stateful operator over `input` (and a second stream for the join), with the rows its sink ends with. */
const kinds: Array<{ kind: string; query: (name: string) => DataFrame; mode: 'append' | 'update'; rows: unknown[] }> = [
  {
    kind: 'aggregate',
    query: (n) => stream(n, input).groupBy('k').count(),
    mode: 'update',
    rows: [
      { k: 'a', count: 2 },
      { k: 'b', count: 1 },
    ],
  },
  {
    kind: 'dropDuplicates',
    query: (n) => stream(n, input).dropDuplicates(['k']),
    mode: 'append',
    rows: [
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ],
  },
  {
    kind: 'streamJoin',
    query: (n) => stream(n, input).join(stream(`${n}_right`, [{ k: 'a', v: 10 }]).selectExpr('k', 'v AS w'), 'k'),
    mode: 'append',
    rows: [
      { k: 'a', v: 1, w: 10 },
      { k: 'a', v: 3, w: 10 },
    ],
  },
  {
    kind: 'transformWithState',
    query: (n) =>
      stream(n, input)
        .selectExpr('k AS value')
        .groupBy('value')
        .transformWithState(statefulProcessor(fixture('tws-processors.mjs'), 'RunningCountStatefulProcessor'), {
          outputSchema: 'key STRING, value STRING',
          outputMode: 'update',
        }),
    mode: 'update',
    rows: [
      { key: 'a', value: '1' },
      { key: 'b', value: '1' },
    ],
  },
  {
    kind: 'flatMapGroupsWithState',
    query: (n) =>
      stream(n, input)
        .selectExpr('k AS value')
        .groupBy('value')
        .flatMapGroupsWithState(statefulProcessor(fixture('group-functions.mjs'), 'runningCount'), {
          outputMode: 'update',
          timeoutConf: GroupStateTimeout.NoTimeout,
          stateSchema: 'count LONG',
          outputSchema: 'key STRING, count STRING',
        }),
    mode: 'update',
    rows: [
      { key: 'a', count: '2' },
      { key: 'b', count: '1' },
    ],
  },
];

const kindsOf = (calls: TaskRequest[][]): string[] => calls.flat().map((t) => t.kind);
const carried = (calls: TaskRequest[][]): TaskRequest[] => calls.flat().flatMap((t) => (t.kind === 'state' ? (t.maps ?? []) : []));

describe('a small batch', () => {
  it.each(kinds)("of a query whose one stateful operator is $kind is fused: its map tasks run in shard 0's state task", async ({ kind, query, mode, rows }) => {
    const name = `fused_${kind}`;
    const { rows: out, calls } = await run(name, query(name), mode);
    expect(out).toEqual(rows.map((r) => JSON.stringify(r)).sort());
    expect(kindsOf(calls)).not.toContain('map');
    expect(kindsOf(calls)).toContain('state');
    const maps = carried(calls);
    expect(maps.length).toBeGreaterThan(0);
    // A join's map tasks read both sides.
    const sides = new Set(maps.map((m) => (m.kind === 'map' ? m.joinSide : undefined)));
    expect([...sides].sort()).toEqual(kind === 'streamJoin' ? [0, 1] : [undefined]);
  });

  it('of a query with two stateful operators is not fused: its map tasks run first, on their own', async () => {
    const name = 'unfused_chain';
    const { rows, calls } = await run(name, stream(name, input).dropDuplicates(['k', 'v']).dropDuplicates(['k']), 'append');
    expect(rows).toEqual(
      [
        { k: 'a', v: 1 },
        { k: 'b', v: 2 },
      ]
        .map((r) => JSON.stringify(r))
        .sort(),
    );
    expect(kindsOf(calls)[0]).toBe('map');
    expect(carried(calls)).toEqual([]);
  });
});
