import { describe, expect, it } from 'vitest';
import { decodeKey, encodeKey, keyGroupOf, partitionOfKeyGroup } from '@sluice/state';
import { col, SCHEMA, thrown } from '../expressions/exprTestKit.js';
import { partitionPartials } from './mapSideTestKit.js';
import { mapTaskCallsUdfs } from './registry.js';
import type { StateLayoutMsg } from '../task/messages.js';
import { decodeAggregateBlock, decodeBlock, type AggregateRecord, type DedupRecord } from '../shuffle/shuffleCodec.js';
import type { Expr } from '../expressions/types.js';
import type { AggSpec, StatefulOp } from './types.js';
import type { Row } from '../schema/types.js';
import { WINDOW_TYPE } from '../expressions/exprTypes.js';

const MIN = 60_000;
const layout: StateLayoutMsg = { keyGroups: 64, partitions: 5, shards: 2 };
const window = (sizeMs: number, slideMs = sizeMs): Expr => ({ op: 'window', expr: col('ts'), sizeMs, slideMs, startMs: 0 });
const countStar: AggSpec = { fn: 'count', arg: null, name: 'count' };
const sumN: AggSpec = { fn: 'sum', arg: col('n'), name: 'sum(n)' };
const avgV: AggSpec = { fn: 'avg', arg: col('v'), name: 'avg(v)' };

function aggregate(keys: Expr[], aggs: AggSpec[]): StatefulOp {
  return { kind: 'aggregate', keys, keyNames: keys.map((_, i) => `k${i}`), aggs, eventTimeKey: null };
}

/** Every record of every block, checked against the partition and key group it must have. */
function records<R extends AggregateRecord | DedupRecord>(rows: Row[], op: StatefulOp, types: Parameters<typeof encodeKey>[1]): R[] {
  const { blocks, numRecords } = partitionPartials(rows, op, SCHEMA, layout);
  expect(blocks.map((b) => b.partition)).toEqual([...new Set(blocks.map((b) => b.partition))].sort((a, b) => a - b));
  const all: R[] = [];
  for (const block of blocks) {
    expect(block.data.byteOffset).toBe(0);
    expect(block.data.buffer.byteLength).toBe(block.data.byteLength);
    expect(block.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    const decoded = op.kind === 'aggregate' ? decodeAggregateBlock(block.data, types) : decodeBlock<DedupRecord>(block.data);
    for (const r of decoded as R[]) {
      const [kg, keyBytes] = r;
      // A deduplication record carries no key values: they decode from its canonical bytes.
      const keyValues = op.kind === 'aggregate' ? (r as AggregateRecord)[2] : decodeKey(keyBytes, types);
      expect([...keyBytes]).toEqual([...encodeKey(keyValues, types)]);
      expect(kg).toBe(keyGroupOf(encodeKey(keyValues, types), layout.keyGroups));
      expect(partitionOfKeyGroup(kg, layout)).toBe(block.partition);
      all.push(r);
    }
  }
  expect(all).toHaveLength(numRecords);
  return all;
}

/** keyValues → buffers, for comparing partials regardless of partition order. */
const partials = (rs: AggregateRecord[]) => Object.fromEntries(rs.map((r) => [JSON.stringify(r[2]), r[3]]));

describe('partitionPartials: aggregation', () => {
  const rows: Row[] = [
    { ts: 1 * MIN, id: 'a', n: 1, v: 1 },
    { ts: 4 * MIN, id: 'a', n: 2, v: null },
    { ts: 6 * MIN, id: 'a', n: null, v: 3 },
    { ts: 7 * MIN, id: 'b', n: 5, v: 4 },
    { ts: 9 * MIN, id: null, n: 7, v: 5 },
    { ts: 2 * MIN, id: null, n: 8, v: 6 },
    { ts: null, id: 'a', n: 100, v: 100 },
  ];

  it('combines the rows of each tumbling window and key into one partial', () => {
    const rs = records<AggregateRecord>(rows, aggregate([window(5 * MIN), col('id')], [countStar, sumN, avgV]), [WINDOW_TYPE, 'string']);
    const w = (s: number) => ({ start: s * MIN, end: (s + 5) * MIN });
    expect(partials(rs)).toEqual({
      [JSON.stringify([w(0), 'a'])]: [2, 3, [1, 1]],
      [JSON.stringify([w(5), 'a'])]: [1, null, [3, 1]],
      [JSON.stringify([w(5), 'b'])]: [1, 5, [4, 1]],
      // null is a group key of its own; the row without a time belongs to no window
      [JSON.stringify([w(5), null])]: [1, 7, [5, 1]],
      [JSON.stringify([w(0), null])]: [1, 8, [6, 1]],
    });
  });

  it('puts each row in every sliding window that contains it', () => {
    const rs = records<AggregateRecord>(rows.slice(0, 4), aggregate([col('id'), window(10 * MIN, 5 * MIN)], [countStar]), ['string', WINDOW_TYPE]);
    const w = (s: number) => ({ start: s * MIN, end: (s + 10) * MIN });
    expect(partials(rs)).toEqual({
      [JSON.stringify(['a', w(-5)])]: [2],
      [JSON.stringify(['a', w(0)])]: [3],
      [JSON.stringify(['a', w(5)])]: [1],
      [JSON.stringify(['b', w(0)])]: [1],
      [JSON.stringify(['b', w(5)])]: [1],
    });
  });

  it('groups without a window, nulls and -0 included', () => {
    const rs = records<AggregateRecord>([{ v: 0 }, { v: -0 }, { v: null }, {}, { v: NaN }, { v: NaN }, { v: 1.5 }], aggregate([col('v')], [countStar]), [
      'double',
    ]);
    expect(rs.map((r) => [r[2][0], r[3][0]]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      [0, 2],
      [1.5, 1],
      [NaN, 2],
      [null, 2],
    ]);
    expect(Object.is(rs.find((r) => r[2][0] === 0)![2][0], 0)).toBe(true);
  });

  it('spreads many keys over the partitions that own their key groups', () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ n: i % 200, ts: 0 }));
    const { blocks, numRecords } = partitionPartials(many, aggregate([col('n')], [countStar]), SCHEMA, layout);
    expect(numRecords).toBe(200);
    expect(blocks.map((b) => b.partition)).toEqual([0, 1, 2, 3, 4]);
    const counts = blocks.flatMap((b) => decodeAggregateBlock(b.data, ['long'])).map((r) => r[3][0]);
    expect(counts.reduce((a, b) => (a as number) + (b as number), 0)).toBe(500);
  });

  it('gives no blocks for no rows, and refuses two windows', () => {
    expect(partitionPartials([], aggregate([col('id')], [countStar]), SCHEMA, layout)).toEqual({ blocks: [], numRecords: 0, numLate: 0 });
    expect(thrown(() => partitionPartials([], aggregate([window(MIN), window(2 * MIN)], [countStar]), SCHEMA, layout)).code).toBe('UNSUPPORTED_OPERATION');
  });
});

describe('partitionPartials: deduplication', () => {
  const rows: Row[] = [
    { id: 'a', n: 1, ts: 10 },
    { id: 'a', n: 2, ts: 20 },
    { id: 'b', n: 3, ts: null },
    { id: null, n: 4, ts: 40 },
    { id: null, n: 5, ts: 50 },
  ];

  it('keeps the first row of each key with its event time', () => {
    const op: StatefulOp = { kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 5 };
    const rs = records<DedupRecord>(rows, op, ['string']);
    expect(rs.map((r) => [decodeKey(r[1], ['string']), r[2], r[3]]).sort((a, b) => ((a[1] as Row).n as number) - ((b[1] as Row).n as number))).toEqual([
      [['a'], rows[0], 10],
      [['b'], rows[2], null],
      [[null], rows[3], 40],
    ]);
  });

  it('keys by several columns, and without an event-time column sends null times', () => {
    const op: StatefulOp = { kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: null };
    const rs = records<DedupRecord>([...rows, { id: 'a', n: 9, ts: 10 }], op, ['string', 'timestamp']);
    expect(rs).toHaveLength(5);
    expect(rs.every((r) => r[3] === null)).toBe(true);
    const key = (r: DedupRecord) => decodeKey(r[1], ['string', 'timestamp']);
    expect(rs.find((r) => key(r)[0] === 'a' && key(r)[1] === 10)![2]).toEqual(rows[0]);
  });
});

describe('mapTaskCallsUdfs', () => {
  const udf: Expr = { op: 'udf', moduleUrl: 'file:///u.mjs', exportName: 'f', returnType: 'long', args: [col('n')] };
  const count: StatefulOp = { kind: 'aggregate', keys: [col('id')], keyNames: ['id'], aggs: [{ fn: 'count', arg: null, name: 'count' }], eventTimeKey: null };
  it('finds a udf in a filter, a projection, a grouping key or an aggregate argument, and none in plain expressions', () => {
    expect(mapTaskCallsUdfs({ ops: [{ kind: 'filter', cond: col('b') }], stateful: count })).toBe(false);
    expect(mapTaskCallsUdfs({ ops: [{ kind: 'filter', cond: { op: 'binary', fn: 'gt', left: udf, right: col('n') } }], stateful: count })).toBe(true);
    expect(mapTaskCallsUdfs({ ops: [{ kind: 'project', exprs: [{ op: 'alias', expr: udf, name: 'x' }] }], stateful: count })).toBe(true);
    expect(mapTaskCallsUdfs({ ops: [], stateful: { ...count, keys: [udf] } })).toBe(true);
    expect(mapTaskCallsUdfs({ ops: [], stateful: { ...count, aggs: [{ fn: 'sum', arg: udf, name: 's' }] } })).toBe(true);
  });
});
