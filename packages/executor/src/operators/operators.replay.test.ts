/**
 * Exactness of every stateful operator kind, proven by replay: each batch run once, then twice
 * (a retry in the same worker, after its first attempt committed), then again after a restart,
 * must give the same rows, metrics and state bytes, with the worker's decoded-state cache on and
 * off. The aggregation and deduplication cases are in stateTask.replay.test.ts; this file covers
 * the session window (append and complete: Spark refuses update), the stream-stream join of every join type, transformWithState with timers
 * and TTL, flatMapGroupsWithState, and the streaming limit.
 */
import { describe, expect, it } from 'vitest';
import type { Expr } from '../expressions/types.js';
import type { Row, Schema } from '../schema/types.js';
import { GROUP_STATE } from './processor/groupState.js';
import { declareVariables } from './processor/declare.js';
import type { StatefulOp, TransformWithStateOp } from './types.js';
import type { StreamJoinOp } from './join/plan.js';
import { BATCHES, CACHES, col, expectExactReplay, type Batch, type Outcome, type Query, query, r, S, SCHEMA, useFreshShards } from './stateTaskTestKit.js';

useFreshShards();

// ---- session window ----------------------------------------------------------------------------

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

/** Sessions that open, merge across map tasks and batches, drop late rows, and close by the watermark. */
const SESSION_BATCHES: Batch[] = [
  {
    batchId: 0,
    watermarkMs: 0,
    tasks: [
      [r(0, 'a', 1), r(3, 'b', 2)],
      [r(15, 'a', 4), r(40, 'c', 1)],
    ],
  },
  { batchId: 1, watermarkMs: 0, tasks: [[r(8, 'a', 8)], [r(44, 'c', 2)]] },
  { batchId: 2, watermarkMs: 20 * S, tasks: [[r(2, 'a', 100), r(50, 'b', 1)]] },
  { batchId: 3, watermarkMs: 25 * S, tasks: [] },
  { batchId: 4, watermarkMs: 60 * S, tasks: [[r(61, 'a', 1)]] },
];

// ---- stream-stream join ------------------------------------------------------------------------

const LEFT: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'lt', type: 'timestamp', nullable: false },
];
const RIGHT: Schema = [
  { name: 'rid', type: 'string', nullable: true },
  { name: 'rt', type: 'timestamp', nullable: false },
];
/** rt >= lt AND rt <= lt + interval 10 seconds */
const RANGE: Expr = {
  op: 'binary',
  fn: 'and',
  left: { op: 'binary', fn: 'geq', left: col('rt'), right: col('lt') },
  right: {
    op: 'binary',
    fn: 'leq',
    left: col('rt'),
    right: { op: 'binary', fn: 'plus', left: col('lt'), right: { op: 'lit', value: '10 seconds', type: 'interval' } },
  },
};

function joinQuery(how: StreamJoinOp['how']): Query {
  const op: StreamJoinOp = {
    kind: 'streamJoin',
    how,
    leftKeys: ['id'],
    rightKeys: ['rid'],
    using: false,
    residual: RANGE,
    left: { schema: LEFT, watermarked: ['lt'], eventTime: 'lt', eviction: { kind: 'value' } },
    right: { schema: RIGHT, watermarked: ['rt'], eventTime: 'rt', eviction: { kind: 'value' } },
  };
  return query(op, 'append', { schema: LEFT, layout: { keyGroups: 16, partitions: 4, shards: 2 } });
}
const L = (id: string, tS: number): Row => ({ id, lt: tS * S });
const R = (rid: string, tS: number): Row => ({ rid, rt: tS * S });

/**
 * Rows of both sides over four batches: matches within a batch and across batches, a row that
 * matches twice, rows that never match (outer rows once the watermark passes them), late rows.
 */
const JOIN_BATCHES: Batch[] = [
  {
    batchId: 0,
    watermarkMs: 0,
    tasks: [
      [L('a', 1), L('b', 2), L('c', 3)],
      [R('a', 4), R('x', 5)],
    ],
    sides: [0, 1],
  },
  { batchId: 1, watermarkMs: 2 * S, tasks: [[L('d', 6)], [R('b', 8), R('a', 9), R('c', 30)]], sides: [0, 1] },
  { batchId: 2, watermarkMs: 15 * S, tasks: [[L('e', 16), L('a', 1)], [R('d', 14)]], sides: [0, 1] },
  { batchId: 3, watermarkMs: 40 * S, tasks: [[L('f', 41)], [R('e', 42)]], sides: [0, 1] },
  { batchId: 4, watermarkMs: 60 * S, tasks: [] },
];

// ---- processors --------------------------------------------------------------------------------

const PROCESSORS = new URL('./replayProcessors.mjs', import.meta.url).href;
const processors = (await import(PROCESSORS)) as Record<string, new () => never>;
const OUTPUT: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'value', type: 'long', nullable: true },
  { name: 'seen', type: 'long', nullable: true },
];

function processorQuery(exportName: 'CountWithTimers' | 'MaxEventTime' | 'sumWithTimeout', timeMode: TransformWithStateOp['timeMode']): Query {
  const groupState = exportName === 'sumWithTimeout';
  const op: TransformWithStateOp = {
    kind: 'transformWithState',
    api: groupState ? 'flatMapGroupsWithState' : 'transformWithState',
    processor: { moduleUrl: PROCESSORS, exportName },
    keys: [col('id')],
    keyNames: ['id'],
    outputSchema: OUTPUT,
    outputMode: 'update',
    timeMode,
    variables: groupState
      ? [{ name: GROUP_STATE, kind: 'value', schema: { struct: [{ name: 'sum', type: 'long', nullable: true }] } }]
      : declareVariables(new (processors[exportName] as new () => never)(), 'update', timeMode),
    eventTimeColumn: timeMode === 'eventTime' ? 'ts' : null,
  };
  return query(op, 'update', { schema: SCHEMA, layout: { keyGroups: 16, partitions: 4, shards: 2 } });
}

/** Processing time moves 4-20 s a batch: timers 5 s on fire two batches later, TTL of 20 s expires lists. */
const TIMED_BATCHES: Batch[] = [
  { batchId: 0, watermarkMs: 0, timestampMs: 100 * S, tasks: [[r(1, 'a', 1), r(2, 'b', 2)], [r(3, 'a', 3)]] },
  { batchId: 1, watermarkMs: 0, timestampMs: 103 * S, tasks: [[r(4, 'a', 4), r(5, 'c', 5)]] },
  { batchId: 2, watermarkMs: 0, timestampMs: 106 * S, tasks: [[r(6, 'd', 6)]] },
  { batchId: 3, watermarkMs: 0, timestampMs: 110 * S, tasks: [] },
  { batchId: 4, watermarkMs: 0, timestampMs: 130 * S, tasks: [[r(70, 'a', 7), r(71, 'd', 8)]] },
  { batchId: 5, watermarkMs: 0, timestampMs: 150 * S, tasks: [] },
];

/** Event time: the watermark fires timers at each key's greatest ts plus 5 s; rows at or below it drop. */
const EVENT_BATCHES: Batch[] = [
  { batchId: 0, watermarkMs: 0, timestampMs: 100 * S, tasks: [[r(1, 'a', 1), r(2, 'b', 2)], [r(9, 'a', 3)]] },
  { batchId: 1, watermarkMs: 5 * S, tasks: [[r(4, 'a', 4), r(10, 'a', 2), r(12, 'c', 5), r(3, 'b', 1)]], timestampMs: 101 * S },
  { batchId: 2, watermarkMs: 15 * S, tasks: [[r(16, 'd', 6)]], timestampMs: 102 * S },
  { batchId: 3, watermarkMs: 30 * S, tasks: [], timestampMs: 103 * S },
];

// ---- the cases ---------------------------------------------------------------------------------

const cases: Array<[string, Query, Batch[]]> = [
  ['session window, append', query(sessions, 'append'), SESSION_BATCHES],
  ['session window, complete', query(sessions, 'complete'), SESSION_BATCHES],
  ...(['inner', 'left_outer', 'right_outer', 'full_outer', 'left_semi'] as const).map((how): [string, Query, Batch[]] => [
    `stream-stream join, ${how}`,
    joinQuery(how),
    JOIN_BATCHES,
  ]),
  ['transformWithState, processing-time timers and TTL', processorQuery('CountWithTimers', 'processingTime'), TIMED_BATCHES],
  ['transformWithState, event-time timers', processorQuery('MaxEventTime', 'eventTime'), EVENT_BATCHES],
  ['flatMapGroupsWithState, processing-time timeout', processorQuery('sumWithTimeout', 'processingTime'), TIMED_BATCHES],
];

const emitted = (outcomes: Outcome[]) => outcomes.reduce((n, o) => n + o.rows.length, 0);
const removed = (outcomes: Outcome[]) => outcomes.reduce((n, o) => n + o.state.numRowsRemoved, 0);

describe('every stateful operator kind: a retried or replayed batch is exact', () => {
  for (const [cache, cacheBytes] of CACHES) {
    for (const [name, q, batches] of cases) {
      it(`${name} (${cache}): every batch run twice gives the rows, metrics and state bytes of one run`, async () => {
        const once = await expectExactReplay(q, batches, cacheBytes);
        // The batches exercise the operator: it emits rows and its state shrinks as well as grows.
        expect(emitted(once)).toBeGreaterThan(0);
        if (q.outputMode !== 'complete') expect(removed(once)).toBeGreaterThan(0);
      });
    }
  }
});

// ---- streaming limit ---------------------------------------------------------------------------

/** limit(6) over BATCHES (5 rows, then 5, then none past it): the count grows in two batches, then stays; two shards, one holds it. */
const LIMIT: Query = query({ kind: 'limit', n: 6, afterAggregation: false }, 'append', {
  hasWatermark: false,
  layout: { keyGroups: 16, partitions: 4, shards: 2 },
});

describe('the streaming limit: a retried or replayed batch is exact', () => {
  for (const [cache, cacheBytes] of CACHES) {
    it(`limit (${cache}): every batch run twice gives the rows, metrics and state bytes of one run`, async () => {
      const once = await expectExactReplay(LIMIT, BATCHES, cacheBytes);
      // n rows in all, and the count is one state row once the first batch emitted.
      expect(emitted(once)).toBe(6);
      expect(Math.max(...once.map((o) => o.state.numRowsTotal))).toBe(1);
    });
  }
});
