/**
 * Moving key groups between shards, for a repartition (the plan is in repartition.ts). Works on
 * any ShardStore, with no task running on the shards.
 *
 * A key group's data entries are one contiguous range ([0x01][kg]...). Its eviction index entries
 * are not (the index is ordered by time first): when the operator can tell a row's index time from
 * its data (IndexTimeOf), the copy writes each row's index entry beside it; otherwise they are
 * found by one scan of the index, filtered by key group. Both the copy and the clean-up are
 * idempotent: a copy first clears the target range, and clearing what is already gone deletes
 * nothing, so a crash at any point is mended by doing the step again. Reading a chunk overlaps
 * writing the one before it.
 */
import { fault } from './faults.js';
import { decodeDataKey, indexKey, indexRange, keyGroupsDataRange } from './layout.js';
import type { ShardStore } from './ShardStore.js';

/**
 * The time of a state row's eviction index entry, from its data key and value, as the operator
 * that wrote it knows it (null: the row has no index entry); undefined: not known, and the copy
 * scans the index instead.
 */
export type IndexTimeOf = (dataKey: Uint8Array, value: Uint8Array) => number | null | undefined;

/**
 * The state rows one stored value holds, when it may hold several (a stream join keeps a key's rows
 * in one value): the shards' row counts follow the moved values' rows. Without it, one each.
 */
export type RowsIn = (value: Uint8Array) => number;

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

/** Reads of [gte, lt) CHUNK at a time, each resuming after the last key of the one before. */
async function* inChunks<T>(read: (from: Uint8Array, limit: number) => Promise<T[]>, keyOf: (item: T) => Uint8Array, gte: Uint8Array): AsyncGenerator<T[]> {
  let from = gte;
  for (;;) {
    const batch = await read(from, CHUNK);
    if (batch.length === 0) return;
    yield batch;
    if (batch.length < CHUNK) return;
    from = after(keyOf(batch[batch.length - 1] as T));
  }
}

/** Entries of [gte, lt), CHUNK at a time, so that a large range is never held whole. */
export function rangeInChunks(store: ShardStore, gte: Uint8Array, lt: Uint8Array): AsyncGenerator<Array<[Uint8Array, Uint8Array]>> {
  return inChunks(
    (from, limit) => store.range(from, lt, limit),
    (e) => e[0],
    gte,
  );
}

/** The keys of [gte, lt), CHUNK at a time (no values read). */
function keysInChunks(store: ShardStore, gte: Uint8Array, lt: Uint8Array): AsyncGenerator<Uint8Array[]> {
  return inChunks(
    (from, limit) => store.rangeKeys(from, lt, limit),
    (k) => k,
    gte,
  );
}

/** `write`s each chunk as it comes, the read of the next one overlapping the write of this one. */
async function pipelined<T>(chunks: AsyncIterable<T>, write: (chunk: T) => Promise<void>): Promise<void> {
  let writing: Promise<void> | undefined;
  try {
    for await (const chunk of chunks) {
      await writing;
      writing = write(chunk);
    }
  } finally {
    await writing;
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

/** What a copy read of its source: the data and index keys of the ranges it copied, and the rows of each data key. */
export interface KnownKeys {
  data: readonly Uint8Array[];
  /** With a RowsIn: the rows `data[i]`'s value holds (else one each). */
  rows?: readonly number[];
  index: readonly Uint8Array[];
}

/**
 * Deletes the data and index entries of the key groups in `ranges`, and returns the rows deleted.
 * A range without data is passed over without scanning the index (index entries of keys that
 * have no data are harmless: eviction deletes them as it meets them). `point` is the fault point
 * reached after each chunk. `known`: the keys the copy out of these ranges read (nothing wrote to
 * the shard since), so that nothing is scanned again.
 */
export async function clearKeyGroups(store: ShardStore, ranges: readonly KeyGroupRange[], point?: string, known?: KnownKeys, rowsIn?: RowsIn): Promise<number> {
  if (known === undefined && !(await hasData(store, ranges))) return 0;
  // The index first: data then never lacks the index entries that let eviction find it.
  const index = known?.index ?? (await indexKeysOf(store, ranges));
  for (let i = 0; i < index.length; i += CHUNK) {
    await store.applyMove(
      index.slice(i, i + CHUNK).map((key) => ({ type: 'del' as const, key })),
      0,
    );
    if (point) fault(point);
  }
  let rows = 0;
  const deleteRows = async (keys: readonly Uint8Array[], n = keys.length): Promise<void> => {
    await store.applyMove(
      keys.map((key) => ({ type: 'del' as const, key })),
      -n,
    );
    rows += n;
    if (point) fault(point);
  };
  if (known !== undefined) {
    for (let i = 0; i < known.data.length; i += CHUNK) {
      const counts = known.rows?.slice(i, i + CHUNK);
      await deleteRows(
        known.data.slice(i, i + CHUNK),
        counts?.reduce((a, b) => a + b, 0),
      );
    }
    return rows;
  }
  for (const [a, b] of ranges) {
    const [gte, lt] = keyGroupsDataRange(a, b);
    if (rowsIn === undefined) await pipelined(keysInChunks(store, gte, lt), (keys) => deleteRows(keys));
    else
      await pipelined(rangeInChunks(store, gte, lt), (batch) =>
        deleteRows(
          batch.map(([k]) => k),
          batch.reduce((n, [, v]) => n + rowsIn(v), 0),
        ),
      );
  }
  return rows;
}

export interface CopyResult {
  rows: number;
  bytes: number;
  /** The source's keys of every range copied, for its clean-up (clearKeyGroups). */
  sourceKeys: KnownKeys;
}

/** A shard that receives key groups in a copy, and the ranges it receives. */
export interface CopyTarget {
  to: ShardStore;
  ranges: readonly KeyGroupRange[];
}

/**
 * Copies key groups out of shard `from`, each target's ranges into its shard, after clearing them
 * there: data entries (the rows) and their eviction index entries, written beside each row when
 * `indexTimeOf` knows its time, else found by one scan of the source's index for all targets.
 * `onChunk` is told of each chunk written, with the rows it held (0 for a chunk of index entries).
 */
export async function copyKeyGroups(
  from: ShardStore,
  targets: readonly CopyTarget[],
  onChunk?: (rows: number) => void,
  indexTimeOf?: IndexTimeOf,
  rowsIn?: RowsIn,
): Promise<CopyResult> {
  for (const { to, ranges } of targets) await clearKeyGroups(to, ranges, 'repartition-mid-copy', undefined, rowsIn);
  const all = targets.flatMap((t) => t.ranges);
  if (!(await hasData(from, all))) return { rows: 0, bytes: 0, sourceKeys: { data: [], index: [] } };
  let rows = 0;
  let bytes = 0;
  const dataKeys: Uint8Array[] = [];
  const dataRows: number[] | undefined = rowsIn ? [] : undefined;
  // The index keys of the rows copied, while every row's time is known.
  let derived: Uint8Array[] | undefined = indexTimeOf ? [] : undefined;
  for (const { to, ranges } of targets) {
    for (const [a, b] of ranges) {
      const [gte, lt] = keyGroupsDataRange(a, b);
      await pipelined(rangeInChunks(from, gte, lt), async (batch) => {
        const ops: Array<{ type: 'put'; key: Uint8Array; value: Uint8Array }> = batch.map(([key, value]) => ({ type: 'put' as const, key, value }));
        if (derived !== undefined) {
          for (const [key, value] of batch) {
            const t = (indexTimeOf as IndexTimeOf)(key, value);
            if (t === undefined) {
              derived = undefined;
              break;
            }
            if (t === null) continue;
            const { kg, key: keyBytes } = decodeDataKey(key);
            const ik = indexKey(t, kg, keyBytes);
            derived.push(ik);
            ops.push({ type: 'put', key: ik, value: EMPTY });
          }
        }
        const counts = rowsIn && batch.map(([, value]) => rowsIn(value));
        const n = counts ? counts.reduce((a, b) => a + b, 0) : batch.length;
        await to.applyMove(ops, n);
        for (const [key] of batch) dataKeys.push(key);
        if (counts) dataRows?.push(...counts);
        rows += n;
        for (const op of ops) bytes += op.key.length + op.value.length;
        fault('repartition-mid-copy');
        onChunk?.(n);
      });
    }
  }
  const data = { data: dataKeys, ...(dataRows && { rows: dataRows }) };
  if (derived !== undefined) return { rows, bytes, sourceKeys: { ...data, index: derived } };
  // Some row's time was not known: every target gets the index entries the scan finds (putting
  // again one already written beside its row is harmless).
  const index = await indexKeysOf(from, all);
  for (const { to, ranges } of targets) {
    const mine = targets.length === 1 ? index : index.filter((k) => inRanges(indexKeyGroup(k), ranges));
    for (let i = 0; i < mine.length; i += CHUNK) {
      const part = mine.slice(i, i + CHUNK);
      await to.applyMove(
        part.map((key) => ({ type: 'put' as const, key, value: EMPTY })),
        0,
      );
      for (const k of part) bytes += k.length;
      fault('repartition-mid-copy');
      onChunk?.(0);
    }
  }
  return { rows, bytes, sourceKeys: { ...data, index } };
}
