/**
 * The state side of a join of two streams (join/batch.ts), driven through runStateTask over memory
 * shards: the rows each batch emits, the state it keeps (rows with matched flags under each side's
 * key, index entries at their least expiry) and what it reads, with the worker's join cache on and
 * off, across a worker that starts again on the shard.
 */
import { dataRange, decodeDataKey, decodeIndexKey, indexKey, indexRange, valueHeader, ValueKind } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import type { Expr } from '../../expressions/types.js';
import type { Row, Schema } from '../../schema/types.js';
import type { ShuffleBlock } from '../../task/messages.js';
import { streamPartials } from '../tasks.js';
import { sortRows } from '../mapSideTestKit.js';
import { CACHES, counts, freshShards, h, run, S, useFreshShards, type Query } from '../stateTaskTestKit.js';
import { decodeJoinValue, encodeJoinValue, joinIndexTimeOf } from './codec.js';
import type { StreamJoinOp } from './plan.js';
import { decodeJoinBlock, JoinBlockWriter, type JoinRecord } from './shuffle.js';
import { batchFromRows } from '../../columns/vectors.js';
import { indexTimeOf, operatorNamed, rowsInOf } from '../registry.js';
import { packWithValueHeader, plainPackr } from '../../task/packers.js';

useFreshShards();

const LEFT: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'lt', type: 'timestamp', nullable: false },
];
const RIGHT: Schema = [
  { name: 'rid', type: 'string', nullable: true },
  { name: 'rt', type: 'timestamp', nullable: false },
];
const col = (name: string): Expr => ({ op: 'col', name });
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

/** id = rid AND RANGE, both sides watermarked on their times: each evicted by the bound on its time. */
function joinOp(how: StreamJoinOp['how'], over: Partial<StreamJoinOp> = {}): StreamJoinOp {
  return {
    kind: 'streamJoin',
    how,
    leftKeys: ['id'],
    rightKeys: ['rid'],
    using: false,
    residual: RANGE,
    left: { schema: LEFT, watermarked: ['lt'], eventTime: 'lt', eviction: { kind: 'value' } },
    right: { schema: RIGHT, watermarked: ['rt'], eventTime: 'rt', eviction: { kind: 'value' } },
    ...over,
  };
}

const query = (op: StreamJoinOp): Query => ({
  op,
  schema: LEFT,
  layout: { keyGroups: 16, partitions: 1, shards: 1 },
  outputMode: 'append',
  hasWatermark: true,
});
const L = (id: string | null, tS: number): Row => ({ id, lt: tS * S });
const R = (rid: string | null, tS: number): Row => ({ rid, rt: tS * S });

/** The blocks of a batch whose left map task read `left` and right one `right`. */
function blocks(op: StreamJoinOp, left: Row[], right: Row[], lateMs: number | null = null): Map<number, ShuffleBlock[]> {
  const byPartition = new Map<number, ShuffleBlock[]>();
  const layout = { keyGroups: 16, partitions: 1, shards: 1 };
  for (const [side, rows] of [
    [0, left],
    [1, right],
  ] as const) {
    const stream = streamPartials(op, side === 0 ? LEFT : RIGHT, layout, new Map(), lateMs, side);
    for (const row of rows) stream.add(row);
    for (const b of stream.finish().blocks) byPartition.set(b.partition, [...(byPartition.get(b.partition) ?? []), b]);
  }
  return byPartition;
}

async function batch(op: StreamJoinOp, batchId: number, watermarkS: number, left: Row[], right: Row[]) {
  return run(query(op), { batchId, watermarkMs: watermarkS * S, tasks: [] }, 0, 0, blocks(op, left, right));
}

/** The shard's join state: per side and key, its rows as [id, seconds, matched], and the index entries' times (s). */
async function stateOf(): Promise<{ rows: string[]; index: number[] }> {
  const store = h.store(0);
  const [gte, lt] = dataRange();
  const rows: string[] = [];
  for (const [k, v] of await store.range(gte, lt)) {
    const { key } = decodeDataKey(k);
    const side = key[0] as 0 | 1;
    for (const [row, matched] of decodeJoinValue(v, side === 0 ? LEFT : RIGHT).rows) {
      rows.push(
        `${side === 0 ? 'L' : 'R'} ${String(row[side === 0 ? 'id' : 'rid'])}@${(row[side === 0 ? 'lt' : 'rt'] as number) / S}${matched ? ' matched' : ''}`,
      );
    }
  }
  const [ig, il] = indexRange();
  const index = (await store.range(ig, il)).map(([k]) => decodeIndexKey(k).timeMs / S);
  return { rows: rows.sort(), index: index.sort((a, b) => a - b) };
}

const joined = (id: string, lt: number, rt: number): Row => ({ id, lt: lt * S, rid: id, rt: rt * S });
const leftAlone = (id: string | null, lt: number): Row => ({ id, lt: lt * S, rid: null, rt: null });

describe('state values', () => {
  it('keep rows, their matched flags and the index time; repartitions count the rows and read the time', () => {
    const value = encodeJoinValue(
      42_000,
      [
        [L('a', 1), false],
        [L('a', 2), true],
      ],
      LEFT,
    );
    expect(decodeJoinValue(value, LEFT)).toEqual({
      indexTime: 42_000,
      rows: [
        [L('a', 1), false],
        [L('a', 2), true],
      ],
    });
    // The value header tells both, whatever the kind (by the name a state layout file records, as the checkpoint tool finds it).
    expect(valueHeader(value)).toMatchObject({ kind: ValueKind.joinRows, indexTime: 42_000, rows: 2 });
    expect(rowsInOf(operatorNamed('symmetricHashJoin')).rowsIn(value)).toBe(2);
    expect(indexTimeOf(joinOp('inner'), LEFT, true)(new Uint8Array(0), value)).toBe(42_000);
    // A value written before the header: [index time, row count, then matched flag and values per row].
    const old = plainPackr.pack([42_000, 2, 0, 'a', 1 * S, 1, 'a', 2 * S]);
    expect(decodeJoinValue(old, LEFT)).toEqual(decodeJoinValue(value, LEFT));
    expect(rowsInOf(operatorNamed('symmetricHashJoin')).rowsIn(old)).toBe(2);
    expect(indexTimeOf(joinOp('inner'), LEFT, true)(new Uint8Array(0), old)).toBe(42_000);
    // Version 1: the header, then one msgpack array of matched flag and values per row.
    const v1 = packWithValueHeader(plainPackr, [0, 'a', 1 * S, 1, 'a', 2 * S], ValueKind.joinRows, 1, 42_000, 2);
    expect(decodeJoinValue(v1, LEFT)).toEqual(decodeJoinValue(value, LEFT));
    expect(joinIndexTimeOf(v1)).toBe(42_000);
    // Kinds whose old values are one row each.
    expect(rowsInOf(operatorNamed('stateStoreSave')).rowsIn(Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f))).toBe(1);
    expect(rowsInOf(operatorNamed('flatMapGroupsWithState')).rowsIn(plainPackr.pack([1, [], ['s', 'value', 1, null]]))).toBe(1);
  });

  it('keep every type of value as columns: nulls, -0, booleans, strings past ASCII, structs', () => {
    const schema: Schema = [
      { name: 's', type: 'string', nullable: true },
      { name: 'n', type: 'double', nullable: true },
      { name: 'b', type: 'boolean', nullable: true },
      { name: 'w', type: { struct: [{ name: 'start', type: 'timestamp', nullable: true }] }, nullable: true },
    ];
    const rows: Array<[Row, boolean]> = [
      [{ s: 'ÿ €😀 long enough to go through the encoder, past thirty-two characters', n: -0, b: true, w: { start: 5 } }, true],
      [{ s: null, n: null, b: null, w: null }, false],
      [{ s: '', n: Number.NaN, b: false, w: { start: null } }, false],
      [{ s: 'ascii', n: 1.5e300, b: false, w: { start: 7 } }, true],
    ];
    const { rows: back } = decodeJoinValue(encodeJoinValue(null, rows, schema), schema);
    expect(back).toEqual(rows);
    expect(Object.is(back[0]![0].n, -0)).toBe(true);
    // A value that is not of its column's type (engine rows are typed; this is the safety net) goes as it is.
    const odd: Array<[Row, boolean]> = [[{ s: 'a', n: 'not a number', b: true, w: null }, false]];
    expect(decodeJoinValue(encodeJoinValue(null, odd, schema), schema).rows).toEqual(odd);
  });

  it('a damaged value, or one of another side or query, is STATE_STORE_CORRUPT', () => {
    const two = encodeJoinValue(
      7,
      [
        [L('a', 1), false],
        [L('b', 2), true],
      ],
      LEFT,
    );
    expect(() => decodeJoinValue(two.subarray(0, two.length - 3), LEFT)).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
    expect(() => decodeJoinValue(Uint8Array.of(...two, 0), LEFT)).toThrow(/past its columns/);
    const value = encodeJoinValue(null, [[L('a', 1), false]], LEFT);
    expect(() => decodeJoinValue(value, [...LEFT, { name: 'extra', type: 'int', nullable: true }])).toThrow(
      expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }),
    );
    expect(() => decodeJoinValue(new Uint8Array([0xc1]), LEFT)).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
    expect(() => joinIndexTimeOf(new Uint8Array([0x01]))).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
    expect(() => decodeJoinValue(Uint8Array.of(0xf5, ValueKind.dedup, 1, 0), LEFT)).toThrow(/kind 3, not 4/);
  });
});

describe.each(CACHES)('a left outer join with a time range (%s)', (_name, cacheBytes) => {
  it('joins across batches, marks matches, evicts each side by its bound, and emits the unmatched left rows once', async () => {
    await freshShards(cacheBytes);
    const op = joinOp('left_outer');
    // Batch 0 (watermark 0): a and b arrive on the left; a's click in range, c's with no impression.
    let out = await batch(op, 0, 0, [L('a', 10), L('b', 10)], [R('a', 15), R('c', 12)]);
    expect(out.rows).toEqual([joined('a', 10, 15)]);
    expect(counts(out.state)).toEqual({ numRowsTotal: 4, numRowsUpdated: 4, numRowsRemoved: 0, numRowsDroppedByWatermark: 0 });
    // Left rows expire once lt <= wm - 10 s - 1 ms, right ones once rt <= wm - 1 ms: index at time + 10 s + 1 ms and + 1 ms.
    expect(await stateOf()).toEqual({ rows: ['L a@10 matched', 'L b@10', 'R a@15 matched', 'R c@12'], index: [12.001, 15.001, 20.001, 20.001] });

    // Batch 1 (watermark 13): c's right row expires; a later click of b, out of range, joins nothing.
    out = await batch(op, 1, 13, [], [R('b', 21)]);
    expect(out.rows).toEqual([]);
    expect(counts(out.state)).toEqual({ numRowsTotal: 4, numRowsUpdated: 1, numRowsRemoved: 1, numRowsDroppedByWatermark: 0 });
    expect((await stateOf()).rows).toEqual(['L a@10 matched', 'L b@10', 'R a@15 matched', 'R b@21']);

    // Batch 2 (watermark 30, no data): every left row expires; b never matched, so it comes out alone.
    out = await batch(op, 2, 30, [], []);
    expect(out.rows).toEqual([leftAlone('b', 10)]);
    expect(counts(out.state)).toEqual({ numRowsTotal: 0, numRowsUpdated: 0, numRowsRemoved: 4, numRowsDroppedByWatermark: 0 });
    expect(await stateOf()).toEqual({ rows: [], index: [] });
  });

  it("a row with a null key matches nothing and comes out alone at once; rows the watermark has passed still meet this batch's rows, then go", async () => {
    await freshShards(cacheBytes);
    const op = joinOp('left_outer');
    const out = await batch(op, 0, 50, [L(null, 60), L('x', 30)], [R(null, 60), R('x', 35)]);
    // x's rows are past both bounds (left 50 - 10 s, right 50 s). As in Spark since SPARK-49829,
    // the left one is stored all the same, so the right one, processed after it, meets it; both
    // are gone at the end of the batch.
    expect(sortRows(out.rows)).toEqual(sortRows([leftAlone(null, 60), joined('x', 30, 35)]));
    expect(counts(out.state)).toEqual({ numRowsTotal: 0, numRowsUpdated: 1, numRowsRemoved: 1, numRowsDroppedByWatermark: 0 });
  });

  it('an unmatched outer row the watermark has passed comes out with nulls in the same batch, on either side', async () => {
    await freshShards(cacheBytes);
    const left = await batch(joinOp('left_outer'), 0, 50, [L('x', 30)], []);
    expect(left.rows).toEqual([leftAlone('x', 30)]);
    expect(counts(left.state)).toEqual({ numRowsTotal: 0, numRowsUpdated: 1, numRowsRemoved: 1, numRowsDroppedByWatermark: 0 });
    await freshShards(cacheBytes);
    const right = await batch(joinOp('inner'), 0, 50, [], [R('y', 35)]);
    // An inner join keeps no right row the watermark has passed: nothing of this batch is left to meet it.
    expect(right.rows).toEqual([]);
    expect(counts(right.state)).toEqual({ numRowsTotal: 0, numRowsUpdated: 0, numRowsRemoved: 0, numRowsDroppedByWatermark: 0 });
  });

  it('a worker that starts again reads the state from the shard: the same rows come out', async () => {
    await freshShards(cacheBytes);
    const op = joinOp('left_outer');
    await batch(op, 0, 0, [L('a', 10), L('b', 10)], []);
    // A process restart: the stores and the worker's caches go, the shard stays.
    await h.restart();
    const out = await batch(op, 1, 0, [], [R('a', 11), R('b', 12)]);
    expect(sortRows(out.rows)).toEqual(sortRows([joined('a', 10, 11), joined('b', 10, 12)]));
    expect(out.state.numRowsTotal).toBe(4);
  });

  it('an index entry that names no key is deleted (when the watermark passes it, or when a complete cache is filled)', async () => {
    await freshShards(cacheBytes);
    const op = joinOp('inner');
    await batch(op, 0, 0, [L('a', 10)], []);
    // An entry for a key with no data, at 5 s (as a crash of an earlier format could leave).
    const orphan = indexKey(5 * S, 3, new Uint8Array([0, 1, 2]));
    await h.store(0).commit(1, [{ key: orphan, value: new Uint8Array(0), prior: null }], 0, 1);
    // A restart, so that the cache (if on) is read from the shard: the orphan is in its index scan.
    await h.restart();
    const out = await batch(op, 2, 8, [L('a', 11)], []);
    expect(out.rows).toEqual([]);
    const { index } = await stateOf();
    // The orphan is gone; a's entry (least expiry 20.001) is there.
    expect(index).toEqual([20.001]);
  });
});

describe('join types', () => {
  it.each([
    ['inner', [joined('a', 10, 15)], []],
    ['left_outer', [joined('a', 10, 15)], [leftAlone('b', 10)]],
    ['right_outer', [joined('a', 10, 15)], [{ id: null, lt: null, rid: 'c', rt: 12 * S }]],
    ['full_outer', [joined('a', 10, 15)], [leftAlone('b', 10), { id: null, lt: null, rid: 'c', rt: 12 * S }]],
    ['left_semi', [{ id: 'a', lt: 10 * S }], []],
  ] as const)('%s: matches in the batch, the unmatched side rows once the watermark passes them', async (how, first, last) => {
    const op = joinOp(how);
    const out0 = await batch(op, 0, 0, [L('a', 10), L('b', 10)], [R('a', 15), R('c', 12)]);
    expect(sortRows(out0.rows)).toEqual(sortRows([...first]));
    const out1 = await batch(op, 1, 100, [], []);
    expect(sortRows(out1.rows)).toEqual(sortRows([...last]));
    expect(out1.state.numRowsTotal).toBe(0);
  });

  it('left semi: a left row matched by two right rows comes out once', async () => {
    const op = joinOp('left_semi');
    const out0 = await batch(op, 0, 0, [L('a', 10)], []);
    expect(out0.rows).toEqual([]);
    const out1 = await batch(op, 1, 0, [], [R('a', 11), R('a', 12)]);
    expect(out1.rows).toEqual([{ id: 'a', lt: 10 * S }]);
  });

  it('a null-safe key (<=>) matches null with null', async () => {
    const op = joinOp('inner', { nullSafe: [true] });
    const out = await batch(op, 0, 0, [L(null, 10)], [R(null, 11)]);
    expect(out.rows).toEqual([{ id: null, lt: 10 * S, rid: null, rt: 11 * S }]);
  });

  it('late rows drop on the map side by the late watermark, counted', () => {
    const op = joinOp('inner');
    const stream = streamPartials(op, LEFT, { keyGroups: 16, partitions: 1, shards: 1 }, new Map(), 10 * S, 0);
    for (const row of [L('a', 9), L('a', 10), L('a', 11)]) stream.add(row);
    expect(stream.finish()).toEqual(expect.objectContaining({ numRecords: 1, numLate: 2 }));
  });
});

describe('shuffle blocks', () => {
  const layout = { keyGroups: 16, partitions: 3, shards: 1 };
  const rows: Row[] = [L('a', 1), L(null, 2), L('b', 3), L('a', 4), L('c', 0.5), L('é', 5)];
  const decoded = (parts: { blocks: ShuffleBlock[] }): Array<[number, JoinRecord[]]> =>
    parts.blocks.map((b) => {
      const into: [JoinRecord[], JoinRecord[]] = [[], []];
      decodeJoinBlock(b.data, [LEFT, RIGHT], into);
      expect(into[1]).toEqual([]);
      return [b.partition, into[0]];
    });

  it('carry every on-time row under its key, the same from rows as from column batches', () => {
    const op = joinOp('inner');
    const fromRows = streamPartials(op, LEFT, layout, new Map(), 1 * S, 0);
    for (const row of rows) fromRows.add(row);
    const rowParts = fromRows.finish();
    const fromColumns = new JoinBlockWriter(op, 0, layout, 1 * S);
    // Two batches, as a map task over a source gets them.
    fromColumns.addBatch(batchFromRows(rows, LEFT, 0, 3));
    fromColumns.addBatch(batchFromRows(rows, LEFT, 3, rows.length));
    const columnParts = fromColumns.finish();
    // The rows at or below the late threshold (1 s) are dropped and counted.
    expect(rowParts.numLate).toBe(2);
    expect(columnParts.numLate).toBe(2);
    expect(rowParts.numRecords).toBe(4);
    expect(columnParts.numRecords).toBe(4);
    const want = decoded(rowParts);
    expect(decoded(columnParts)).toEqual(want);
    const all = want.flatMap(([, recs]) => recs);
    expect(sortRows(all.map((r) => r[2]))).toEqual(sortRows([L(null, 2), L('b', 3), L('a', 4), L('é', 5)]));
    // A key with a null goes to key group 0 with no key bytes; equal keys have equal bytes and groups.
    expect(all.find((r) => r[2].id === null)?.slice(0, 2)).toEqual([0, null]);
    expect(new Set(want.map(([p]) => p)).size).toBeGreaterThan(1);
  });
});
