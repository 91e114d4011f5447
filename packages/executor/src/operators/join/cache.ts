/**
 * A shard's decoded join state, kept in its worker between batches (StateCache.join) within the
 * state cache's budget: per side, a table of its keys (a KeyTable: key bytes to a few number
 * cells) whose rows sit in the side's RowArena as a chain, and, when it holds every key the shard
 * holds, the keys in order of expiry (so eviction needs no index scan). No object per key or row.
 */
import { dataRange, decodeDataKey, decodeIndexKey, indexRange, rangeInChunks, type ShardStore } from '@sluice/state';
import type { Row, Schema } from '../../schema/types.js';
import { KeyTable } from '../keyTable.js';
import type { StateCache } from '../stateCache.js';
import { RowArena } from './arena.js';
import { encodeJoinRows, loadJoinValue } from './codec.js';
import { eventTimeOf, type JoinSide } from './plan.js';

/** A key's cells in its side's table. */
const HEAD = 0;
const TAIL = 1;
const COUNT = 2;
/** The time of the index entry the shard holds for the key (NaN: none). */
const INDEX = 3;
/** Bytes of the value the shard holds (0: none; negative: one of an older format, whose bytes the arena cannot give back). */
const HELD = 4;
const KEY_GROUP = 5;
/** The batch stamp the key was last changed in (its prior taken then). */
const STAMP = 6;
const WIDTH = 7;

/**
 * What a key's value takes in the cache, by its encoded bytes (the cache's budget measure): its
 * rows in the arena take about one and a half times their encoded bytes (a string's object header
 * against its length prefix and code), its entry in the key table about 96 bytes.
 */
export const cachedBytes = (valueBytes: number): number => (valueBytes === 0 ? 0 : Math.ceil(valueBytes * 1.5) + 96);

/** A side's keys and rows. */
export class SideTable {
  readonly keys = new KeyTable(WIDTH, 0);
  readonly arena: RowArena;
  /** The keys changed in the current batch, in the order first changed. */
  changed: number[] = [];
  /** Their values as the shard holds them, taken before the first change (null: none; undefined: read it from the shard). */
  priors: Array<Uint8Array | null | undefined> = [];
  /** Column and offset of a row's expiry, when the side's rows expire. */
  private readonly expiryColumn: number;
  private readonly expiryOffset: number;
  private rowScratch = new Int32Array(64);

  constructor(
    readonly side: JoinSide,
    schema: Schema,
    expiry: { column: string; offset: number } | undefined,
  ) {
    this.arena = new RowArena(schema);
    this.expiryColumn = expiry === undefined ? -1 : schema.findIndex((f) => f.name === expiry.column);
    this.expiryOffset = expiry?.offset ?? 0;
  }

  get cells(): Float64Array {
    return this.keys.cells;
  }

  find(key: Uint8Array): number {
    return this.findAt(key, 0, key.length);
  }

  /** The entry of the key at bytes[off, off + len), or -1. */
  findAt(bytes: Uint8Array, off: number, len: number): number {
    return this.keys.find(bytes, off, len, KeyTable.hash(bytes, off, len));
  }

  /** A key known to be absent, with no rows and no value in the shard. */
  insert(keyGroup: number, key: Uint8Array): number {
    return this.insertAt(keyGroup, key, 0, key.length);
  }

  insertAt(keyGroup: number, bytes: Uint8Array, off: number, len: number): number {
    const g = this.keys.insert(bytes, off, len, KeyTable.hash(bytes, off, len));
    const c = this.keys.cells;
    c[g * WIDTH + HEAD] = -1;
    c[g * WIDTH + TAIL] = -1;
    c[g * WIDTH + INDEX] = Number.NaN;
    c[g * WIDTH + KEY_GROUP] = keyGroup;
    c[g * WIDTH + STAMP] = -1;
    return g;
  }

  /** A key's value as the shard holds it, read into its entry (a new one, with no rows). */
  load(g: number, value: Uint8Array): void {
    const { indexTime, rows, current } = loadJoinValue(value, this.arena);
    const c = this.keys.cells;
    for (const r of rows) {
      this.arena.expiry[r] = this.expiryOf(r);
      this.append(g, r);
    }
    c[g * WIDTH + INDEX] = indexTime ?? Number.NaN;
    c[g * WIDTH + HELD] = current ? value.length : -value.length;
  }

  /** Row r's expiry from its values (NaN: never). */
  expiryOf(r: number): number {
    if (this.expiryColumn < 0) return Number.NaN;
    const t = eventTimeOf(this.arena.value(this.expiryColumn, r));
    return t === null ? Number.NaN : t - this.expiryOffset;
  }

  /** Links row r last in key g's chain. */
  append(g: number, r: number): void {
    const c = this.keys.cells;
    const tail = c[g * WIDTH + TAIL]!;
    if (tail < 0) c[g * WIDTH + HEAD] = r;
    else this.arena.next[tail] = r;
    c[g * WIDTH + TAIL] = r;
    c[g * WIDTH + COUNT] = c[g * WIDTH + COUNT]! + 1;
  }

  head(g: number): number {
    return this.keys.cells[g * WIDTH + HEAD]!;
  }

  count(g: number): number {
    return this.keys.cells[g * WIDTH + COUNT]!;
  }

  /** The time of the index entry the shard holds for key g, or null. */
  indexTime(g: number): number | null {
    const t = this.keys.cells[g * WIDTH + INDEX]!;
    return Number.isNaN(t) ? null : t;
  }

  keyGroup(g: number): number {
    return this.keys.cells[g * WIDTH + KEY_GROUP]!;
  }

  /** Bytes of the value the shard holds for key g (0: none). */
  heldBytes(g: number): number {
    return Math.abs(this.keys.cells[g * WIDTH + HELD]!);
  }

  /** Records that the shard now holds `bytes` of value for key g, with an index entry at `indexTime`. */
  setHeld(g: number, bytes: number, indexTime: number | null): void {
    this.keys.cells[g * WIDTH + HELD] = bytes;
    this.keys.cells[g * WIDTH + INDEX] = indexTime ?? Number.NaN;
  }

  /** Key g's rows in order, in a scratch array valid until the next call. */
  rowsOf(g: number): Int32Array {
    const n = this.count(g);
    if (this.rowScratch.length < n) this.rowScratch = new Int32Array(Math.max(n, this.rowScratch.length * 2));
    const out = this.rowScratch;
    let i = 0;
    for (let r = this.head(g); r >= 0; r = this.arena.next[r]!) out[i++] = r;
    return out;
  }

  /** The least expiry of key g's rows, or null. */
  leastExpiry(g: number): number | null {
    let least = Number.POSITIVE_INFINITY;
    for (let r = this.head(g); r >= 0; r = this.arena.next[r]!) {
      const t = this.arena.expiry[r]!;
      if (t < least) least = t;
    }
    return least === Number.POSITIVE_INFINITY ? null : least;
  }

  /**
   * Called before key g changes: the first time in batch `stamp`, it is listed as changed, with
   * the value the shard holds as its prior.
   */
  willChange(g: number, stamp: number): void {
    const c = this.keys.cells;
    if (c[g * WIDTH + STAMP] === stamp) return;
    c[g * WIDTH + STAMP] = stamp;
    this.changed.push(g);
    const held = c[g * WIDTH + HELD]!;
    this.priors.push(held === 0 ? null : held < 0 ? undefined : encodeJoinRows(this.indexTime(g), this.arena, this.rowsOf(g), this.count(g)));
  }

  /**
   * Unlinks and frees key g's rows whose expiry is at or below `watermark`, the unmatched ones
   * first added to `unmatched` as rows (when given); returns how many went.
   */
  removeExpired(g: number, watermark: number, unmatched: Row[] | null): number {
    const c = this.keys.cells;
    const { next, expiry, matched } = this.arena;
    let prev = -1;
    let removed = 0;
    for (let r = this.head(g); r >= 0; ) {
      const after = next[r]!;
      if (expiry[r]! <= watermark) {
        if (unmatched !== null && matched[r] === 0) unmatched.push(this.arena.row(r));
        if (prev < 0) c[g * WIDTH + HEAD] = after;
        else next[prev] = after;
        if (c[g * WIDTH + TAIL] === r) c[g * WIDTH + TAIL] = prev;
        this.arena.release(r);
        removed += 1;
      } else prev = r;
      r = after;
    }
    c[g * WIDTH + COUNT] = c[g * WIDTH + COUNT]! - removed;
    return removed;
  }

  /** Drops key g from the table (it has no rows, and the shard no value). */
  remove(g: number): void {
    this.keys.remove(g);
  }
}

/** Keys by the time of their index entry, least first (a binary heap of [time, key]; an entry whose key has moved on is skipped when it comes up). */
export class ExpiryHeap {
  private readonly times: number[] = [];
  private readonly keys: number[] = [];

  push(time: number, g: number): void {
    const { times, keys } = this;
    let i = times.length;
    times.push(time);
    keys.push(g);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((times[parent] as number) <= time) break;
      times[i] = times[parent] as number;
      keys[i] = keys[parent] as number;
      i = parent;
    }
    times[i] = time;
    keys[i] = g;
  }

  /** Removes the entries at or below `time`, giving them to `into` as time, key pairs. */
  popUpTo(time: number, into: number[]): void {
    const { times, keys } = this;
    while (times.length > 0 && (times[0] as number) <= time) {
      into.push(times[0] as number, keys[0] as number);
      const lastTime = times.pop() as number;
      const lastKey = keys.pop() as number;
      if (times.length === 0) break;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= times.length) break;
        const r = l + 1;
        const c = r < times.length && (times[r] as number) < (times[l] as number) ? r : l;
        if ((times[c] as number) >= lastTime) break;
        times[i] = times[c] as number;
        keys[i] = keys[c] as number;
        i = c;
      }
      times[i] = lastTime;
      keys[i] = lastKey;
    }
  }
}

/**
 * A shard's decoded join state: per side its table, every key the shard holds when `complete`
 * (an absent key is then absent from the shard too, and needs no read; `expiring` then orders
 * each side's keys by index time, so eviction needs no index scan), else some of them. `bytes`
 * estimates what it takes in memory (its budget's measure).
 */
export interface JoinStateCache {
  sides: [SideTable, SideTable];
  complete: boolean;
  bytes: number;
  expiring: [ExpiryHeap, ExpiryHeap] | undefined;
  /** Index entries naming no key's earliest expiry, found when the cache was filled: the next batch deletes them. */
  stale: Uint8Array[];
  /** Counts the batches that ran on it (willChange's stamp). */
  batches: number;
}

type Expiries = [{ column: string; offset: number } | undefined, { column: string; offset: number } | undefined];

/**
 * The shard's join cache, filled from the shard when it has none: a shard holding nothing gives a
 * complete empty one; otherwise its data is read once, while it fits the cache's budget (past it,
 * the cache keeps what it has read and the rest is read per key). A shard whose cache has outgrown
 * its budget before starts again empty, not complete: its keys are read as they come.
 */
export async function joinCacheOf(cache: StateCache, store: ShardStore, schemas: [Schema, Schema], expiries: Expiries): Promise<JoinStateCache> {
  if (cache.join !== undefined) return cache.join;
  const sides: [SideTable, SideTable] = [new SideTable(0, schemas[0], expiries[0]), new SideTable(1, schemas[1], expiries[1])];
  const join: JoinStateCache = { sides, complete: true, bytes: 0, expiring: [new ExpiryHeap(), new ExpiryHeap()], stale: [], batches: 0 };
  if (cache.overflowed) {
    join.complete = false;
    join.expiring = undefined;
  } else if (store.numRows > 0) {
    const [gte, lt] = dataRange();
    scan: for await (const chunk of rangeInChunks(store, gte, lt)) {
      for (const [dk, value] of chunk) {
        if (join.bytes + cachedBytes(value.length) > cache.budgetBytes) {
          join.complete = false;
          join.expiring = undefined;
          break scan;
        }
        const { kg, key } = decodeDataKey(dk);
        const side = (key[0] ?? 0) as JoinSide;
        const g = sides[side].insert(kg, key.subarray(1));
        sides[side].load(g, value);
        const t = sides[side].indexTime(g);
        if (t !== null) join.expiring?.[side].push(t, g);
        join.bytes += cachedBytes(value.length);
      }
    }
    // A complete cache evicts without the shard's index: entries naming no key's earliest expiry go now.
    if (join.complete) {
      const [ig, il] = indexRange();
      for await (const chunk of rangeInChunks(store, ig, il)) {
        for (const [ik] of chunk) {
          const { timeMs, key } = decodeIndexKey(ik);
          const side = sides[(key[0] ?? 0) as JoinSide];
          const g = side.find(key.subarray(1));
          if (g < 0 || side.indexTime(g) !== timeMs) join.stale.push(new Uint8Array(ik));
        }
      }
    }
  }
  cache.join = join;
  return join;
}
