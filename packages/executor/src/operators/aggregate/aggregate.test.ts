/**
 * The reduce side of an aggregation (task.ts over aggCells.ts) against a plain model
 * of Spark's semantics on the same batches: every aggregate (numbers in cells, strings and
 * booleans in object slots), nulls, NaN, -0, keys merged from two map tasks, late keys, eviction,
 * and each output mode. It must emit the model's rows in each batch, and leave in the shards
 * exactly the model's state: each key's value header (its index time) and aggBufferCodec.ts encoding of aggregates.ts's merged buffers,
 * and an index entry per key with an event time.
 */
import { describe, expect, it } from 'vitest';
import { contiguousAssignment, dataKey, decodeDataKey, decodeKey, indexKey, partitionsIn, ShardRegistry, ValueKind, withValueHeader } from '@sluice/state';
import { MemoryVolume, openMemoryShard } from '@sluice/state/testing';
import { partitionPartials, random, sortRows } from '../mapSideTestKit.js';
import { releaseShards, runStateTask, useShardRegistry } from '../stateTask.js';
import { useStateChunks } from './task.js';
import { aggregatorOf, type AggBuffer } from '../aggregates.js';
import { encodeBuffers } from '../aggBufferCodec.js';
import { operatorUsesWatermark } from '../registry.js';
import type { AggSpec, OutputMode, StatefulOp } from '../types.js';
import type { Expr } from '../../expressions/types.js';
import { exprType } from '../../expressions/exprTypes.js';
import type { Row, Schema } from '../../schema/types.js';
import { decodeAggregateBlock, forEachAggregateRecord } from '../../shuffle/shuffleCodec.js';
import type { ShuffleBlock, StateLayoutMsg, StateTask } from '../../task/messages.js';
import { decodeRows, encodeRows } from '../../task/rowCodec.js';

const S = 1000;
const col = (name: string): Expr => ({ op: 'col', name });
const SCHEMA: Schema = [
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'id', type: 'string', nullable: true },
  { name: 'n', type: 'long', nullable: true },
  { name: 'v', type: 'double', nullable: true },
  { name: 'ok', type: 'boolean', nullable: true },
];
const LAYOUT: StateLayoutMsg = { keyGroups: 16, partitions: 4, shards: 2 };
const aggs: AggSpec[] = [
  { fn: 'count', arg: null, name: 'c' },
  { fn: 'count', arg: col('v'), name: 'cv' },
  ...(['sum', 'avg', 'min', 'max'] as const).flatMap((fn) =>
    // Timestamps have no sum or average; strings and booleans only a min and a max.
    (fn === 'min' || fn === 'max' ? ['n', 'v', 'ts', 'id', 'ok'] : ['n', 'v']).map((c) => ({ fn, arg: col(c), name: `${fn}_${c}` })),
  ),
];
const op: Extract<StatefulOp, { kind: 'aggregate' }> = {
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
        id: pick(['a', 'b', 'c', '😀', null]),
        n: pick([1, -4, 0, null, 2 ** 40]),
        v: pick([0.5, -0, 0, Number.NaN, null, -1e10]),
        ok: pick([true, false, null]),
      })),
    ),
  }));
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Runs every batch through the engine's state tasks; gives each batch's rows and the shards' data and index entries. */
async function runEngine(mode: OutputMode, blocksOf: Array<ShuffleBlock[]>, watermarks: number[]): Promise<{ rows: Row[][]; entries: string[] }> {
  const volumes = new Map<string, MemoryVolume>();
  const stateDir = `/mem/compact-${mode}-${Math.random()}`;
  const previous = useShardRegistry(
    new ShardRegistry(async (dir) => {
      let v = volumes.get(dir);
      if (v === undefined) {
        v = new MemoryVolume(dir);
        volumes.set(dir, v);
      }
      return openMemoryShard(v);
    }),
  );
  const rows: Row[][] = [];
  try {
    for (const [batchId, blocks] of blocksOf.entries()) {
      const batch: Row[] = [];
      for (let shard = 0; shard < LAYOUT.shards; shard++) {
        const partitions = partitionsIn(contiguousAssignment(LAYOUT), shard);
        const task: StateTask = {
          kind: 'state',
          queryId: 'q',
          runId: 'r',
          batchId,
          attempt: 0,
          partition: shard,
          operatorId: 0,
          shardDir: `${stateDir}/shard-${shard}`,
          storeOptions: { cacheBytes: 1 << 20, writeBufferBytes: 1 << 20, maxOpenFiles: 10, stateCacheBytes: 64 << 20 },
          workerBudget: { maxOpenFiles: 1000, maxMemoryBytes: 1 << 30 },
          layout: LAYOUT,
          partitions,
          blocks: blocks.filter((x) => partitions.includes(x.partition)),
          stateful: op,
          stateInputSchema: SCHEMA,
          outputMode: mode,
          watermarkMs: watermarks[batchId]!,
          hasWatermark: true,
          post: [],
          output: { type: 'collect' },
          pruneUndoBelow: batchId - 1,
          expectedMarker: null,
        };
        const result = await runStateTask(task, new Map());
        batch.push(...decodeRows(result.rows as Uint8Array));
      }
      // Within a batch, rows come in no promised order (the reduce side takes partitions in groups).
      rows.push(sortRows(batch));
    }
    // Data entries (prefix 1) and index entries (prefix 2); undo records and the marker are the store's own.
    const entries = [...volumes.values()].flatMap((v) =>
      v.sortedKeys().flatMap((k) => {
        const key = Buffer.from(k, 'latin1');
        return key[0] === 1 || key[0] === 2 ? [`${key.toString('hex')}=${hex(v.data.get(k)!)}`] : [];
      }),
    );
    return { rows, entries: entries.sort() };
  } finally {
    await releaseShards(stateDir);
    useShardRegistry(previous);
  }
}

/** The plain model: a Map of merged buffers, late keys dropped and windows evicted by Spark's rules. */
function runModel(mode: OutputMode, blocksOf: Array<ShuffleBlock[]>, watermarks: number[]): { rows: Row[][]; entries: string[] } {
  const keyTypes = op.keys.map((k) => exprType(k, SCHEMA));
  const fns = op.aggs.map((a) => aggregatorOf(a, SCHEMA));
  const merge = (a: AggBuffer[], b: AggBuffer[]): AggBuffer[] => a.map((x, j) => fns[j]!.merge(x, b[j]!));
  const uses = operatorUsesWatermark(op, true, mode);
  const state = new Map<string, { dk: Uint8Array; time: number | null; buffers: AggBuffer[] }>();
  const rowOf = (dk: Uint8Array, buffers: AggBuffer[]): Row => {
    const kv = decodeKey(decodeDataKey(dk).key, keyTypes);
    const row: Row = {};
    op.keyNames.forEach((n, i) => {
      row[n] = kv[i];
    });
    op.aggs.forEach((a, j) => {
      row[a.name] = fns[j]!.finalize(buffers[j]!);
    });
    return row;
  };
  const rows: Row[][] = [];
  for (const [b, blocks] of blocksOf.entries()) {
    const watermark = uses ? watermarks[b]! : undefined;
    const partials = new Map<string, { dk: Uint8Array; time: number | null; buffers: AggBuffer[] }>();
    for (const block of [...blocks].sort((x, y) => x.partition - y.partition)) {
      const records = decodeAggregateBlock(block.data, keyTypes);
      let i = 0;
      forEachAggregateRecord(block.data, (_dk, time) => {
        const [kg, keyBytes, , buffers] = records[i++]!;
        const dk = dataKey(kg, keyBytes);
        const had = partials.get(hex(dk));
        if (had) had.buffers = merge(had.buffers, buffers);
        else partials.set(hex(dk), { dk, time, buffers });
      });
    }
    const out: Row[] = [];
    for (const [k, p] of partials) {
      if (watermark !== undefined && p.time !== null && p.time <= watermark) continue;
      const prior = state.get(k);
      const next = { ...p, buffers: prior ? merge(prior.buffers, p.buffers) : p.buffers };
      state.set(k, next);
      if (mode === 'update') out.push(rowOf(next.dk, next.buffers));
    }
    if (watermark !== undefined) {
      for (const [k, s] of state) {
        if (s.time === null || s.time > watermark) continue;
        state.delete(k);
        if (mode === 'append') out.push(rowOf(s.dk, s.buffers));
      }
    }
    if (mode === 'complete') for (const s of state.values()) out.push(rowOf(s.dk, s.buffers));
    // Through the rows codec, as the state tasks deliver them (it writes -0 as 0).
    rows.push(sortRows(decodeRows(encodeRows(out))));
  }
  const entries = [...state.values()].flatMap((s) => {
    const { kg, key } = decodeDataKey(s.dk);
    const data = `${hex(s.dk)}=${hex(withValueHeader(ValueKind.aggregate, 1, s.time, 1, encodeBuffers(s.buffers)))}`;
    return s.time === null ? [data] : [data, `${hex(indexKey(s.time, kg, key))}=`];
  });
  return { rows, entries: entries.sort() };
}

describe('the reduce side of an aggregation against a plain model', () => {
  const input = batches(8);
  const blocksOf = input.map((b) => b.tasks.flatMap((t) => partitionPartials(t, op, SCHEMA, LAYOUT).blocks));
  const watermarks = input.map((b) => b.watermarkMs);

  for (const mode of ['append', 'update', 'complete'] as const) {
    it(`${mode} mode: the model's rows in every batch, its state in the shards, byte for byte`, async () => {
      const engine = await runEngine(mode, blocksOf, watermarks);
      const model = runModel(mode, blocksOf, watermarks);
      expect(engine.rows.flat().length).toBeGreaterThan(0);
      expect(model.entries.length).toBeGreaterThan(0);
      expect(engine.rows).toEqual(model.rows);
      expect(engine.entries).toEqual(model.entries);
    });

    it(`${mode} mode, one partition at a time and evictions read 3 index entries at a time: the same`, async () => {
      useStateChunks(1, 3);
      try {
        const engine = await runEngine(mode, blocksOf, watermarks);
        const model = runModel(mode, blocksOf, watermarks);
        expect(engine.rows).toEqual(model.rows);
        expect(engine.entries).toEqual(model.entries);
      } finally {
        useStateChunks(4 << 20, 65536);
      }
    });
  }
});
