/**
 * Spark's value hashes, bit for bit: `hash` is Murmur3Hash (Murmur3_x86_32 with seed 42, folded
 * over the arguments) and approx_count_distinct hashes with XxHash64 (seed 42). Both hash a value
 * by its type as Spark does: INT and DATE as a 4-byte int, LONG as an 8-byte long, DOUBLE as its
 * IEEE bits, TIMESTAMP as microseconds, BOOLEAN as 1 or 0, STRING as its UTF-8 bytes (Murmur3 with
 * Spark's own tail handling, one byte at a time), arrays, maps and structs element by element, and
 * null leaves the running hash unchanged.
 */
import type { DataType, Row } from '../schema/types.js';
import type { MapEntries } from '../schema/values.js';

const utf8 = new TextEncoder();
let scratch = new Uint8Array(256);

/** A string's UTF-8 bytes in a reused buffer (valid until the next call). */
function utf8Bytes(s: string): Uint8Array {
  if (s.length * 3 > scratch.length) scratch = new Uint8Array(s.length * 3);
  return scratch.subarray(0, utf8.encodeInto(s, scratch).written);
}
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** A number's 64 bits as [low, high] 32-bit halves: a LONG's two's complement, or a DOUBLE's IEEE bits. */
function halves(n: number, isDouble: boolean): [number, number] {
  if (isDouble) {
    f64[0] = n === 0 ? 0 : n; // -0.0 hashes as 0.0 (Spark normalizes it)
    return [u32[0]! | 0, u32[1]! | 0];
  }
  const big = BigInt.asUintN(64, BigInt(n));
  return [Number(big & 0xffffffffn) | 0, Number(big >> 32n) | 0];
}

// ---- Murmur3_x86_32 ---------------------------------------------------------------------------

const mixK1 = (k: number): number => {
  k = Math.imul(k, 0xcc9e2d51);
  return Math.imul((k << 15) | (k >>> 17), 0x1b873593);
};
const mixH1 = (h: number, k: number): number => {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
};
function fmix32(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

const murmurInt = (i: number, seed: number): number => fmix32(mixH1(seed, mixK1(i)), 4);
const murmurLong = ([lo, hi]: [number, number], seed: number): number => fmix32(mixH1(mixH1(seed, mixK1(lo)), mixK1(hi)), 8);

function murmurBytes(b: Uint8Array, seed: number): number {
  let h = seed;
  const aligned = b.length - (b.length % 4);
  for (let i = 0; i < aligned; i += 4) h = mixH1(h, mixK1(b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)));
  // Spark's hashUnsafeBytes mixes each remaining byte (sign-extended) as a block of its own.
  for (let i = aligned; i < b.length; i++) h = mixH1(h, mixK1((b[i]! << 24) >> 24));
  return fmix32(h, b.length);
}

// ---- XxHash64 ---------------------------------------------------------------------------------

const M64 = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64;
const mul = (a: bigint, b: bigint): bigint => (a * b) & M64;

function fmix64(h: bigint): bigint {
  h ^= h >> 33n;
  h = mul(h, P2);
  h ^= h >> 29n;
  h = mul(h, P3);
  return h ^ (h >> 32n);
}

const xxInt = (i: number, seed: bigint): bigint => {
  let h = (seed + P5 + 4n) & M64;
  h ^= mul(BigInt(i >>> 0), P1);
  return fmix64((mul(rotl(h, 23n), P2) + P3) & M64);
};

const xxLong = (l: bigint, seed: bigint): bigint => {
  let h = (seed + P5 + 8n) & M64;
  h ^= mul(rotl(mul(l & M64, P2), 31n), P1);
  return fmix64((mul(rotl(h, 27n), P1) + P4) & M64);
};

function xxBytes(b: Uint8Array, seed: bigint): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u64 = (i: number): bigint => view.getBigUint64(i, true);
  const round = (acc: bigint, input: bigint): bigint => mul(rotl((acc + mul(input, P2)) & M64, 31n), P1);
  const mergeRound = (acc: bigint, v: bigint): bigint => (mul(acc ^ round(0n, v), P1) + P4) & M64;
  let i = 0;
  let h: bigint;
  if (b.length >= 32) {
    let v1 = (seed + P1 + P2) & M64;
    let v2 = (seed + P2) & M64;
    let v3 = seed;
    let v4 = (seed - P1) & M64;
    for (; i + 32 <= b.length; i += 32) {
      v1 = round(v1, u64(i));
      v2 = round(v2, u64(i + 8));
      v3 = round(v3, u64(i + 16));
      v4 = round(v4, u64(i + 24));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    h = mergeRound(mergeRound(mergeRound(mergeRound(h, v1), v2), v3), v4);
  } else h = (seed + P5) & M64;
  h = (h + BigInt(b.length)) & M64;
  for (; i + 8 <= b.length; i += 8) h = (mul(rotl(h ^ round(0n, u64(i)), 27n), P1) + P4) & M64;
  if (i + 4 <= b.length) {
    h = (mul(rotl(h ^ mul(BigInt(view.getUint32(i, true)), P1), 23n), P2) + P3) & M64;
    i += 4;
  }
  for (; i < b.length; i++) h = mul(rotl(h ^ mul(BigInt(b[i]!), P5), 11n), P1);
  return fmix64(h);
}

/** A hash function's three primitives, as Spark's hash expressions use them. */
interface Hasher<S> {
  int(i: number, seed: S): S;
  long(halves: [lo: number, hi: number], seed: S): S;
  bytes(b: Uint8Array, seed: S): S;
}

const MURMUR3: Hasher<number> = { int: murmurInt, long: murmurLong, bytes: murmurBytes };
const XXHASH64: Hasher<bigint> = {
  int: xxInt,
  long: ([lo, hi], seed) => xxLong((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0), seed),
  bytes: xxBytes,
};

/** One value of `type` hashed by `h`, continuing from `seed`, value by value as Spark's HashExpression does. */
function hashValue<S>(h: Hasher<S>, v: unknown, type: DataType, seed: S): S {
  if (v === null || v === undefined) return seed;
  if (typeof type === 'object') {
    if ('array' in type) return (v as unknown[]).reduce<S>((acc, x) => hashValue(h, x, type.array, acc), seed);
    if ('map' in type) {
      let acc = seed;
      for (const [k, x] of v as MapEntries) acc = hashValue(h, x, type.map.value, hashValue(h, k, type.map.key, acc));
      return acc;
    }
    return type.struct.reduce((acc, f) => hashValue(h, (v as Row)[f.name], f.type, acc), seed);
  }
  switch (type) {
    case 'int':
    case 'date':
      return h.int(v as number, seed);
    case 'boolean':
      return h.int(v ? 1 : 0, seed);
    case 'long':
      return h.long(halves(v as number, false), seed);
    case 'timestamp':
      return h.long(halves((v as number) * 1000, false), seed);
    case 'double':
      return h.long(halves(v as number, true), seed);
    case 'interval': {
      const [months, days, ms] = v as [number, number, number];
      return h.long(halves(ms * 1000, false), h.int(days, h.int(months, seed)));
    }
    default:
      return h.bytes(utf8Bytes(String(v)), seed);
  }
}

/** Spark's Murmur3 hash of one value of `type`, continuing from `seed` (hash() starts at 42). */
export function murmur3Value(v: unknown, type: DataType, seed: number): number {
  return hashValue(MURMUR3, v, type, seed);
}

/** Spark's XxHash64 of one value of `type` (seed 42 unless given), as an unsigned 64-bit bigint. */
export function xxhash64Value(v: unknown, type: DataType, seed = 42n): bigint {
  return hashValue(XXHASH64, v, type, seed);
}
