/**
 * The reduce side of stateful batches (runStateTask), driven directly with blocks produced by the
 * real map side (partitionPartials) over memory shards (useShardRegistry with a memory opener).
 * Each store is wrapped so a test sees what a batch read (getMany sizes, range results), what it
 * rolled back, and what each commit wrote. Tests that depend on reads run with the worker's
 * decoded-state cache off (a 0-byte budget) and on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  dataRange,
  decodeDataKey,
  decodeDedupValue,
  decodeIndexKey,
  decodeKey,
  indexRange,
  PREFIX_DATA,
  PREFIX_INDEX,
  shardOfPartition,
  contiguousAssignment,
  partitionsIn,
  ShardRegistry,
  type KeyType,
} from '@sluice/state';
import { InstrumentedShardStore, MemoryShardStore, MemoryVolume, openMemoryShard } from '@sluice/state/testing';
import { WINDOW_TYPE } from '../expressions/exprTypes.js';
import { partitionPartials, sortRows } from './mapSideTestKit.js';
import type { ShuffleBlock, StateLayoutMsg, StateOperatorMetrics, StateTask } from '../task/messages.js';
import { decodeRows } from '../task/rowCodec.js';
import { releaseShards, runStateTask, useShardRegistry } from './stateTask.js';
import type { Expr } from '../expressions/types.js';
import type { StatefulOp } from './types.js';
import type { Row, Schema } from '../schema/types.js';

// ---- harness ----------------------------------------------------------------------------------

type Call =
  | { op: 'getMany'; keys: number; prefixes: number[] }
  | { op: 'range'; prefix: number; returned: number }
  | { op: 'rollback'; batchId: number; rolledBack: boolean; markerAfter: number; contentsAfter: string[] };

/** A memory shard that logs its reads and rollbacks (entriesPerCommit comes from InstrumentedShardStore). */
class CountingStore extends InstrumentedShardStore {
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
class Shards {
  readonly stateDir = `/mem/q${++testNo}/state`;
  /** stateCacheBytes of the tasks. */
  cacheBytes = CACHE_ON;
  readonly volumes = new Map<string, MemoryVolume>();
  readonly stores = new Map<string, CountingStore>();
  registry = this.newRegistry();

  private newRegistry(): ShardRegistry {
    return new ShardRegistry(async (dir) => {
      let volume = this.volumes.get(dir);
      if (volume === undefined) this.volumes.set(dir, (volume = new MemoryVolume(dir)));
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

const CACHE_OFF = 0;
const CACHE_ON = 256 << 20;
const CACHES: Array<[string, number]> = [
  ['cache off', CACHE_OFF],
  ['cache on', CACHE_ON],
];

let h: Shards;
let previous: ShardRegistry;

/** A fresh worker: new directories, a new registry. */
async function freshShards(cacheBytes = CACHE_ON): Promise<Shards> {
  if (h) await releaseShards(h.stateDir);
  h = new Shards();
  h.cacheBytes = cacheBytes;
  useShardRegistry(h.registry);
  return h;
}

beforeEach(async () => {
  previous = useShardRegistry(new ShardRegistry());
  await freshShards();
});
afterEach(async () => {
  await releaseShards(h.stateDir);
  useShardRegistry(previous);
});

interface Query {
  op: StatefulOp;
  schema: Schema;
  layout: StateLayoutMsg;
  outputMode: StateTask['outputMode'];
  hasWatermark: boolean;
}

interface Batch {
  batchId: number;
  watermarkMs: number;
  /** Rows of each map task (the rows entering the stateful operator). */
  tasks: Row[][];
}

interface Outcome {
  rows: Row[];
  state: StateOperatorMetrics;
}

/** Map side of a batch: each task's blocks, grouped by partition as the driver does. */
function shuffle(q: Query, tasks: Row[][], lateThresholdMs: number | null = null): Map<number, ShuffleBlock[]> {
  const byPartition = new Map<number, ShuffleBlock[]>();
  for (const rows of tasks) {
    for (const b of partitionPartials(rows, q.op, q.schema, q.layout, new Map(), lateThresholdMs).blocks) {
      const list = byPartition.get(b.partition);
      if (list) list.push(b);
      else byPartition.set(b.partition, [b]);
    }
  }
  return byPartition;
}

function stateTask(q: Query, b: Batch, shard: number, byPartition: Map<number, ShuffleBlock[]>, attempt = 0): StateTask {
  const partitions = partitionsIn(contiguousAssignment(q.layout), shard);
  return {
    kind: 'state',
    queryId: 'q',
    runId: 'r',
    batchId: b.batchId,
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
async function run(q: Query, b: Batch, shard = 0, attempt = 0, byPartition = shuffle(q, b.tasks)): Promise<Outcome> {
  const result = await runStateTask(stateTask(q, b, shard, byPartition, attempt), new Map());
  const rows = sortRows(decodeRows(result.rows as Uint8Array));
  expect(result.numOutputRows).toBe(rows.length);
  return { rows, state: result.state };
}

/** The metrics a test pins down (commit time is a clock reading). */
function counts(s: StateOperatorMetrics): Omit<StateOperatorMetrics, 'commitTimeMs' | 'memoryUsedBytes'> {
  const { commitTimeMs: _t, memoryUsedBytes: _m, ...rest } = s;
  return rest;
}

const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');

/** Every entry of a volume (meta, data, index, undo) as sorted hex, for byte-exact comparisons. */
function contents(volume: MemoryVolume): string[] {
  return [...volume.data.entries()].map(([k, v]) => `${hex(k)}=${Buffer.from(v).toString('hex')}`).sort();
}

/** The state held: the keys (decoded with `types`) and the index times. */
async function stateOf(store: CountingStore, types: KeyType[]): Promise<{ keys: string[]; index: number[] }> {
  const keys = (await store.memory.range(...dataRange())).map(([k]) => JSON.stringify(decodeKey(decodeDataKey(k).key, types))).sort();
  const index = (await store.memory.range(...indexRange())).map(([k]) => decodeIndexKey(k).timeMs).sort((a, b) => a - b);
  return { keys, index };
}

/** A deduplication's state: each key (decoded with `types`) with the expiry its value records (dedupState.ts). */
async function dedupValues(store: CountingStore, types: KeyType[]): Promise<string[]> {
  return (await store.memory.range(...dataRange())).map(([k, v]) => JSON.stringify([decodeKey(decodeDataKey(k).key, types), decodeDedupValue(v).expiryMs])).sort();
}

// ---- queries ----------------------------------------------------------------------------------

const S = 1000;
const col = (name: string): Expr => ({ op: 'col', name });
const SCHEMA: Schema = [
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'id', type: 'string', nullable: true },
  { name: 'n', type: 'long', nullable: true },
];
const r = (tS: number, id: string, n = 0): Row => ({ ts: tS * S, id, n });

/** count(*) and sum(n) per 10 s tumbling window and id; the window is the event-time key. */
const windowed: StatefulOp = {
  kind: 'aggregate',
  keys: [{ op: 'window', expr: col('ts'), sizeMs: 10 * S, slideMs: 10 * S, startMs: 0 }, col('id')],
  keyNames: ['window', 'id'],
  aggs: [
    { fn: 'count', arg: null, name: 'count' },
    { fn: 'sum', arg: col('n'), name: 'sum' },
  ],
  eventTimeKey: 0,
};
const WINDOWED_KEY: KeyType[] = [WINDOW_TYPE, 'string'];
const win = (startS: number) => ({ start: startS * S, end: (startS + 10) * S });
const agg = (startS: number, id: string, count: number, sum: number): Row => ({ window: win(startS), id, count, sum });

const LAYOUT: StateLayoutMsg = { keyGroups: 16, partitions: 4, shards: 1 };
const query = (op: StatefulOp, outputMode: Query['outputMode'], over: Partial<Query> = {}): Query => ({
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
const BATCHES: Batch[] = [
  { batchId: 0, watermarkMs: 0, tasks: [[r(1, 'a', 1), r(2, 'a', 2), r(15, 'b', 10)], [r(3, 'a', 3), r(25, 'a', 5)]] },
  { batchId: 1, watermarkMs: 12 * S, tasks: [[r(5, 'a', 100), r(16, 'b', 1)], [r(8, 'c', 100), r(31, 'c', 7), r(4, 'a', 100)]] },
  { batchId: 2, watermarkMs: 20 * S, tasks: [] },
  { batchId: 3, watermarkMs: 20 * S, tasks: [[r(19, 'b', 100)], [r(18, 'b', 100), r(20, 'a', 1)]] },
  { batchId: 4, watermarkMs: 30 * S, tasks: [] },
];

const m = (numRowsTotal: number, numRowsUpdated: number, numRowsRemoved: number, numRowsDroppedByWatermark: number) => ({
  numRowsTotal,
  numRowsUpdated,
  numRowsRemoved,
  numRowsDroppedByWatermark,
});

// ---- 1. aggregation ---------------------------------------------------------------------------

describe('runStateTask: windowed aggregation', () => {
  it('append: emits a window once, when it expires; late keys are dropped and counted', async () => {
    const q = query(windowed, 'append');
    const expected: Array<[Row[], ReturnType<typeof m>]> = [
      [[], m(3, 3, 0, 0)],
      [[agg(0, 'a', 3, 6)], m(3, 2, 1, 2)],
      [[agg(10, 'b', 2, 11)], m(2, 0, 1, 0)],
      [[], m(2, 1, 0, 1)],
      [[agg(20, 'a', 2, 6)], m(1, 0, 1, 0)],
    ];
    for (const [i, b] of BATCHES.entries()) {
      const out = await run(q, b);
      expect(out.rows, `batch ${b.batchId}`).toEqual(expected[i]![0]);
      expect(counts(out.state), `batch ${b.batchId}`).toEqual(expected[i]![1]);
    }
    // Only c30 is left, with its index entry; every batch changed something, so every batch committed.
    expect(await stateOf(h.store(), WINDOWED_KEY)).toEqual({ keys: [JSON.stringify([win(30), 'c'])], index: [40 * S] });
    expect(h.store().memory.stats.commits).toBe(5);
    expect(h.store().marker).toBe(4);
  });

  it('update: emits the keys each batch changed; expiry removes without emitting', async () => {
    const q = query(windowed, 'update');
    const expected: Array<[Row[], ReturnType<typeof m>]> = [
      [[agg(0, 'a', 3, 6), agg(20, 'a', 1, 5), agg(10, 'b', 1, 10)], m(3, 3, 0, 0)],
      [[agg(10, 'b', 2, 11), agg(30, 'c', 1, 7)], m(3, 2, 1, 2)],
      [[], m(2, 0, 1, 0)],
      [[agg(20, 'a', 2, 6)], m(2, 1, 0, 1)],
      [[], m(1, 0, 1, 0)],
    ];
    for (const [i, b] of BATCHES.entries()) {
      const out = await run(q, b);
      expect(out.rows, `batch ${b.batchId}`).toEqual(sortRows(expected[i]![0]));
      expect(counts(out.state), `batch ${b.batchId}`).toEqual(expected[i]![1]);
    }
  });

  it('complete: emits the whole result every batch, neither dropping late keys nor evicting', async () => {
    const q = query(windowed, 'complete');
    const after1 = [agg(0, 'a', 5, 206), agg(10, 'b', 2, 11), agg(20, 'a', 1, 5), agg(0, 'c', 1, 100), agg(30, 'c', 1, 7)];
    const after3 = [agg(0, 'a', 5, 206), agg(10, 'b', 4, 211), agg(20, 'a', 2, 6), agg(0, 'c', 1, 100), agg(30, 'c', 1, 7)];
    const expected: Array<[Row[], ReturnType<typeof m>]> = [
      [[agg(0, 'a', 3, 6), agg(10, 'b', 1, 10), agg(20, 'a', 1, 5)], m(3, 3, 0, 0)],
      [after1, m(5, 4, 0, 0)],
      [after1, m(5, 0, 0, 0)],
      [after3, m(5, 2, 0, 0)],
      [after3, m(5, 0, 0, 0)],
    ];
    for (const [i, b] of BATCHES.entries()) {
      const out = await run(q, b);
      expect(out.rows, `batch ${b.batchId}`).toEqual(sortRows(expected[i]![0]));
      expect(counts(out.state), `batch ${b.batchId}`).toEqual(expected[i]![1]);
    }
    // The no-data batches changed nothing, so they did not commit: the marker stays sparse.
    expect(h.store().memory.stats.commits).toBe(3);
    expect(h.store().marker).toBe(3);
  });

  it('without a watermark nothing is late and nothing expires, even with a large batch watermark', async () => {
    const q = query(windowed, 'update', { hasWatermark: false });
    await run(q, BATCHES[0]!);
    const out = await run(q, { batchId: 1, watermarkMs: 1e9, tasks: [[r(1, 'a', 1)]] });
    expect(out.rows).toEqual(sortRows([agg(0, 'a', 4, 7)]));
    expect(counts(out.state)).toEqual(m(3, 1, 0, 0));
  });

  it('without a window, a key is late and expires by its watermarked column (<= the watermark)', async () => {
    const op: StatefulOp = {
      kind: 'aggregate',
      keys: [col('ts'), col('id')],
      keyNames: ['ts', 'id'],
      aggs: [{ fn: 'count', arg: null, name: 'count' }],
      eventTimeKey: 0,
    };
    const q = query(op, 'append');
    expect(counts((await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(5, 'a'), r(5, 'a'), r(10, 'b')], [r(11, 'c')]] })).state)).toEqual(
      m(3, 3, 0, 0),
    );
    // ts 10 is late at watermark 10 (dropped); ts 5 and ts 10 expire; ts 11 stays.
    const out = await run(q, { batchId: 1, watermarkMs: 10 * S, tasks: [[r(10, 'b'), r(12, 'd')]] });
    expect(out.rows).toEqual(sortRows([{ ts: 5 * S, id: 'a', count: 2 }, { ts: 10 * S, id: 'b', count: 1 }]));
    expect(counts(out.state)).toEqual(m(2, 1, 2, 1));
    expect(await stateOf(h.store(), ['timestamp', 'string'])).toEqual({
      keys: [JSON.stringify([11 * S, 'c']), JSON.stringify([12 * S, 'd'])],
      index: [11 * S, 12 * S],
    });
  });
});

// ---- 2. eviction cost -------------------------------------------------------------------------

/** What a batch read: keys asked of getMany, entries returned by range (with the key prefix). */
const reads = (calls: Call[]): Array<Record<string, number>> =>
  calls.flatMap<Record<string, number>>((c) =>
    c.op === 'getMany' ? [{ getMany: c.keys }] : c.op === 'range' ? [{ range: c.returned, prefix: c.prefix }] : [],
  );

/** Keys asked of getMany in `calls`, all of which must be data keys. */
function dataKeysRead(calls: Call[]): number {
  let n = 0;
  for (const c of calls) {
    if (c.op !== 'getMany') continue;
    expect(c.prefixes.every((p) => p === PREFIX_DATA)).toBe(true);
    n += c.keys;
  }
  return n;
}

describe('runStateTask: eviction costs what it evicts', () => {
  for (const [cache, cacheBytes] of CACHES) {
    it(`reads the 3 expired index entries and at most their 3 data keys out of 10,003 keys (${cache})`, async () => {
      await freshShards(cacheBytes);
      const q = query(windowed, 'append', { layout: { keyGroups: 256, partitions: 8, shards: 1 } });
      const far = Array.from({ length: 10_000 }, (_, i) => r(1000 + (i % 10), `k${i}`, 1));
      const near = [r(1, 'x', 1), r(2, 'y', 2), r(3, 'z', 3)];
      const seed = await run(q, { batchId: 0, watermarkMs: 0, tasks: [far.slice(0, 5000), [...far.slice(5000), ...near]] });
      expect(counts(seed.state)).toEqual(m(10_003, 10_003, 0, 0));

      const store = h.store();
      const from = store.calls.length;
      const commitsBefore = store.memory.stats.entriesPerCommit.length;
      const out = await run(q, { batchId: 1, watermarkMs: 10 * S, tasks: [] });
      expect(out.rows).toEqual([agg(0, 'x', 1, 1), agg(0, 'y', 1, 2), agg(0, 'z', 1, 3)]);
      expect(counts(out.state)).toEqual(m(10_000, 0, 3, 0));

      const calls = store.since(from);
      expect(calls[0]).toMatchObject({ op: 'rollback', rolledBack: false });
      // One scan: the index up to the watermark, which holds exactly the 3 expired keys.
      expect(calls.filter((c) => c.op === 'range')).toEqual([{ op: 'range', prefix: PREFIX_INDEX, returned: 3 }]);
      // Data reads: only (some of) those 3 keys; without a cache, exactly them.
      const keysRead = dataKeysRead(calls);
      expect(keysRead).toBeLessThanOrEqual(3);
      if (cacheBytes === CACHE_OFF) expect(keysRead).toBe(3);
      // One commit: 3 data and 3 index deletions, undo(1), the marker, and the pruned undo(0).
      expect(store.memory.stats.entriesPerCommit.slice(commitsBefore)).toEqual([3 * 2 + 2 + 1]);
      expect(store.entriesPerCommit.at(-1)).toBe(9);

      // A next batch with nothing expiring reads an empty index range and does not commit.
      const from2 = store.calls.length;
      const idle = await run(q, { batchId: 2, watermarkMs: 10 * S, tasks: [] });
      expect(counts(idle.state)).toEqual(m(10_000, 0, 0, 0));
      expect(reads(store.since(from2)).filter((c) => 'range' in c)).toEqual([{ range: 0, prefix: PREFIX_INDEX }]);
      expect(dataKeysRead(store.since(from2))).toBe(0);
      expect(store.memory.stats.commits).toBe(2);
    });
  }
});

// ---- 3. retries and replays -------------------------------------------------------------------

type Retry = 'none' | 'retry' | 'restart';

/**
 * Runs `batches` once each, or each batch twice: a task retry in the same worker (attempt 1), or
 * a replay after a restart (the stores and caches released and reopened from their volumes).
 * Returns each batch's outcome (the last attempt's) and the final bytes of every shard.
 */
async function runAll(q: Query, batches: Batch[], retry: Retry): Promise<{ outcomes: Outcome[]; bytes: string[][]; rollbacks: number }> {
  const outcomes: Outcome[] = [];
  let rollbacks = 0;
  for (const b of batches) {
    const byPartition = shuffle(q, b.tasks);
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
const withoutMemory = (os: Outcome[]) => os.map((o) => ({ rows: o.rows, state: counts(o.state) }));

const DEDUP_BATCHES: Batch[] = [
  { batchId: 0, watermarkMs: 0, tasks: [[r(5, 'a'), r(7, 'a')], [r(20, 'b'), r(6, 'a')]] },
  { batchId: 1, watermarkMs: 10 * S, tasks: [[r(12, 'a'), r(8, 'c')], [r(30, 'd')]] },
  { batchId: 2, watermarkMs: 15 * S, tasks: [] },
  { batchId: 3, watermarkMs: 15 * S, tasks: [[r(16, 'a'), r(21, 'b')], [r(40, 'd')]] },
];

const retryCases: Array<[string, Query, Batch[]]> = [
  ['aggregation, append', query(windowed, 'append'), BATCHES],
  ['aggregation, update', query(windowed, 'update'), BATCHES],
  ['aggregation, complete', query(windowed, 'complete'), BATCHES],
  ['aggregation, append, 2 shards', query(windowed, 'append', { layout: { keyGroups: 16, partitions: 4, shards: 2 } }), BATCHES],
  ['dropDuplicates(id, ts)', query({ kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: 'ts' }, 'append'), DEDUP_BATCHES],
  [
    'dropDuplicatesWithinWatermark(id)',
    query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append'),
    DEDUP_BATCHES,
  ],
];

describe('runStateTask: a retried or replayed batch is exact', () => {
  for (const [cache, cacheBytes] of CACHES) {
    for (const [name, q, batches] of retryCases) {
      it(`${name} (${cache}): every batch run twice gives the rows, metrics and state bytes of one run`, async () => {
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
      });
    }

    it(`an attempt that failed before or after its commit is retried exactly (${cache})`, async () => {
      await freshShards(cacheBytes);
      const q = query(windowed, 'update');
      const once: Outcome[] = [];
      for (const b of BATCHES) once.push(await run(q, b));
      const bytes = contents(h.volume(0));

      await freshShards(cacheBytes);
      await run(q, BATCHES[0]!); // opens the shard
      const outcomes: Outcome[] = [once[0]!];
      for (const b of BATCHES.slice(1)) {
        for (const when of ['before', 'after'] as const) {
          h.store().failNextCommit = when;
          await expect(run(q, b)).rejects.toThrow(/injected/);
        }
        outcomes.push(await run(q, b, 0, 2));
      }
      expect(withoutMemory(outcomes)).toEqual(withoutMemory(once));
      expect(contents(h.volume(0))).toEqual(bytes);
    });
  }

  it('a new attempt at the committed batch N (marker N) restores N-1 first, then redoes N exactly', async () => {
    const q = query(windowed, 'append');
    await run(q, BATCHES[0]!);
    const first = await run(q, BATCHES[1]!, 0, 0);
    const store = h.store();
    expect(store.marker).toBe(1);
    const afterFirst = contents(store.memory.volume);

    const from = store.calls.length;
    const second = await run(q, BATCHES[1]!, 0, 3);
    const rb = store.since(from)[0];
    expect(rb).toMatchObject({ op: 'rollback', batchId: 1, rolledBack: true, markerAfter: 0 });
    // After the rollback the shard holds batch 0's state: a0, b10, a20, no c30.
    expect(rb?.op === 'rollback' && rb.contentsAfter.filter((e) => e.startsWith('01')).length).toBe(3);
    expect(second.rows).toEqual(first.rows);
    expect(counts(second.state)).toEqual(counts(first.state));
    expect(contents(store.memory.volume)).toEqual(afterFirst);
    expect(store.memory.stats.rollbacks).toBe(1);
  });
});

// ---- 4. sparse markers ------------------------------------------------------------------------

describe('runStateTask: sparse markers', () => {
  it('a shard skipped in batch N, committed in N+1: a retry of N+1 restores N-1 (not N) and nothing older', async () => {
    const layout: StateLayoutMsg = { keyGroups: 16, partitions: 4, shards: 2 };
    const q = query(windowed, 'update', { layout });
    const shardOf = (id: string) => shardOfPartition(partitionPartials([r(1, id)], windowed, SCHEMA, layout).blocks[0]!.partition, layout);
    const ids = Array.from({ length: 50 }, (_, i) => `k${i}`);
    const [s0a, s0b] = ids.filter((id) => shardOf(id) === 0);
    const [s1a, s1b] = ids.filter((id) => shardOf(id) === 1);
    const batch = (batchId: number, rows: Row[]): Batch => ({ batchId, watermarkMs: 0, tasks: [rows] });

    const b0 = batch(0, [r(1, s0a!, 1), r(1, s1a!, 1)]);
    const b1 = batch(1, [r(1, s0b!, 1)]);
    const b2 = batch(2, [r(1, s1a!, 5), r(1, s1b!, 7)]);
    for (const s of [0, 1]) expect((await run(q, b0, s)).rows).toHaveLength(1);
    const shard1After0 = contents(h.volume(1));

    // Batch 1 has nothing for shard 1 (and nothing expires): it does not commit.
    expect((await run(q, b1, 0)).rows).toEqual(sortRows([agg(0, s0b!, 1, 1)]));
    const skipped = await run(q, b1, 1);
    expect(skipped.rows).toEqual(sortRows([]));
    expect(counts(skipped.state)).toEqual(m(1, 0, 0, 0));
    expect(h.store(1).marker).toBe(0);
    expect(h.store(1).memory.stats.commits).toBe(1);
    expect(contents(h.volume(1))).toEqual(shard1After0);

    // Batch 2 commits shard 1 (its undo records prior marker 0) and skips shard 0.
    const first = await run(q, b2, 1);
    expect(first.rows).toEqual(sortRows([agg(0, s1a!, 2, 6), agg(0, s1b!, 1, 7)]));
    expect(counts(first.state)).toEqual(m(2, 2, 0, 0));
    expect(h.store(1).marker).toBe(2);
    expect(await run(q, b2, 0)).toMatchObject({ rows: [] });
    expect(h.store(0).marker).toBe(1);
    const shard1After2 = contents(h.volume(1));

    // A retry of batch 2 on shard 1 rolls back to marker 0 and exactly the state after batch 0.
    const from = h.store(1).calls.length;
    const again = await run(q, b2, 1, 1);
    const rb = h.store(1).since(from)[0];
    expect(rb).toMatchObject({ op: 'rollback', batchId: 2, rolledBack: true, markerAfter: 0 });
    // (undo(0) was pruned by batch 2's commit, so compare everything but undo records)
    const noUndo = (c: string[]) => c.filter((e) => !e.startsWith('03'));
    expect(rb?.op === 'rollback' && noUndo(rb.contentsAfter)).toEqual(noUndo(shard1After0));
    expect(again).toEqual({ ...first, state: { ...first.state, commitTimeMs: again.state.commitTimeMs } });
    expect(contents(h.volume(1))).toEqual(shard1After2);

    // A retry of batch 2 on shard 0 (marker 1) rolls nothing back and commits nothing.
    const from0 = h.store(0).calls.length;
    expect(await run(q, b2, 0, 1)).toMatchObject({ rows: [], state: m(2, 0, 0, 0) });
    expect(h.store(0).since(from0)[0]).toMatchObject({ op: 'rollback', rolledBack: false, markerAfter: 1 });
    expect(h.store(0).memory.stats).toMatchObject({ commits: 2, rollbacks: 0 });
  });
});

// ---- 5. deduplication -------------------------------------------------------------------------

describe('runStateTask: deduplication', () => {
  it('dropDuplicates without an event-time column keeps every key forever', async () => {
    const q = query({ kind: 'dropDuplicates', columns: ['id'], eventTimeColumn: null }, 'append');
    const b0 = await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(1, 'a', 1), r(2, 'a', 2)], [r(3, 'b', 3), r(4, 'a', 4)]] });
    // the first row of a key in task order
    expect(b0.rows).toEqual(sortRows([r(1, 'a', 1), r(3, 'b', 3)]));
    expect(counts(b0.state)).toEqual(m(2, 2, 0, 0));
    const b1 = await run(q, { batchId: 1, watermarkMs: 1e9, tasks: [[r(1, 'a', 9), r(0, 'c', 5)]] });
    expect(b1.rows).toEqual(sortRows([r(0, 'c', 5)]));
    expect(counts(b1.state)).toEqual(m(3, 1, 0, 0));
    // no expiry: no index entries, and no index scan either
    expect(await dedupValues(h.store(), ['string'])).toEqual([JSON.stringify([['a'], null]), JSON.stringify([['b'], null]), JSON.stringify([['c'], null])]);
    expect(await stateOf(h.store(), ['string'])).toMatchObject({ index: [] });
    expect(h.store().calls.filter((c) => c.op === 'range')).toEqual([]);
  });

  it('dropDuplicates with the event-time column: late rows dropped and counted, state expires at <= the watermark', async () => {
    const q = query({ kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: 'ts' }, 'append');
    const b0 = await run(q, { batchId: 0, watermarkMs: 0, tasks: [[r(10, 'a', 1), r(10, 'a', 2)], [r(20, 'b', 3), r(10, 'a', 4)]] });
    expect(b0.rows).toEqual(sortRows([r(10, 'a', 1), r(20, 'b', 3)]));
    expect(counts(b0.state)).toEqual(m(2, 2, 0, 0));
    // (a,10) is late at 15 s, in both tasks; (b,20) is a duplicate; (c,30) is new; (a,10) expires.
    const b1 = await run(q, { batchId: 1, watermarkMs: 15 * S, tasks: [[r(10, 'a', 5), r(30, 'c', 6)], [r(20, 'b', 7), r(10, 'a', 8)]] });
    expect(b1.rows).toEqual(sortRows([r(30, 'c', 6)]));
    // Late rows count per map-side record (Spark counts per row; a task sends a key once).
    expect(counts(b1.state)).toEqual(m(2, 1, 1, 2));
    expect(await stateOf(h.store(), ['string', 'timestamp'])).toMatchObject({ index: [20 * S, 30 * S] });
    // (b,20) expires exactly at watermark 20.
    const b2 = await run(q, { batchId: 2, watermarkMs: 20 * S, tasks: [[r(16, 'a', 8)]] });
    expect(b2.rows).toEqual(sortRows([]));
    expect(counts(b2.state)).toEqual(m(1, 0, 1, 1));
    const b3 = await run(q, { batchId: 3, watermarkMs: 20 * S, tasks: [[r(21, 'a', 9)]] });
    expect(b3.rows).toEqual(sortRows([r(21, 'a', 9)]));
    expect(counts(b3.state)).toEqual(m(2, 1, 0, 0));
  });

  it('dropDuplicatesWithinWatermark: a key is held until first time + delay <= watermark, then passes again', async () => {
    const q = query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append');
    const outcomes: Outcome[] = [];
    for (const b of DEDUP_BATCHES) outcomes.push(await run(q, b));
    // 0: a@5 (expires 15), b@20 (expires 30).
    expect(outcomes[0]!.rows).toEqual(sortRows([r(5, 'a'), r(20, 'b')]));
    expect(counts(outcomes[0]!.state)).toEqual(m(2, 2, 0, 0));
    // 1 (wm 10): a@12 is a duplicate, c@8 is late, d@30 is new (expires 40).
    expect(outcomes[1]!.rows).toEqual(sortRows([r(30, 'd')]));
    expect(counts(outcomes[1]!.state)).toEqual(m(3, 1, 0, 1));
    // 2 (wm 15, no data): a expires (15 <= 15).
    expect(outcomes[2]!.rows).toEqual(sortRows([]));
    expect(counts(outcomes[2]!.state)).toEqual(m(2, 0, 1, 0));
    // 3 (wm 15): a@16 passes again; b and d are still held.
    expect(outcomes[3]!.rows).toEqual(sortRows([r(16, 'a')]));
    expect(counts(outcomes[3]!.state)).toEqual(m(3, 1, 0, 0));
    // the value holds the expiry: first event time + delay
    expect(await dedupValues(h.store(), ['string'])).toEqual([JSON.stringify([['a'], 26 * S]), JSON.stringify([['b'], 30 * S]), JSON.stringify([['d'], 40 * S])]);
    expect(await stateOf(h.store(), ['string'])).toMatchObject({ index: [26 * S, 30 * S, 40 * S] });
  });

  it('dropDuplicatesWithinWatermark: a late row of a key in one task does not hide an on-time row of it in another', async () => {
    // Spark filters late rows before deduplicating, so e@25 is the key's first row.
    const q = query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append');
    const out = await run(q, { batchId: 0, watermarkMs: 10 * S, tasks: [[r(5, 'e', 1)], [r(25, 'e', 2)]] });
    expect(out.rows).toEqual(sortRows([r(25, 'e', 2)]));
    expect(counts(out.state)).toEqual(m(1, 1, 0, 1));
  });

  // Known gap (mapSide.ts, not the reduce side): the map side keeps one row per key per task
  // without knowing the watermark, so a late first row hides an on-time row of the same key in the
  // same task. Spark emits e@25 here. This test flips to passing when the map side is fixed.
  it('dropDuplicatesWithinWatermark: a late row does not hide an on-time row of its key in the same task', async () => {
    const q = query({ kind: 'dropDuplicatesWithinWatermark', columns: ['id'], eventTimeColumn: 'ts', delayMs: 10 * S }, 'append');
    // The driver gives a deduplication's map tasks the batch watermark as their late threshold.
    const tasks = [[r(5, 'e', 1), r(25, 'e', 2)]];
    const out = await run(q, { batchId: 0, watermarkMs: 10 * S, tasks }, 0, 0, shuffle(q, tasks, 10 * S));
    expect(out.rows).toEqual(sortRows([r(25, 'e', 2)]));
  });
});

// ---- 6. a small batch over a large state ------------------------------------------------------

describe('runStateTask: a 1-row batch over 100k keys writes O(1) entries', () => {
  const q = query(windowed, 'update', { layout: { keyGroups: 4096, partitions: 8, shards: 1 } });
  const rows = Array.from({ length: 100_000 }, (_, i) => r(1000, `k${i}`, 1));
  const seedBlocks = shuffle(q, [rows.slice(0, 50_000), rows.slice(50_000)]);

  for (const [cache, cacheBytes] of CACHES) {
    it(`updates one key, then adds one key, each in a handful of entries (${cache})`, async () => {
      await freshShards(cacheBytes);
      const seed = await run(q, { batchId: 0, watermarkMs: 0, tasks: [] }, 0, 0, seedBlocks);
      expect(counts(seed.state)).toEqual(m(100_000, 100_000, 0, 0));
      const store = h.store();
      // data + index per key, undo(0), marker
      expect(store.memory.stats.entriesPerCommit).toEqual([200_002]);

      let from = store.calls.length;
      const existing = await run(q, { batchId: 1, watermarkMs: 500 * S, tasks: [[r(1001, 'k7', 5)]] });
      expect(existing.rows).toEqual([agg(1000, 'k7', 2, 6)]);
      expect(counts(existing.state)).toEqual(m(100_000, 1, 0, 0));
      // the data entry, undo(1), the marker, the pruned undo(0)
      expect(store.memory.stats.entriesPerCommit.at(-1)).toBe(4);
      expect(dataKeysRead(store.since(from))).toBeLessThanOrEqual(1);
      expect(reads(store.since(from)).filter((c) => 'range' in c)).toEqual([{ range: 0, prefix: PREFIX_INDEX }]);

      from = store.calls.length;
      const added = await run(q, { batchId: 2, watermarkMs: 500 * S, tasks: [[r(1001, 'new', 5)]] });
      expect(added.rows).toEqual([agg(1000, 'new', 1, 5)]);
      expect(counts(added.state)).toEqual(m(100_001, 1, 0, 0));
      // data + index entry, undo(2), the marker, the pruned undo(1)
      expect(store.memory.stats.entriesPerCommit.at(-1)).toBe(5);
      expect(dataKeysRead(store.since(from))).toBe(1);
      expect(reads(store.since(from)).filter((c) => 'range' in c)).toEqual([{ range: 0, prefix: PREFIX_INDEX }]);
      expect(store.numRows).toBe(100_001);
    }, 60_000);
  }
});
