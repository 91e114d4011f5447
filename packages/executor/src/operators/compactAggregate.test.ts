/**
 * The cell path of the reduce side (compactAggregate.ts) against the general path (stateTask.ts)
 * on the same batches: every numeric aggregate, nulls, NaN, -0, keys merged from two map tasks,
 * late keys, eviction, and each output mode. Both must emit the same rows in each batch and
 * leave byte-identical shards (values, index, undo records and meta).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryVolume, openMemoryShard, ShardRegistry, partitionsIn, contiguousAssignment } from '@sluice/state';
import { partitionPartials, random, sortRows } from './mapSideTestKit.js';
import { releaseShards, runStateTask, useGeneralAggregatePath, useShardRegistry } from './stateTask.js';
import { cellLayoutOf, useStateChunks } from './compactAggregate.js';
import type { AggSpec, OutputMode, StatefulOp } from './types.js';
import type { Expr } from '../expressions/types.js';
import type { Row, Schema } from '../schema/types.js';
import type { StateLayoutMsg, StateTask } from '../task/messages.js';
import { decodeRows } from '../task/rowCodec.js';

const S = 1000;
const col = (name: string): Expr => ({ op: 'col', name });
const SCHEMA: Schema = [
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'id', type: 'string', nullable: true },
  { name: 'n', type: 'long', nullable: true },
  { name: 'v', type: 'double', nullable: true },
];
const LAYOUT: StateLayoutMsg = { keyGroups: 16, partitions: 4, shards: 2 };
const aggs: AggSpec[] = [
  { fn: 'count', arg: null, name: 'c' },
  { fn: 'count', arg: col('v'), name: 'cv' },
  ...(['sum', 'avg', 'min', 'max'] as const).flatMap((fn) =>
    // Timestamps have no sum or average.
    (fn === 'min' || fn === 'max' ? ['n', 'v', 'ts'] : ['n', 'v']).map((c) => ({ fn, arg: col(c), name: `${fn}_${c}` })),
  ),
];
const op: StatefulOp = {
  kind: 'aggregate',
  keys: [{ op: 'window', expr: col('ts'), sizeMs: 10 * S, slideMs: 10 * S, startMs: 0 }, col('id')],
  keyNames: ['window', 'id'],
  aggs,
  eventTimeKey: 0,
};

/** Batch b: two map tasks of rows around 10 s * b, some late. */
function batches(count: number): Array<{ tasks: Row[][]; watermarkMs: number }> {
  const r = random(5);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  return Array.from({ length: count }, (_, b) => ({
    watermarkMs: Math.max(0, (b - 2) * 10 * S),
    tasks: [0, 1].map(() =>
      Array.from({ length: 60 }, () => ({
        ts: b * 10 * S + pick([-25, -12, 0, 3, 9.999, 15]) * S,
        id: pick(['a', 'b', 'c', null]),
        n: pick([1, -4, 0, null, 2 ** 40]),
        v: pick([0.5, -0, 0, Number.NaN, null, -1e10]),
      })),
    ),
  }));
}

async function runAll(mode: OutputMode, general: boolean): Promise<{ rows: Row[][]; shards: string[][] }> {
  const volumes = new Map<string, MemoryVolume>();
  const stateDir = `/mem/compact-${mode}-${general}-${Math.random()}`;
  const previous = useShardRegistry(
    new ShardRegistry(async (dir) => {
      let v = volumes.get(dir);
      if (v === undefined) volumes.set(dir, (v = new MemoryVolume(dir)));
      return openMemoryShard(v);
    }),
  );
  useGeneralAggregatePath(general);
  const rows: Row[][] = [];
  try {
    for (const [batchId, b] of batches(8).entries()) {
      const blocks = b.tasks.flatMap((t) => partitionPartials(t, op, SCHEMA, LAYOUT).blocks);
      for (let shard = 0; shard < LAYOUT.shards; shard++) {
        const partitions = partitionsIn(contiguousAssignment(LAYOUT), shard);
        const task: StateTask = {
          kind: 'state', queryId: 'q', runId: 'r', batchId, attempt: 0, partition: shard, operatorId: 0,
          shardDir: `${stateDir}/shard-${shard}`,
          storeOptions: { cacheBytes: 1 << 20, writeBufferBytes: 1 << 20, maxOpenFiles: 10, stateCacheBytes: 64 << 20 },
          workerBudget: { maxOpenFiles: 1000, maxMemoryBytes: 1 << 30 },
          layout: LAYOUT, partitions, blocks: blocks.filter((x) => partitions.includes(x.partition)),
          stateful: op, stateInputSchema: SCHEMA, outputMode: mode, watermarkMs: b.watermarkMs, hasWatermark: true,
          post: [], output: { type: 'collect' }, pruneUndoBelow: batchId - 1, expectedMarker: null,
        };
        const result = await runStateTask(task, new Map());
        // Within a batch, rows come in no promised order (the cell path takes partitions in groups).
        rows.push(sortRows(decodeRows(result.rows as Uint8Array)));
      }
    }
    const shards = [...volumes.values()].map((v) => v.sortedKeys().map((k) => `${Buffer.from(k, 'latin1').toString('hex')}=${Buffer.from(v.data.get(k)!).toString('hex')}`));
    return { rows, shards };
  } finally {
    await releaseShards(stateDir);
    useGeneralAggregatePath(false);
    useShardRegistry(previous);
  }
}

describe('the cell path of the reduce side matches the general path', () => {
  afterEach(() => useGeneralAggregatePath(false));

  it('takes every numeric aggregate, and leaves min and max of strings to the general path', () => {
    expect(cellLayoutOf(op as Extract<StatefulOp, { kind: 'aggregate' }>, SCHEMA)).toBeDefined();
    const strMin: StatefulOp = { ...op, aggs: [{ fn: 'min', arg: col('id'), name: 'm' }] } as StatefulOp;
    expect(cellLayoutOf(strMin as Extract<StatefulOp, { kind: 'aggregate' }>, SCHEMA)).toBeUndefined();
  });

  for (const mode of ['append', 'update', 'complete'] as const) {
    it(`${mode} mode: same rows, same bytes in every shard`, async () => {
      const cells = await runAll(mode, false);
      const general = await runAll(mode, true);
      expect(cells.rows.flat().length).toBeGreaterThan(0);
      expect(cells.rows).toEqual(general.rows);
      expect(cells.shards).toEqual(general.shards);
    });

    it(`${mode} mode, one partition at a time and evictions read 3 index entries at a time: the same`, async () => {
      const general = await runAll(mode, true);
      useStateChunks(1, 3);
      try {
        const cells = await runAll(mode, false);
        expect(cells.rows).toEqual(general.rows);
        expect(cells.shards).toEqual(general.shards);
      } finally {
        useStateChunks(4 << 20, 65536);
      }
    });
  }
});
