/**
 * The state a processor keeps per grouping key (transformWithState, flatMapGroupsWithState): one
 * LevelDB value per key holds every state variable of the key and its timers, so that a batch
 * reads each key it touches once (one getMany for the batch) and writes it once.
 *
 * Value: the state value header (kind `processor`, version 2: its row count, and an index time it
 * cannot tell, as a key may have several index entries), then one plainPackr array (engine-form
 * values) [timers, ...variables], where timers is the key's registered timer times, ascending,
 * and each variable is [name, kind, ...data]:
 *   value: [v, expiresAtMs | null]
 *   list:  [v1, e1, v2, e2, ...]
 *   map:   [k1, v1, e1, k2, v2, e2, ...]
 * A variable with no value is left out, and a key with no variable and no timer is deleted.
 * Values written before the header (version 1) are one array [1, timers, ...variables].
 *
 * Index entries (@sluice/state layout.ts, [0x02][time][kg][key]) find what is due without reading
 * what is not: one per registered timer at its time, and one per key at the least expiry of its
 * values with a time to live, at TTL_BASE + that expiry. Timers lie below TTL_BASE and expiries
 * above it, so the two clocks (a watermark for event-time timers, the batch's processing time for
 * time to live) scan apart.
 */
import { corruptStateValue, expectValueHeader, indexKey, indexRangeUpTo, ValueKind, type SluiceError } from '@sluice/state';
import { packWithValueHeader, plainPackr as packr } from '../../task/packers.js';
import type { StateVariable } from '../types.js';

export const PROCESSOR_STATE_VERSION = 2;
const BEFORE_HEADER = 1;
const WHAT = "a processor's state";

/** Expiries are indexed at TTL_BASE + expiry; timers must lie below it. */
export const TTL_BASE = 2 ** 52;

/** [v, expiresAtMs]: a value and when its time to live ends (null: never). */
export type Expiring = [value: unknown, expiresAtMs: number | null];

export type VariableData =
  | { kind: 'value'; entry: Expiring }
  | { kind: 'list'; items: Expiring[] }
  /** By canonical key text (mapKeyText): [key, value, expiresAtMs]. */
  | { kind: 'map'; entries: Map<string, [unknown, unknown, number | null]> };

export interface KeyStateData {
  timers: number[];
  vars: Map<string, VariableData>;
}

/** A map key's identity among the keys of one map (engine form: JSON is exact for its values). */
export const mapKeyText = (k: unknown): string => JSON.stringify(k);

export function emptyKeyState(): KeyStateData {
  return { timers: [], vars: new Map() };
}

/** A key's value, holding `rows` state rows as its kind counts them; null for a key with nothing left. */
export function encodeKeyState(s: KeyStateData, rows: number): Uint8Array | null {
  if (s.timers.length === 0 && s.vars.size === 0) return null;
  const out: unknown[] = [s.timers];
  for (const [name, d] of s.vars) {
    if (d.kind === 'value') out.push([name, 'value', d.entry[0], d.entry[1]]);
    else if (d.kind === 'list') out.push([name, 'list', ...d.items.flat()]);
    else out.push([name, 'map', ...[...d.entries.values()].flat()]);
  }
  return packWithValueHeader(packr, out, ValueKind.processor, PROCESSOR_STATE_VERSION, undefined, rows);
}

const corrupt = (why: string): SluiceError => corruptStateValue(WHAT, `${why}: the state was written by another query, or is damaged`);

/** The array of a value: [timers, ...variables] from `first` on (1 for a value before the header). */
function unpackKeyState(bytes: Uint8Array): { a: unknown[]; first: number } {
  const h = expectValueHeader(bytes, ValueKind.processor, PROCESSOR_STATE_VERSION, WHAT);
  let a: unknown;
  try {
    a = packr.unpack(h === undefined ? bytes : bytes.subarray(h.start));
  } catch (e) {
    throw corrupt(`does not decode (${(e as Error).message})`);
  }
  const first = h === undefined ? 1 : 0;
  if (!Array.isArray(a) || (h === undefined && a[0] !== BEFORE_HEADER) || !Array.isArray(a[first])) throw corrupt('is not a list of timers and variables');
  return { a, first };
}

export function decodeKeyState(bytes: Uint8Array): KeyStateData {
  const { a, first } = unpackKeyState(bytes);
  const vars = new Map<string, VariableData>();
  for (let i = first + 1; i < a.length; i++) {
    const [name, kind, ...data] = a[i] as [string, string, ...unknown[]];
    if (kind === 'value') vars.set(name, { kind, entry: [data[0], data[1] as number | null] });
    else if (kind === 'list') {
      const items: Expiring[] = [];
      for (let j = 0; j < data.length; j += 2) items.push([data[j], data[j + 1] as number | null]);
      vars.set(name, { kind, items });
    } else if (kind === 'map') {
      const entries = new Map<string, [unknown, unknown, number | null]>();
      for (let j = 0; j < data.length; j += 3) entries.set(mapKeyText(data[j]), [data[j], data[j + 1], data[j + 2] as number | null]);
      vars.set(name, { kind, entries });
    } else throw corrupt(`holds a variable ${String(name)} of unknown kind ${String(kind)}`);
  }
  return { timers: a[first] as number[], vars };
}

/**
 * The state rows a key's value stands for, as Spark counts them (the keys of its column families):
 * one per value variable and per list variable, one per map entry; timers are not rows.
 */
export function stateRows(s: KeyStateData): number {
  let n = 0;
  for (const d of s.vars.values()) n += d.kind === 'map' ? d.entries.size : 1;
  return n;
}

/** The state rows a transformWithState value of the format before the header holds (the repartition's RowsIn). */
export function stateRowsIn(value: Uint8Array): number {
  return stateRows(decodeKeyState(value));
}

/** The least expiry among a key's values (null: none expires). */
export function leastExpiry(s: KeyStateData): number | null {
  let least: number | null = null;
  const see = (e: number | null): void => {
    if (e !== null && (least === null || e < least)) least = e;
  };
  for (const d of s.vars.values()) {
    if (d.kind === 'value') see(d.entry[1]);
    else if (d.kind === 'list') for (const it of d.items) see(it[1]);
    else for (const it of d.entries.values()) see(it[2]);
  }
  return least;
}

/** Drops the values whose time to live ended at `nowMs` (expired: expiry <= now); returns how many. */
export function dropExpired(s: KeyStateData, expired: (expiresAtMs: number | null) => boolean): number {
  let n = 0;
  for (const [name, d] of s.vars) {
    if (d.kind === 'value') {
      if (expired(d.entry[1])) {
        s.vars.delete(name);
        n += 1;
      }
    } else if (d.kind === 'list') {
      const kept = d.items.filter((it) => !expired(it[1]));
      n += d.items.length - kept.length;
      if (kept.length === 0) s.vars.delete(name);
      else d.items = kept;
    } else {
      for (const [k, it] of d.entries) {
        if (expired(it[2])) {
          d.entries.delete(k);
          n += 1;
        }
      }
      if (d.entries.size === 0) s.vars.delete(name);
    }
  }
  return n;
}

export function timerIndexKey(timeMs: number, kg: number, key: Uint8Array): Uint8Array {
  return indexKey(timeMs, kg, key);
}

export function ttlIndexKey(expiresAtMs: number, kg: number, key: Uint8Array): Uint8Array {
  return indexKey(TTL_BASE + expiresAtMs, kg, key);
}

/** [gte, lt) of the timer entries at or below `timeMs`. */
export function timersUpTo(timeMs: number): [Uint8Array, Uint8Array] {
  return indexRangeUpTo(Math.min(timeMs, TTL_BASE - 1));
}

/** [gte, lt) of every timer entry. */
export function allTimers(): [Uint8Array, Uint8Array] {
  return indexRangeUpTo(TTL_BASE - 1);
}

/** [gte, lt) of the expiry entries at or below `timeMs`. */
export function expiriesUpTo(timeMs: number): [Uint8Array, Uint8Array] {
  return [indexRangeUpTo(TTL_BASE - 1)[1], indexRangeUpTo(TTL_BASE + timeMs)[1]];
}

/** [gte, lt) of every expiry entry. */
export function allExpiries(): [Uint8Array, Uint8Array] {
  return [indexRangeUpTo(TTL_BASE - 1)[1], indexRangeUpTo(Infinity)[1]];
}

/** Whether a variable declared now can read what `was` wrote (same kind and types). */
export function sameVariable(a: StateVariable, b: StateVariable): boolean {
  return JSON.stringify(variableShape(a)) === JSON.stringify(variableShape(b));
}

function variableShape(v: StateVariable): unknown {
  return v.kind === 'map' ? [v.kind, v.keySchema, v.schema] : [v.kind, v.schema];
}
