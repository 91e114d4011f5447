/**
 * A shard's decoded join state, kept in its worker between batches (StateCache.join) within the
 * state cache's budget: each side's keys with their rows, and, when it holds every key the shard
 * holds, the keys in order of expiry (so eviction needs no index scan).
 */
import { dataRange, decodeDataKey, decodeIndexKey, indexRange, rangeInChunks, type ShardStore } from '@sluice/state';
import type { Schema } from '../../schema/types.js';
import type { StateCache } from '../stateCache.js';
import { decodeJoinValue, stateId, type Stored } from './codec.js';
import type { JoinSide } from './plan.js';

/** A side's rows of one key, as the shard holds them and as this batch changes them. */
export interface KeyState {
  side: JoinSide;
  keyGroup: number;
  /** [side][key bytes]: the data key's and index entries' key. */
  key: Uint8Array;
  /** The value the shard holds (null: none), and the time of its index entry. */
  prior: Uint8Array | null;
  priorIndexTime: number | null;
  rows: Stored[];
  dirty: boolean;
}

/**
 * A shard's decoded join state, kept between batches (StateCache.join), per side by stateId: every
 * key the shard holds when `complete` (an absent key is then absent from the shard too, and needs
 * no read; `expiring` then orders the keys by index time, so eviction needs no index scan), else
 * some of them. `bytes` estimates what it takes in memory (its budget's measure).
 */
export interface JoinStateCache {
  states: [Map<string, KeyState>, Map<string, KeyState>];
  complete: boolean;
  bytes: number;
  expiring: ExpiryHeap | undefined;
  /** Index entries naming no key's earliest expiry, found when the cache was filled: the next batch deletes them. */
  stale: Uint8Array[];
}

export function keyStateOf(side: JoinSide, keyGroup: number, key: Uint8Array, prior: Uint8Array | undefined, schema: Schema): KeyState {
  if (prior === undefined) return { side, keyGroup, key, prior: null, priorIndexTime: null, rows: [], dirty: false };
  const { indexTime, rows } = decodeJoinValue(prior, schema);
  return { side, keyGroup, key, prior, priorIndexTime: indexTime, rows, dirty: false };
}

/** Keys by the time of their index entry, least first (a binary heap; an entry whose key has moved on is skipped when it comes up). */
export class ExpiryHeap {
  private readonly times: number[] = [];
  private readonly states: KeyState[] = [];

  push(time: number, state: KeyState): void {
    const { times, states } = this;
    let i = times.length;
    times.push(time);
    states.push(state);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((times[parent] as number) <= time) break;
      times[i] = times[parent] as number;
      states[i] = states[parent] as KeyState;
      i = parent;
    }
    times[i] = time;
    states[i] = state;
  }

  /** Removes and returns the keys whose entries are at or below `time`, with the entry's time. */
  popUpTo(time: number, fn: (state: KeyState, entryTime: number) => void): void {
    const { times, states } = this;
    while (times.length > 0 && (times[0] as number) <= time) {
      const t = times[0] as number;
      const s = states[0] as KeyState;
      const lastTime = times.pop() as number;
      const lastState = states.pop() as KeyState;
      if (times.length > 0) {
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= times.length) break;
          const r = l + 1;
          const c = r < times.length && (times[r] as number) < (times[l] as number) ? r : l;
          if ((times[c] as number) >= lastTime) break;
          times[i] = times[c] as number;
          states[i] = states[c] as KeyState;
          i = c;
        }
        times[i] = lastTime;
        states[i] = lastState;
      }
      fn(s, t);
    }
  }
}

/** Decoded rows take about this many times the bytes of their encoded value (the cache's budget measure). */
export const DECODED_BYTES_PER_BYTE = 4;

/**
 * The shard's join cache, filled from the shard when it has none: a shard holding nothing gives a
 * complete empty one; otherwise its data is read once, while it fits the cache's budget (past it,
 * the cache keeps what it has read and the rest is read per key). A shard whose cache has outgrown
 * its budget before starts again empty, not complete: its keys are read as they come.
 */
export async function joinCacheOf(cache: StateCache, store: ShardStore, schemas: [Schema, Schema]): Promise<JoinStateCache> {
  if (cache.join !== undefined) return cache.join;
  const join: JoinStateCache = { states: [new Map(), new Map()], complete: true, bytes: 0, expiring: new ExpiryHeap(), stale: [] };
  if (cache.overflowed) {
    join.complete = false;
    join.expiring = undefined;
  } else if (store.numRows > 0) {
    const [gte, lt] = dataRange();
    scan: for await (const chunk of rangeInChunks(store, gte, lt)) {
      for (const [dk, value] of chunk) {
        if (join.bytes + value.length * DECODED_BYTES_PER_BYTE > cache.budgetBytes) {
          join.complete = false;
          join.expiring = undefined;
          break scan;
        }
        const { kg, key } = decodeDataKey(dk);
        const side = (key[0] ?? 0) as JoinSide;
        const state = keyStateOf(side, kg, new Uint8Array(key), value, schemas[side]);
        join.states[side].set(stateId(kg, key.subarray(1)), state);
        if (state.priorIndexTime !== null) join.expiring?.push(state.priorIndexTime, state);
        join.bytes += value.length * DECODED_BYTES_PER_BYTE;
      }
    }
    // A complete cache evicts without the shard's index: entries naming no key's earliest expiry go now.
    if (join.complete) {
      const [ig, il] = indexRange();
      for await (const chunk of rangeInChunks(store, ig, il)) {
        for (const [ik] of chunk) {
          const { timeMs, kg, key } = decodeIndexKey(ik);
          if (join.states[(key[0] ?? 0) as JoinSide].get(stateId(kg, key.subarray(1)))?.priorIndexTime !== timeMs) join.stale.push(new Uint8Array(ik));
        }
      }
    }
  }
  cache.join = join;
  return join;
}

/** The batch's keys, per side by stateId: the cache's, or new ones (read from the shard when the cache is not complete). */
