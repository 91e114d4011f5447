/**
 * How state keys map to key groups, partitions and shards, and how they are laid out as bytes in a
 * shard (pure functions).
 *
 * A key maps to one of `keyGroups` key groups through murmur3-32 (seed 0) of its canonical
 * encoding (keyEncoding.ts). Partition p owns the contiguous key-group range
 * [floor(p*G/N), floor((p+1)*G/N)), so a repartition moves whole key-group ranges; shard s holds
 * the contiguous partitions [floor(s*N/S), floor((s+1)*N/S)).
 *
 * Bytes in a shard, by first byte (so each kind is one contiguous LevelDB range):
 *   0x00                                      meta: marker and row count (the store's own)
 *   0x01 [kg u16 BE] [key]                    data: a key group is one range
 *   0x02 [time i64 BE, sign flipped] [kg u16 BE] [key]
 *                                             eviction index: ordered by (time, key group, key),
 *                                             so eviction reads exactly the expired entries
 *   0x03 [batchId u64 BE]                     undo record of one batch (the store's own)
 */
import { murmur3_x86_32 } from './murmur3.js';
import { CONF_KEYS } from './confKeys.js';
import { SluiceError } from './errors.js';

export interface StateLayout {
  keyGroups: number;
  partitions: number;
  shards: number;
}

export const KEY_HASH = 'murmur3-32';
/** Key groups are stored as u16. */
export const MAX_KEY_GROUPS = 65536;

export const PREFIX_META = 0x00;
export const PREFIX_DATA = 0x01;
export const PREFIX_INDEX = 0x02;
export const PREFIX_UNDO = 0x03;

/** Throws INVALID_CONF unless 1 <= shards <= partitions <= keyGroups <= 65536, all integers. */
export function validateLayout(layout: StateLayout): void {
  const { keyGroups: g, partitions: n, shards: s } = layout;
  if (!Number.isInteger(g) || g < 1 || g > MAX_KEY_GROUPS) {
    throw new SluiceError('INVALID_CONF', `${CONF_KEYS.stateStoreKeyGroups} must be an integer from 1 to ${MAX_KEY_GROUPS}, got ${g}`, {
      option: CONF_KEYS.stateStoreKeyGroups,
    });
  }
  if (!Number.isInteger(n) || n < 1 || n > g) {
    throw new SluiceError(
      'INVALID_CONF',
      `${CONF_KEYS.stateStorePartitions} must be a positive integer no larger than ${CONF_KEYS.stateStoreKeyGroups} (${g}), got ${n}`,
      { option: CONF_KEYS.stateStorePartitions },
    );
  }
  if (!Number.isInteger(s) || s < 1 || s > n) {
    throw new SluiceError('INVALID_CONF', `${CONF_KEYS.stateStoreShards} must be a positive integer no larger than the state partitions (${n}), got ${s}`, {
      option: CONF_KEYS.stateStoreShards,
    });
  }
}

export function keyGroupOf(key: Uint8Array, keyGroups: number): number {
  return murmur3_x86_32(key, 0) % keyGroups;
}

// Inverse of start(p) = floor(p*G/N): the largest p with floor(p*G/N) <= kg, i.e. p*G < (kg+1)*N.
// All products stay below 2^32, exact in doubles.
export function partitionOfKeyGroup(kg: number, layout: StateLayout): number {
  return Math.floor(((kg + 1) * layout.partitions - 1) / layout.keyGroups);
}

/** Key groups [start, end) of partition p. */
export function keyGroupRange(partition: number, layout: StateLayout): [number, number] {
  const { keyGroups: g, partitions: n } = layout;
  return [Math.floor((partition * g) / n), Math.floor(((partition + 1) * g) / n)];
}

export function shardOfPartition(partition: number, layout: StateLayout): number {
  return Math.floor(((partition + 1) * layout.shards - 1) / layout.partitions);
}

function checkKeyGroup(kg: number): void {
  if (!Number.isInteger(kg) || kg < 0 || kg >= MAX_KEY_GROUPS) throw new RangeError(`key group ${kg} is not a u16`);
}

/** [0x01][kg u16 BE][key] */
export function dataKey(kg: number, key: Uint8Array): Uint8Array {
  checkKeyGroup(kg);
  const out = new Uint8Array(3 + key.length);
  out[0] = PREFIX_DATA;
  out[1] = kg >>> 8;
  out[2] = kg & 0xff;
  out.set(key, 3);
  return out;
}

/** The key group and canonical key of a data key (`key` is a view into `k`). */
export function decodeDataKey(k: Uint8Array): { kg: number; key: Uint8Array } {
  if (k.length < 3 || k[0] !== PREFIX_DATA) throw new RangeError('not a data key');
  return { kg: ((k[1] as number) << 8) | (k[2] as number), key: k.subarray(3) };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * t as a big-endian two's-complement i64 at out[offset], sign bit flipped so that unsigned byte
 * order equals signed numeric order. t is a safe integer: its high word floor(t / 2^32) fits an
 * int32 and its low word the rest, so plain number arithmetic is exact (no bigint per key).
 */
function writeTime(out: Uint8Array, offset: number, t: number): void {
  const hi = Math.floor(t / 4294967296);
  const lo = t - hi * 4294967296;
  out[offset] = ((hi >>> 24) & 0xff) ^ 0x80;
  out[offset + 1] = (hi >>> 16) & 0xff;
  out[offset + 2] = (hi >>> 8) & 0xff;
  out[offset + 3] = hi & 0xff;
  out[offset + 4] = (lo >>> 24) & 0xff;
  out[offset + 5] = (lo >>> 16) & 0xff;
  out[offset + 6] = (lo >>> 8) & 0xff;
  out[offset + 7] = lo & 0xff;
}

/** [0x02][timeMs i64 BE, sign bit flipped][kg u16 BE][key]; timeMs must be a safe integer. */
export function indexKey(timeMs: number, kg: number, key: Uint8Array): Uint8Array {
  if (!Number.isSafeInteger(timeMs)) throw new RangeError(`index time ${timeMs} is not an integer number of milliseconds`);
  checkKeyGroup(kg);
  const out = new Uint8Array(11 + key.length);
  out[0] = PREFIX_INDEX;
  writeTime(out, 1, timeMs);
  out[9] = kg >>> 8;
  out[10] = kg & 0xff;
  out.set(key, 11);
  return out;
}

export function decodeIndexKey(k: Uint8Array): { timeMs: number; kg: number; key: Uint8Array } {
  return { timeMs: indexKeyTime(k), kg: ((k[9] as number) << 8) | (k[10] as number), key: k.subarray(11) };
}

/** An index key's time, read in place (the i64 of writeTime, its sign bit flipped back). */
export function indexKeyTime(k: Uint8Array): number {
  if (k.length < 11 || k[0] !== PREFIX_INDEX) throw new RangeError('not an index key');
  const hi = (((k[1] as number) ^ 0x80) << 24) | ((k[2] as number) << 16) | ((k[3] as number) << 8) | (k[4] as number);
  const lo = (((k[5] as number) << 24) | ((k[6] as number) << 16) | ((k[7] as number) << 8) | (k[8] as number)) >>> 0;
  return hi * 4294967296 + lo;
}

/** The data key that an index key points at. */
export function dataKeyOf(indexKey: Uint8Array): Uint8Array {
  if (indexKey.length < 11 || indexKey[0] !== PREFIX_INDEX) throw new RangeError('not an index key');
  const out = new Uint8Array(indexKey.length - 8);
  out[0] = PREFIX_DATA;
  out.set(indexKey.subarray(9), 1);
  return out;
}

/**
 * [gte, lt) of the index entries with time <= timeMsInclusive. Index times are integers, so any
 * number works as the bound (a fractional watermark, -Infinity: nothing, Infinity: everything).
 */
export function indexRangeUpTo(timeMsInclusive: number): [Uint8Array, Uint8Array] {
  const gte = new Uint8Array([PREFIX_INDEX]);
  if (Number.isNaN(timeMsInclusive)) throw new RangeError('index bound is NaN');
  if (timeMsInclusive === Infinity) return [gte, new Uint8Array([PREFIX_INDEX + 1])];
  if (timeMsInclusive === -Infinity) return [gte, gte];
  const next = BigInt(Math.floor(timeMsInclusive)) + 1n;
  if (next > INT64_MAX) return [gte, new Uint8Array([PREFIX_INDEX + 1])];
  if (next <= INT64_MIN) return [gte, gte];
  const lt = new Uint8Array(9);
  lt[0] = PREFIX_INDEX;
  // A bound may lie beyond the safe integers (index times never do): written from the bigint.
  new DataView(lt.buffer).setBigInt64(1, next);
  lt[1] = (lt[1] as number) ^ 0x80;
  return [gte, lt];
}

/** [gte, lt) of every index entry. */
export function indexRange(): [Uint8Array, Uint8Array] {
  return [new Uint8Array([PREFIX_INDEX]), new Uint8Array([PREFIX_INDEX + 1])];
}

/** [gte, lt) of every data entry. */
export function dataRange(): [Uint8Array, Uint8Array] {
  return [new Uint8Array([PREFIX_DATA]), new Uint8Array([PREFIX_DATA + 1])];
}

/** [gte, lt) of the data entries of key groups [startKg, endKg), e.g. a partition's or a shard's. */
export function keyGroupsDataRange(startKg: number, endKg: number): [Uint8Array, Uint8Array] {
  const bound = (kg: number) => (kg >= MAX_KEY_GROUPS ? new Uint8Array([PREFIX_DATA + 1]) : new Uint8Array([PREFIX_DATA, kg >>> 8, kg & 0xff]));
  return [bound(startKg), bound(endKg)];
}

export const META_KEY: Uint8Array = new Uint8Array([PREFIX_META]);

/** [0x03][batchId u64 BE] */
export function undoKey(batchId: number): Uint8Array {
  if (!Number.isSafeInteger(batchId) || batchId < 0) throw new RangeError(`batch id ${batchId} is not a non-negative integer`);
  const out = new Uint8Array(9);
  out[0] = PREFIX_UNDO;
  new DataView(out.buffer).setBigUint64(1, BigInt(batchId));
  return out;
}

export function batchIdOfUndoKey(k: Uint8Array): number {
  if (k.length !== 9 || k[0] !== PREFIX_UNDO) throw new RangeError('not an undo key');
  return Number(new DataView(k.buffer, k.byteOffset, k.byteLength).getBigUint64(1));
}

/** [gte, lt) of every undo record. */
export function undoRange(): [Uint8Array, Uint8Array] {
  return [new Uint8Array([PREFIX_UNDO]), new Uint8Array([PREFIX_UNDO + 1])];
}

/**
 * Which shard holds each partition (index: partition). The state layout file keeps this table
 * explicitly, so that a repartition can move the fewest partitions that balance the shards;
 * a new checkpoint starts from contiguous blocks of partitions.
 */
export type ShardAssignment = readonly number[];

/** The contiguous assignment of a new layout: shard s holds a block of partitions (shardOfPartition). */
export function contiguousAssignment(layout: StateLayout): number[] {
  return Array.from({ length: layout.partitions }, (_, p) => shardOfPartition(p, layout));
}

/** The partitions that `assignment` gives shard s, ascending. */
export function partitionsIn(assignment: ShardAssignment, shard: number): number[] {
  const out: number[] = [];
  assignment.forEach((s, p) => {
    if (s === shard) out.push(p);
  });
  return out;
}

/** Whether `assignment` names a shard in [0, shards) for each of the layout's partitions. */
export function isAssignmentOf(assignment: unknown, layout: StateLayout): assignment is ShardAssignment {
  return Array.isArray(assignment) && assignment.length === layout.partitions && assignment.every((s) => Number.isInteger(s) && s >= 0 && s < layout.shards);
}
