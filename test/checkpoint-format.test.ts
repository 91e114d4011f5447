/**
 * The checkpoint's format: batch kinds in the offset log, the state layout in its own file under
 * `state/0/`, and what a start does with a checkpoint of an earlier Sluice (the fixtures in
 * test/fixtures/legacy-checkpoints, made by its make.mjs: offsets entries without a batch kind,
 * the state layout pinned in `metadata`), with one whose commit log fell behind, with control
 * batches, and with a layout file that says which shard holds each partition.
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dataRange, decodeDataKey, openLevelShard, partitionOfKeyGroup } from '@sluice/state';
// @ts-expect-error: a plain JavaScript fixture module without types
import { CONF, startQuery } from './fixtures/legacy-checkpoints/query.mjs';
import { readDoc, readSinkJson, removeTempDirs, tempDir, withSession } from './helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/legacy-checkpoints/', import.meta.url));
const MIN = 60_000;

afterAll(removeTempDirs);

type Kind = 'stateless' | 'stateful';

/** A fresh copy of a fixture, so the test never writes into the repository. */
function copyOf(kind: Kind): string {
  const root = tempDir(`sluice-legacy-${kind}-`);
  cpSync(join(FIXTURES, kind), root, { recursive: true });
  return root;
}

function writeDoc(path: string, doc: unknown): void {
  writeFileSync(path, `v1\n${JSON.stringify(doc)}\n`);
}

/** Runs the fixture's query on `root` to its end (AvailableNow) and returns the batch ids it ran. */
function resume(kind: Kind, root: string): Promise<number[]> {
  return withSession(CONF, async (session) => {
    const query = await startQuery(session, kind, root);
    await query.awaitTermination();
    return query.recentProgress.map((p: { batchId: number }) => p.batchId);
  });
}

const values = (root: string) =>
  readSinkJson(join(root, 'out'))
    .map((r) => r.value as number)
    .sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, v) => v);

describe('a checkpoint of an earlier Sluice', () => {
  it('stateless: the unfinished batch 3 replays once, then batch 4 runs; every value once, new entries carry a kind', async () => {
    const root = copyOf('stateless');
    expect(readDoc(join(root, 'checkpoint', 'offsets', '3')).kind).toBeUndefined();
    expect(await resume('stateless', root)).toEqual([3, 4]);
    expect(values(root)).toEqual(range(30));
    expect(readDoc(join(root, 'checkpoint', 'offsets', '4')).kind).toBe('data');
  });

  it('stateful: the state written then is read back; every closed window is emitted once with its count', async () => {
    const root = copyOf('stateful');
    expect(readSinkJson(join(root, 'out'))).toHaveLength(3); // the window of minute 0, emitted before the kill
    const batches = await resume('stateful', root);
    expect(batches[0]).toBe(4); // the unfinished batch replays first
    // Every batch holds 6 rows of one minute, 2 per id, so each closed window counts 2 per id.
    const last = batches.at(-1) as number;
    const watermark = readDoc(join(root, 'checkpoint', 'commits', String(last))).nextBatchWatermarkMs as number;
    const closedMinutes = Math.floor(watermark / MIN);
    expect(closedMinutes).toBeGreaterThanOrEqual(3);
    const expected = [];
    for (let m = 0; m < closedMinutes; m++) {
      for (const id of [0, 1, 2]) {
        expected.push({ window: { start: new Date(m * MIN).toISOString(), end: new Date((m + 1) * MIN).toISOString() }, id, count: 2 });
      }
    }
    const key = (r: unknown) => JSON.stringify(r);
    expect(readSinkJson(join(root, 'out')).map(key).sort()).toEqual(expected.map(key).sort());
  });

  it('stateful: the layout pinned in metadata moves into state/0/layout, and metadata keeps only what never changes', async () => {
    const root = copyOf('stateful');
    const before = readDoc(join(root, 'checkpoint', 'metadata'));
    expect(before.stateLayout).toEqual({ keyGroups: 4096, partitions: 4, shards: 2 });
    await resume('stateful', root);
    const meta = readDoc(join(root, 'checkpoint', 'metadata'));
    expect(meta).toEqual({ id: before.id, createdAtMs: before.createdAtMs, numSources: 1, keyHash: 'murmur3-32', keyGroups: 4096 });
    expect(readDoc(join(root, 'checkpoint', 'state', '0', 'layout'))).toEqual({
      keyGroups: 4096,
      partitions: 4,
      shards: 2,
      shardOfPartition: [0, 0, 1, 1],
      // The operator's name, for tools that move its state offline (a join's values hold several rows).
      operator: 'stateStoreSave',
    });
  });
});

describe('the state layout file', () => {
  it('is written when a stateful checkpoint is created, with the table of shards', async () => {
    const root = tempDir('sluice-layout-');
    await resume('stateful', root);
    expect(readDoc(join(root, 'checkpoint', 'state', '0', 'layout'))).toEqual({
      keyGroups: 4096,
      partitions: 4,
      shards: 2,
      shardOfPartition: [0, 0, 1, 1],
      // The operator's name, for tools that move its state offline (a join's values hold several rows).
      operator: 'stateStoreSave',
    });
    expect(readDoc(join(root, 'checkpoint', 'metadata'))).not.toHaveProperty('stateLayout');
  });

  it('decides which shard holds each partition: the state stage follows its table, not a formula', async () => {
    const root = tempDir('sluice-layout-table-');
    // An interleaved table, as a repartition may leave it, in place before the first batch.
    const layoutPath = join(root, 'checkpoint', 'state', '0', 'layout');
    mkdirSync(dirname(layoutPath), { recursive: true });
    writeDoc(layoutPath, { keyGroups: 4096, partitions: 4, shards: 2, shardOfPartition: [1, 0, 1, 0] });
    for (let run = 0; run < 4; run++) await resume('stateful', root);
    const layout = { keyGroups: 4096, partitions: 4, shards: 2 };
    for (const [shard, expected] of [
      [0, [1, 3]],
      [1, [0, 2]],
    ] as const) {
      const store = await openLevelShard(join(root, 'checkpoint', 'state', '0', `shard-${shard}`), {
        cacheBytes: 1 << 20,
        writeBufferBytes: 1 << 20,
        maxOpenFiles: 100,
      });
      try {
        const [gte, lt] = dataRange();
        const partitions = new Set((await store.range(gte, lt)).map(([k]) => partitionOfKeyGroup(decodeDataKey(k).kg, layout)));
        expect(partitions.size).toBeGreaterThan(0);
        expect([...partitions].every((p) => (expected as readonly number[]).includes(p))).toBe(true);
      } finally {
        await store.close();
      }
    }
    // Windows of minutes 0 and 1 have closed, each counted 2 per id.
    const rows = readSinkJson(join(root, 'out')).map((r) => `${(r.window as { start: string }).start} ${String(r.id)} ${String(r.count)}`);
    expect(rows.sort()).toEqual([0, 1].flatMap((m) => [0, 1, 2].map((id) => `${new Date(m * MIN).toISOString()} ${id} 2`)).sort());
  });

  it('missing from a checkpoint that has run batches is STATE_STORE_CORRUPT, naming it', async () => {
    const root = tempDir('sluice-layout-missing-');
    await resume('stateful', root);
    const layoutPath = join(root, 'checkpoint', 'state', '0', 'layout');
    rmSync(layoutPath);
    await withSession(CONF, async (session) => {
      await expect(startQuery(session, 'stateful', root)).rejects.toMatchObject({ code: 'STATE_STORE_CORRUPT', file: layoutPath });
    });
  });
});

describe('the offset and commit logs', () => {
  it('a commit log more than one batch behind the offset log is CHECKPOINT_CORRUPT at start', async () => {
    const root = copyOf('stateless');
    rmSync(join(root, 'checkpoint', 'commits', '2'));
    await withSession(CONF, async (session) => {
      await expect(startQuery(session, 'stateless', root)).rejects.toMatchObject({
        code: 'CHECKPOINT_CORRUPT',
        file: join(root, 'checkpoint', 'offsets'),
        message: expect.stringContaining('2 batches behind'),
      });
    });
    expect(values(root)).toEqual(range(24)); // committed output untouched
  });

  it('a committed control batch is passed over: the next data batch takes the id after it', async () => {
    const root = copyOf('stateless');
    await resume('stateless', root); // batches 3 and 4
    const last = readDoc(join(root, 'checkpoint', 'offsets', '4'));
    writeDoc(join(root, 'checkpoint', 'offsets', '5'), { ...last, batchId: 5, kind: 'control', control: { type: 'REPARTITION' } });
    writeDoc(join(root, 'checkpoint', 'commits', '5'), readDoc(join(root, 'checkpoint', 'commits', '4')));
    // A control batch writes no rows, but its empty manifest keeps the sink's manifests one per batch.
    writeDoc(join(root, 'out', '_sluice_metadata', '5'), { files: [] });
    expect(await resume('stateless', root)).toEqual([6]);
    expect(values(root)).toEqual(range(36));
  });

  it('an unfinished control batch that this version cannot finish is UNRESUMABLE_CONTROL_BATCH at start', async () => {
    const root = copyOf('stateless');
    await resume('stateless', root);
    const last = readDoc(join(root, 'checkpoint', 'offsets', '4'));
    const entry = join(root, 'checkpoint', 'offsets', '5');
    writeDoc(entry, { ...last, batchId: 5, kind: 'control', control: { type: 'REPARTITION', phase: 'copy' } });
    await withSession(CONF, async (session) => {
      await expect(startQuery(session, 'stateless', root)).rejects.toMatchObject({ code: 'UNRESUMABLE_CONTROL_BATCH', file: entry });
    });
  });

  it('an entry of an unknown kind is CHECKPOINT_CORRUPT, naming it', async () => {
    const root = copyOf('stateless');
    const entry = join(root, 'checkpoint', 'offsets', '3');
    writeDoc(entry, { ...readDoc(entry), kind: 'mystery' });
    await withSession(CONF, async (session) => {
      await expect(startQuery(session, 'stateless', root)).rejects.toMatchObject({ code: 'CHECKPOINT_CORRUPT', file: entry });
    });
  });
});

describe('checkpoints of Sluice 25fed0b (test/fixtures/legacy-checkpoints/25fed0b)', () => {
  const ROOT = fileURLToPath(new URL('./fixtures/legacy-checkpoints/25fed0b/', import.meta.url));
  type Kind25 = 'repartitioned' | 'repartition-unfinished' | 'shuffle' | 'union' | 'join';

  async function resume25(kind: Kind25): Promise<{ root: string; batches: number[]; rows: Array<Record<string, unknown>> }> {
    const root = tempDir(`sluice-25fed0b-${kind}-`);
    cpSync(join(ROOT, kind), root, { recursive: true });
    const { confOf, startQuery: start25 } = (await import(join(ROOT, 'query.mjs'))) as {
      confOf(kind: Kind25): Record<string, unknown>;
      startQuery(session: unknown, kind: Kind25, root: string): Promise<{ awaitTermination(): Promise<void>; recentProgress: Array<{ batchId: number }> }>;
    };
    const batches = await withSession(confOf(kind), async (session) => {
      const query = await start25(session, kind, root);
      await query.awaitTermination();
      return query.recentProgress.map((p) => p.batchId);
    });
    return { root, batches, rows: readSinkJson(join(root, 'out')) };
  }

  /** Rows the rate streams gave up to the last committed batch: its offsets entry's end. */
  function rowsRead(root: string, batches: number[], input = 0): number {
    const entry = readDoc(join(root, 'checkpoint', 'offsets', String(batches.at(-1))));
    return ((entry.offsets as Array<{ offset: number }>)[input] as { offset: number }).offset;
  }

  function closedMinutes(root: string, batches: number[]): number {
    return Math.floor((readDoc(join(root, 'checkpoint', 'commits', String(batches.at(-1)))).nextBatchWatermarkMs as number) / MIN);
  }

  const windowOf = (m: number) => ({ start: new Date(m * MIN).toISOString(), end: new Date((m + 1) * MIN).toISOString() });
  const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();

  for (const kind of ['repartitioned', 'repartition-unfinished'] as const) {
    it(`${kind}: resumes on 3 partitions in 1 shard; every closed window once, counted 2 per id`, async () => {
      const { root, batches, rows } = await resume25(kind);
      // The unfinished batch (data, or the control batch) runs again first.
      expect(batches[0]).toBe(kind === 'repartitioned' ? 5 : 3);
      expect(readDoc(join(root, 'checkpoint', 'state', '0', 'layout'))).toMatchObject({ partitions: 3, shards: 1 });
      const closed = closedMinutes(root, batches);
      expect(closed).toBeGreaterThanOrEqual(kind === 'repartitioned' ? 3 : 1);
      const expected = [];
      for (let m = 0; m < closed; m++) for (const id of [0, 1, 2]) expected.push({ window: windowOf(m), id, count: 2 });
      expect(sorted(rows)).toEqual(sorted(expected));
    });
  }

  it('shuffle: the unfinished batch replays into its recorded partitions; every value once', async () => {
    const { root, batches, rows } = await resume25('shuffle');
    expect(batches[0]).toBe(3);
    const n = rowsRead(root, batches);
    expect(n).toBeGreaterThanOrEqual(24);
    expect(sorted(rows)).toEqual(sorted(range(n).map((value) => ({ value, id: value % 3 }))));
  });

  it('union: each input resumes from its own offsets; every closed window once, counted 12 (6 rows of each input)', async () => {
    const { root, batches, rows } = await resume25('union');
    expect(batches[0]).toBe(4);
    expect(rowsRead(root, batches, 1)).toBe(rowsRead(root, batches, 0));
    const closed = closedMinutes(root, batches);
    expect(closed).toBeGreaterThanOrEqual(3);
    expect(sorted(rows)).toEqual(sorted(range(closed).map((m) => ({ window: windowOf(m), count: 12 }))));
  });

  it('join: the static side is shuffled again by the join key; every matching value once, with its name', async () => {
    const { root, batches, rows } = await resume25('join');
    expect(batches[0]).toBe(3);
    const n = rowsRead(root, batches);
    expect(n).toBeGreaterThanOrEqual(24);
    const expected = range(n)
      .filter((v) => v % 4 !== 3)
      .map((value) => ({ id: value % 4, value, name: `n${value % 4}` }));
    expect(sorted(rows)).toEqual(sorted(expected));
  });
});
