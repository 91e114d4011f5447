import { describe, expect, it } from 'vitest';
import type { MapResult, MapTask, StatelessResult, StatelessTask } from './messages.js';
import { decodeRows } from './rowCodec.js';
import { WINDOW_TYPE } from '../expressions/exprTypes.js';
import { decodeAggregateBlock } from '../shuffle/shuffleCodec.js';
import runTask from './worker.js';

const rateSchema = [
  { name: 'timestamp', type: 'timestamp' as const, nullable: false },
  { name: 'value', type: 'long' as const, nullable: false },
];
const input = { type: 'rateMicroBatch' as const, startValue: 0, endValue: 10, timestampMs: 7 * 60_000 };
const ops: MapTask['ops'] = [
  { kind: 'watermark', column: 'timestamp', delayMs: 600_000 },
  {
    kind: 'project',
    exprs: [
      { op: 'col', name: 'timestamp' },
      { op: 'alias', expr: { op: 'binary', fn: 'mod', left: { op: 'col', name: 'value' }, right: { op: 'lit', value: 3, type: 'long' } }, name: 'id' },
    ],
  },
];

describe('worker', () => {
  it('runs a map task: operators, event time, one record per key in blocks by partition', async () => {
    const task: MapTask = {
      kind: 'map',
      queryId: 'q',
      runId: 'r',
      batchId: 0,
      partition: 0,
      attempt: 0,
      input,
      inputSchema: rateSchema,
      ops,
      lateThresholdMs: null,
      stateful: {
        kind: 'aggregate',
        keys: [
          { op: 'window', expr: { op: 'col', name: 'timestamp' }, sizeMs: 300_000, slideMs: 300_000, startMs: 0 },
          { op: 'col', name: 'id' },
        ],
        keyNames: ['window', 'id'],
        aggs: [{ fn: 'count', arg: null, name: 'count' }],
        eventTimeKey: 0,
      },
      layout: { keyGroups: 16, partitions: 4, shards: 1 },
    };
    const result = (await runTask(task)) as MapResult;
    expect(result).toMatchObject({ ok: true, kind: 'map', numInputRows: 10, numRecords: 3, eventTime: { min: 420_000, max: 420_000, count: 10 } });
    const records = result.blocks.flatMap((b) => decodeAggregateBlock(b.data, [WINDOW_TYPE, 'long']));
    expect(records.map((r) => [r[2], r[3]]).sort((a, b) => (a[0]![1] as number) - (b[0]![1] as number))).toEqual([
      [[{ start: 300_000, end: 600_000 }, 0], [4]],
      [[{ start: 300_000, end: 600_000 }, 1], [3]],
      [[{ start: 300_000, end: 600_000 }, 2], [3]],
    ]);
  });

  it('still runs a stateless task', async () => {
    const task: StatelessTask = {
      kind: 'stateless',
      queryId: 'q',
      runId: 'r',
      batchId: 0,
      partition: 0,
      attempt: 0,
      input,
      inputSchema: rateSchema,
      ops,
      output: { type: 'collect' },
    };
    const result = (await runTask(task)) as StatelessResult;
    expect(result).toMatchObject({ ok: true, kind: 'stateless', numInputRows: 10, numOutputRows: 10, eventTime: { count: 10 } });
    expect(decodeRows(result.rows!).map((r) => r.id)).toEqual([0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
  });

  it('fails a map task with a coded error for a bad plan', async () => {
    const bad = {
      kind: 'map',
      input,
      inputSchema: rateSchema,
      ops: [],
      stateful: { kind: 'dropDuplicates', columns: ['nope'], eventTimeColumn: null },
    } as unknown as MapTask;
    expect(await runTask(bad)).toMatchObject({ ok: false, error: { code: 'UNRESOLVED_COLUMN', column: 'nope' } });
  });
});
