/**
 * Moving key groups between shards, for a repartition (the plan is in repartition.ts). Works on
 * any ShardStore, with no task running on the shards.
 *
 * A key group's data entries are one contiguous range ([0x01][kg]...). Its eviction index entries
 * are not (the index is ordered by time first), so they are found by one scan of the index,
 * filtered by key group. Both the copy and the clean-up are idempotent: a copy first clears the
 * target range, and clearing what is already gone deletes nothing, so a crash at any point is
 * mended by doing the step again.
 */
import { fault } from './faults.js';
import { indexRange, keyGroupsDataRange } from './layout.js';
import type { ShardStore } from './ShardStore.js';

/** Key groups [start, end). */
export type KeyGroupRange = readonly [number, number];

const CHUNK = 10_000;
const EMPTY = new Uint8Array(0);

/** The smallest key after `k`. */
function after(k: Uint8Array): Uint8Array {
  const out = new Uint8Array(k.length + 1);
  out.set(k);
  return out;
}

/** Entries of [gte, lt), CHUNK at a time, so that a large range is never held whole. */
export async function* rangeInChunks(store: ShardStore, gte: Uint8Array, lt: Uint8Array): AsyncGenerator<Array<[Uint8Array, Uint8Array]>> {
  let from = gte;
  for (;;) {
    const batch = await store.range(from, lt, CHUNK);
    if (batch.length === 0) return;
    yield batch;
    if (batch.length < CHUNK) return;
    from = after((batch[batch.length - 1] as [Uint8Array, Uint8Array])[0]);
  }
}

/** The key group of an index key, [0x02][time: 8 bytes][kg u16 BE][key] (layout.ts), read in place. */
function indexKeyGroup(k: Uint8Array): number {
  return ((k[9] as number) << 8) | (k[10] as number);
}

function inRanges(kg: number, ranges: readonly KeyGroupRange[]): boolean {
  for (const [a, b] of ranges) if (kg >= a && kg < b) return true;
  return false;
}

async function hasData(store: ShardStore, ranges: readonly KeyGroupRange[]): Promise<boolean> {
  for (const [a, b] of ranges) {
    const [gte, lt] = keyGroupsDataRange(a, b);
    if ((await store.range(gte, lt, 1)).length > 0) return true;
  }
  return false;
}

/**
 * The eviction index keys of the key groups in `ranges`: one scan of the shard's index. They are
 * held in memory (one short key per row of the ranges), so that the copy and the clean-up of a
 * repartition share the scan.
 */
export async function indexKeysOf(store: ShardStore, ranges: readonly KeyGroupRange[]): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  const [gte, lt] = indexRange();
  for await (const batch of rangeInChunks(store, gte, lt)) {
    for (const [k] of batch) if (inRanges(indexKeyGroup(k), ranges)) out.push(k);
  }
  return out;
}

/**
 * Deletes the data and index entries of the key groups in `ranges`, and returns the rows deleted.
 * A range without data is passed over without scanning the index (index entries of keys that
 * have no data are harmless: eviction deletes them as it meets them). `point` is the fault point
 * reached after each chunk.
 */
export async function clearKeyGroups(
  store: ShardStore,
  ranges: readonly KeyGroupRange[],
  point?: string,
  knownIndexKeys?: readonly Uint8Array[],
): Promise<number> {
  if (!(await hasData(store, ranges))) return 0;
  // The index first: data then never lacks the index entries that let eviction find it. The
  // copy that just read these ranges may pass the index keys it found, sparing a second scan.
  const index = knownIndexKeys ?? (await indexKeysOf(store, ranges));
  for (let i = 0; i < index.length; i += CHUNK) {
    await store.applyMove(index.slice(i, i + CHUNK).map((key) => ({ type: 'del' as const, key })), 0);
    if (point) fault(point);
  }
  let rows = 0;
  for (const [a, b] of ranges) {
    const [gte, lt] = keyGroupsDataRange(a, b);
    for await (const batch of rangeInChunks(store, gte, lt)) {
      await store.applyMove(batch.map(([key]) => ({ type: 'del' as const, key })), -batch.length);
      rows += batch.length;
      if (point) fault(point);
    }
  }
  return rows;
}

export interface CopyResult {
  rows: number;
  bytes: number;
  /** The source's index keys of every range copied, for its clean-up (clearKeyGroups). */
  sourceIndexKeys: Uint8Array[];
}

/** A shard that receives key groups in a copy, and the ranges it receives. */
export interface CopyTarget {
  to: ShardStore;
  ranges: readonly KeyGroupRange[];
}

/**
 * Copies key groups out of shard `from`, each target's ranges into its shard, after clearing them
 * there: data entries (the rows) and their eviction index entries, found by one scan of the
 * source's index for all targets. `onChunk` is told of each chunk written, with the rows it held
 * (0 for a chunk of index entries).
 */
export async function copyKeyGroups(from: ShardStore, targets: readonly CopyTarget[], onChunk?: (rows: number) => void): Promise<CopyResult> {
  for (const { to, ranges } of targets) await clearKeyGroups(to, ranges, 'repartition-mid-copy');
  const all = targets.flatMap((t) => t.ranges);
  if (!(await hasData(from, all))) return { rows: 0, bytes: 0, sourceIndexKeys: [] };
  let rows = 0;
  let bytes = 0;
  for (const { to, ranges } of targets) {
    for (const [a, b] of ranges) {
      const [gte, lt] = keyGroupsDataRange(a, b);
      for await (const batch of rangeInChunks(from, gte, lt)) {
        await to.applyMove(batch.map(([key, value]) => ({ type: 'put' as const, key, value })), batch.length);
        rows += batch.length;
        for (const [k, v] of batch) bytes += k.length + v.length;
        fault('repartition-mid-copy');
        onChunk?.(batch.length);
      }
    }
  }
  const index = await indexKeysOf(from, all);
  for (const { to, ranges } of targets) {
    const mine = targets.length === 1 ? index : index.filter((k) => inRanges(indexKeyGroup(k), ranges));
    for (let i = 0; i < mine.length; i += CHUNK) {
      const part = mine.slice(i, i + CHUNK);
      await to.applyMove(part.map((key) => ({ type: 'put' as const, key, value: EMPTY })), 0);
      for (const k of part) bytes += k.length;
      fault('repartition-mid-copy');
      onChunk?.(0);
    }
  }
  return { rows, bytes, sourceIndexKeys: index };
}
