/**
 * The harness of the state-task tests (stateTask*.test.ts): runStateTask driven directly with
 * blocks produced by the real map side (partitionPartials) over memory shards (useShardRegistry
 * with a memory opener), each store wrapped so a test sees what a batch read, rolled back and
 * wrote; and the queries and batches they share.
 */
import {
  dataRange,
  decodeDataKey,
  decodeDedupValue,
  decodeIndexKey,
  decodeKey,
  indexRange,
  PREFIX_DATA,
  contiguousAssignment,
  partitionsIn,
  ShardRegistry,
  type KeyType,
} from '@sluice/state';
import { InstrumentedShardStore, type MemoryShardStore, MemoryVolume, openMemoryShard } from '@sluice/state/testing';
import { WINDOW_TYPE } from '../expressions/exprTypes.js';
import { partitionPartials, sortRows } from './mapSideTestKit.js';
import type { ShuffleBlock, StateLayoutMsg, StateOperatorMetrics, StateTask } from '../task/messages.js';
import { decodeRows } from '../task/rowCodec.js';
import { releaseShards, runStateTask, useShardRegistry } from './stateTask.js';
import type { Expr } from '../expressions/types.js';
import type { StatefulOp } from './types.js';
import type { Row, Schema } from '../schema/types.js';
import { afterEach, beforeEach, expect } from 'vitest';
// ---- harness ----------------------------------------------------------------------------------

export type Call =
  | { op: 'getMany'; keys: number; prefixes: number[] }
  | { op: 'range'; prefix: number; returned: number }
  | { op: 'rollback'; batchId: number; rolledBack: boolean; markerAfter: number; contentsAfter: string[] };

/** A memory shard that logs its reads and rollbacks (entriesPerCommit comes from InstrumentedShardStore). */
export class CountingStore extends InstrumentedShardStore {
  readonly calls: Call[] = [];
  /** Makes the next commit throw, before writing ('before') or after it is durable ('after'). */
  failNextCommit: 'before' | 'after' | undefined;
  constructor(readonly memory: MemoryShardStore) {
    super(memory);
  }
  override async getMany(keys: Uint8Array[]): Promise<Array<Uint8Array | undefined>> {
    this.calls.push({ op: 'getMany', keys: keys.length, prefixes: [...new Set(keys.map((k) => k[0] as number))] });
    return super.getMany(keys);
  }
  override async range(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Array<[Uint8Array, Uint8Array]>> {
    const out = await super.range(gte, lt, limit);
    this.calls.push({ op: 'range', prefix: gte[0] as number, returned: out.length });
    return out;
  }
  override async rangeKeys(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Uint8Array[]> {
    const out = await super.rangeKeys(gte, lt, limit);
    this.calls.push({ op: 'range', prefix: gte[0] as number, returned: out.length });
    return out;
  }
  override async commit(...args: Parameters<InstrumentedShardStore['commit']>): ReturnType<InstrumentedShardStore['commit']> {
    const fail = this.failNextCommit;
    this.failNextCommit = undefined;
    if (fail === 'before') throw new Error('injected: commit failed');
    const result = await super.commit(...args);
    if (fail === 'after') throw new Error('injected: task died after its commit');
    return result;
  }
  override async beginCommit(batchId: number): ReturnType<InstrumentedShardStore['beginCommit']> {
    const inner = await super.beginCommit(batchId);
    return {
      add: (changes) => inner.add(changes),
      change: (key, value, prior) => inner.change(key, value, prior),
      finish: async (rowDelta, pruneUndoBelow) => {
        const fail = this.failNextCommit;
        this.failNextCommit = undefined;
        if (fail === 'before') throw new Error('injected: commit failed');
        const result = await inner.finish(rowDelta, pruneUndoBelow);
        if (fail === 'after') throw new Error('injected: task died after its commit');
        return result;
      },
    };
  }
  override async rollbackIfAt(batchId: number): Promise<boolean> {
    const rolledBack = await super.rollbackIfAt(batchId);
    // the shard's bytes right after a rollback (none when nothing was rolled back)
    const contentsAfter = rolledBack ? contents(this.memory.volume) : [];
    this.calls.push({ op: 'rollback', batchId, rolledBack, markerAfter: this.marker, contentsAfter });
    return rolledBack;
  }
  /** Calls since `from` (an index into `calls`). */
  since(from: number): Call[] {
    return this.calls.slice(from);
  }
}

let testNo = 0;

/**
 * Memory volumes play the shard directories; a restart closes every store and reopens the volumes.
 * Each instance has its own directories: the worker keeps per-directory caches in module state.
 */
export class Shards {
  readonly stateDir = `/mem/q${++testNo}/state`;
  /** stateCacheBytes of the tasks. */
  cacheBytes = CACHE_ON;
  readonly volumes = new Map<string, MemoryVolume>();
  readonly stores = new Map<string, CountingStore>();
  registry = this.newRegistry();

  private newRegistry(): ShardRegistry {
    return new ShardRegistry(async (dir) => {
      let volume = this.volumes.get(dir);
      if (volume === undefined) {
        volume = new MemoryVolume(dir);
        this.volumes.set(dir, volume);
      }
      const store = new CountingStore(await openMemoryShard(volume));
      this.stores.set(dir, store);
      return store;
    });
  }

  dir(shard: number): string {
    return `${this.stateDir}/shard-${shard}`;
  }

  /** A process restart: the open stores and the worker's caches go, the volumes stay. */
  async restart(): Promise<void> {
    await releaseShards(this.stateDir);
    this.registry = this.newRegistry();
    useShardRegistry(this.registry);
  }

  store(shard = 0): CountingStore {
    const s = this.stores.get(this.dir(shard));
    if (s === undefined) throw new Error(`shard ${shard} was never opened`);
    return s;
  }

  volume(shard = 0): MemoryVolume {
    return this.volumes.get(this.dir(shard)) as MemoryVolume;
  }
}

export const CACHE_OFF = 0;
export const CACHE_ON = 256 << 20;
export const CACHES: Array<[string, number]> = [
  ['cache off', CACHE_OFF],
  ['cache on', CACHE_ON],
];

/** The current worker's shards (freshShards replaces them): a live binding for the tests that import it. */
export let h: Shards;
let previous: ShardRegistry;

/** A fresh worker: new directories, a new registry. */
export async function freshShards(cacheBytes = CACHE_ON): Promise<Shards> {
  if (h) await releaseShards(h.stateDir);
  h = new Shards();
  h.cacheBytes = cacheBytes;
  useShardRegistry(h.registry);
  return h;
}

/** Each test of the calling file gets fresh shards, and the worker's registry back after. */
export function useFreshShards(): void {
  beforeEach(async () => {
    previous = useShardRegistry(new ShardRegistry());
    await freshShards();
  });
  afterEach(async () => {
    await releaseShards(h.stateDir);
    useShardRegistry(previous);
  });
}

export interface Query {
  op: StatefulOp;
  schema: Schema;
  layout: StateLayoutMsg;
  outputMode: StateTask['outputMode'];
  hasWatermark: boolean;
}

export interface Batch {
  batchId: number;
  watermarkMs: number;
  /** Rows of each map task (the rows entering the stateful operator). */
  tasks: Row[][];
  /** A join's side of each map task (0 the left, 1 the right; the left when absent). */
  sides?: Array<0 | 1>;
  /** The batch's timestamp: a processor's processing time (its timers and TTL). */
  timestampMs?: number;
}

export interface Outcome {
  rows: Row[];
  state: StateOperatorMetrics;
}

/**
 * Map side of a batch: each task's blocks, grouped by partition as the driver does. A join's map
 * task reads the side `sides` gives it, in that side's schema.
 */
export function shuffle(q: Query, tasks: Row[][], lateThresholdMs: number | null = null, sides: Array<0 | 1> = []): Map<number, ShuffleBlock[]> {
  const byPartition = new Map<number, ShuffleBlock[]>();
  for (const [i, rows] of tasks.entries()) {
    const side = sides[i] ?? 0;
    const schema = q.op.kind === 'streamJoin' ? (side === 0 ? q.op.left : q.op.right).schema : q.schema;
    for (const b of partitionPartials(rows, q.op, schema, q.layout, new Map(), lateThresholdMs, side).blocks) {
      const list = byPartition.get(b.partition);
      if (list) list.push(b);
      else byPartition.set(b.partition, [b]);
    }
  }
  return byPartition;
}

export function stateTask(q: Query, b: Batch, shard: number, byPartition: Map<number, ShuffleBlock[]>, attempt = 0): StateTask {
  const partitions = partitionsIn(contiguousAssignment(q.layout), shard);
  return {
    kind: 'state',
    queryId: 'q',
    runId: 'r',
    batchId: b.batchId,
    ...(b.timestampMs !== undefined && { batchTimestampMs: b.timestampMs }),
    attempt,
    partition: shard,
    operatorId: 0,
    shardDir: h.dir(shard),
    storeOptions: { cacheBytes: 1 << 20, writeBufferBytes: 1 << 20, maxOpenFiles: 10, stateCacheBytes: h.cacheBytes },
    workerBudget: { maxOpenFiles: 1000, maxMemoryBytes: 1 << 30 },
    layout: q.layout,
    partitions,
    blocks: partitions.flatMap((p) => byPartition.get(p) ?? []),
    stateful: q.op,
    stateInputSchema: q.schema,
    outputMode: q.outputMode,
    watermarkMs: b.watermarkMs,
    hasWatermark: q.hasWatermark,
    post: [],
    output: { type: 'collect' },
    pruneUndoBelow: b.batchId,
    expectedMarker: null,
  };
}

/** Runs one shard's state task of batch `b` and returns its rows (sorted) and metrics. */
export async function run(q: Query, b: Batch, shard = 0, attempt = 0, byPartition = shuffle(q, b.tasks, null, b.sides)): Promise<Outcome> {
  const result = await runStateTask(stateTask(q, b, shard, byPartition, attempt), new Map());
  const rows = sortRows(decodeRows(result.rows as Uint8Array));
  expect(result.numOutputRows).toBe(rows.length);
  return { rows, state: result.state };
}

/** The metrics a test pins down (commit time is a clock reading). */
export function counts(s: StateOperatorMetrics): Omit<StateOperatorMetrics, 'commitTimeMs' | 'memoryUsedBytes'> {
  const { commitTimeMs: _t, memoryUsedBytes: _m, ...rest } = s;
  return rest;
}

export const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');

/** Every entry of a volume (meta, data, index, undo) as sorted hex, for byte-exact comparisons. */
export function contents(volume: MemoryVolume): string[] {
  return [...volume.data.entries()].map(([k, v]) => `${hex(k)}=${Buffer.from(v).toString('hex')}`).sort();
}

/** The state held: the keys (decoded with `types`) and the index times. */
export async function stateOf(store: CountingStore, types: KeyType[]): Promise<{ keys: string[]; index: number[] }> {
  const keys = (await store.memory.range(...dataRange())).map(([k]) => JSON.stringify(decodeKey(decodeDataKey(k).key, types))).sort();
  const index = (await store.memory.range(...indexRange())).map(([k]) => decodeIndexKey(k).timeMs).sort((a, b) => a - b);
  return { keys, index };
}

/** A deduplication's state: each key (decoded with `types`) with the expiry its value records (dedupState.ts). */
export async function dedupValues(store: CountingStore, types: KeyType[]): Promise<string[]> {
  return (await store.memory.range(...dataRange()))
    .map(([k, v]) => JSON.stringify([decodeKey(decodeDataKey(k).key, types), decodeDedupValue(v).expiryMs]))
    .sort();
}

// ---- queries ----------------------------------------------------------------------------------

export const S = 1000;
export const col = (name: string): Expr => ({ op: 'col', name });
export const SCHEMA: Schema = [
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'id', type: 'string', nullable: true },
  { name: 'n', type: 'long', nullable: true },
];
export const r = (tS: number, id: string, n = 0): Row => ({ ts: tS * S, id, n });

/** count(*) and sum(n) per 10 s tumbling window and id; the window is the event-time key. */
export const windowed: StatefulOp = {
  kind: 'aggregate',
  keys: [{ op: 'window', expr: col('ts'), sizeMs: 10 * S, slideMs: 10 * S, startMs: 0 }, col('id')],
  keyNames: ['window', 'id'],
  aggs: [
    { fn: 'count', arg: null, name: 'count' },
    { fn: 'sum', arg: col('n'), name: 'sum' },
  ],
  eventTimeKey: 0,
};
export const WINDOWED_KEY: KeyType[] = [WINDOW_TYPE, 'string'];
export const win = (startS: number) => ({ start: startS * S, end: (startS + 10) * S });
export const agg = (startS: number, id: string, count: number, sum: number): Row => ({ window: win(startS), id, count, sum });

export const LAYOUT: StateLayoutMsg = { keyGroups: 16, partitions: 4, shards: 1 };
export const query = (op: StatefulOp, outputMode: Query['outputMode'], over: Partial<Query> = {}): Query => ({
  op,
  schema: SCHEMA,
  layout: LAYOUT,
  outputMode,
  hasWatermark: true,
  ...over,
});

/**
 * Five batches over two map tasks each. Window ends: a0 10, b10 20, a20 30, c0 10, c30 40.
 *   0 (wm 0)   a0 +3 rows, b10 +1, a20 +1
 *   1 (wm 12)  a0 from both tasks and c0 are late (2 keys after merging); b10 +1, c30 new; a0 expires
 *   2 (wm 20)  no data: b10 expires (end 20 <= 20)
 *   3 (wm 20)  b10 from both tasks is late (1 key); a20 +1
 *   4 (wm 30)  no data: a20 expires
 */
export const BATCHES: Batch[] = [
  {
    batchId: 0,
    watermarkMs: 0,
    tasks: [
      [r(1, 'a', 1), r(2, 'a', 2), r(15, 'b', 10)],
      [r(3, 'a', 3), r(25, 'a', 5)],
    ],
  },
  {
    batchId: 1,
    watermarkMs: 12 * S,
    tasks: [
      [r(5, 'a', 100), r(16, 'b', 1)],
      [r(8, 'c', 100), r(31, 'c', 7), r(4, 'a', 100)],
    ],
  },
  { batchId: 2, watermarkMs: 20 * S, tasks: [] },
  { batchId: 3, watermarkMs: 20 * S, tasks: [[r(19, 'b', 100)], [r(18, 'b', 100), r(20, 'a', 1)]] },
  { batchId: 4, watermarkMs: 30 * S, tasks: [] },
];

export const m = (numRowsTotal: number, numRowsUpdated: number, numRowsRemoved: number, numRowsDroppedByWatermark: number) => ({
  numRowsTotal,
  numRowsUpdated,
  numRowsRemoved,
  numRowsDroppedByWatermark,
});

export const reads = (calls: Call[]): Array<Record<string, number>> =>
  calls.flatMap<Record<string, number>>((c) =>
    c.op === 'getMany' ? [{ getMany: c.keys }] : c.op === 'range' ? [{ range: c.returned, prefix: c.prefix }] : [],
  );

/** Keys asked of getMany in `calls`, all of which must be data keys. */
export function dataKeysRead(calls: Call[]): number {
  let n = 0;
  for (const c of calls) {
    if (c.op !== 'getMany') continue;
    expect(c.prefixes.every((p) => p === PREFIX_DATA)).toBe(true);
    n += c.keys;
  }
  return n;
}

// ---- retries and replays ----------------------------------------------------------------------

export type Retry = 'none' | 'retry' | 'restart';

/**
 * Runs `batches` once each, or each batch twice: a task retry in the same worker (attempt 1), or
 * a replay after a restart (the stores and caches released and reopened from their volumes).
 * Returns each batch's outcome (the last attempt's) and the final bytes of every shard.
 */
export async function runAll(q: Query, batches: Batch[], retry: Retry): Promise<{ outcomes: Outcome[]; bytes: string[][]; rollbacks: number }> {
  const outcomes: Outcome[] = [];
  let rollbacks = 0;
  for (const b of batches) {
    const byPartition = shuffle(q, b.tasks, null, b.sides);
    for (let shard = 0; shard < q.layout.shards; shard++) {
      let out = await run(q, b, shard, 0, byPartition);
      if (retry !== 'none') {
        const committed = h.store(shard).marker === b.batchId;
        if (retry === 'restart') await h.restart();
        const before = h.stores.get(h.dir(shard));
        const from = before?.calls.length ?? 0;
        out = await run(q, b, shard, retry === 'retry' ? 1 : 0, byPartition);
        const after = h.store(shard);
        // after a restart the shard was reopened: a new store, whose calls are all this attempt's
        const rb = (after === before ? after.since(from) : after.calls).find((c) => c.op === 'rollback');
        // The second attempt rolled back exactly when the first one had committed.
        expect(rb && rb.op === 'rollback' && rb.rolledBack).toBe(committed);
        if (committed) rollbacks++;
      }
      outcomes.push({ rows: out.rows, state: { ...out.state, commitTimeMs: 0 } });
    }
  }
  const bytes = Array.from({ length: q.layout.shards }, (_, s) => contents(h.volume(s)));
  return { outcomes, bytes, rollbacks };
}

/** Outcomes without memoryUsedBytes, which counts the worker's cache (dropped by a rollback or a restart). */
export const withoutMemory = (os: Outcome[]) => os.map((o) => ({ rows: o.rows, state: counts(o.state) }));

/**
 * Every batch run twice, as a retry in the same worker and as a replay after a restart, gives the
 * rows, metrics and state bytes of one run; and the batches did roll back committed attempts.
 */
export async function expectExactReplay(q: Query, batches: Batch[], cacheBytes: number): Promise<Outcome[]> {
  await freshShards(cacheBytes);
  const once = await runAll(q, batches, 'none');
  await freshShards(cacheBytes);
  const retried = await runAll(q, batches, 'retry');
  await freshShards(cacheBytes);
  const replayed = await runAll(q, batches, 'restart');
  // (memoryUsedBytes counts the worker's cache, which a rollback drops)
  expect(withoutMemory(retried.outcomes)).toEqual(withoutMemory(once.outcomes));
  expect(retried.bytes).toEqual(once.bytes);
  expect(withoutMemory(replayed.outcomes)).toEqual(withoutMemory(once.outcomes));
  expect(replayed.bytes).toEqual(once.bytes);
  expect(retried.rollbacks).toBeGreaterThan(0);
  expect(replayed.rollbacks).toBe(retried.rollbacks);
  return once.outcomes;
}
