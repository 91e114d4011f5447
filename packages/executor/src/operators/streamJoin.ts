/**
 * A join of two streams (Spark's StreamingSymmetricHashJoinExec), on the state shard that owns its
 * keys. Each side's rows are kept in state under their join key; a batch's rows of one side join
 * the other side's state, then are stored themselves:
 *
 * 1. The left side's rows, in order: a row failing the conditions on the left columns alone joins
 *    nothing (an outer left side emits it with nulls); else it joins every stored right row of its
 *    key for which the rest of the condition holds, marking those rows matched, and is stored,
 *    matched or not (a left semi join's matched left row is emitted once and not stored).
 * 2. The right side's rows, the same way, against the left state, this batch's left rows included
 *    (a left semi join emits each stored left row once: the rows already matched are skipped).
 * 3. Each side's rows that the watermark has passed (state watermark predicates, in StreamJoinSide)
 *    are removed; an outer side's that never matched are emitted with nulls for the other side.
 *
 * A row the watermark has already passed is stored only when it can still matter (Spark's rule
 * since SPARK-49829): a left one, which this batch's right rows have yet to meet, and an unmatched
 * outer right one; both go at the end of the batch. A row with a null key matches nothing (an
 * outer side emits it with nulls at once). Late rows (the side's event time at or below the late
 * watermark) were dropped by the map tasks.
 *
 * State, per side and key: the data key is [side u8][key bytes] under the key's key group, and its
 * value (encodeJoinValue) holds the side's rows of the key with their matched flags and the time
 * of its eviction index entry: the least index time of its rows (joinExpiry). numRows counts rows.
 * The shard's worker keeps the state decoded between batches (JoinStateCache), within the state
 * cache's budget.
 */
import {
  dataKey,
  dataRange,
  decodeDataKey,
  decodeIndexKey,
  indexKey,
  indexRange,
  indexRangeUpTo,
  rangeInChunks,
  SluiceError,
  type ShardChange,
  type ShardStore,
} from '@sluice/state';
import { compileExpr } from '../expressions/compileExpr.js';
import { walkExpr } from '../expressions/exprTree.js';
import { conjuncts, lowerCaseNames, stateValueWatermark } from '../expressions/joinBounds.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { Expr } from '../expressions/types.js';
import { decodeBlock, type JoinRecord } from '../shuffle/shuffleCodec.js';
import type { StateTask } from '../task/messages.js';
import { plainPackr as packr } from '../task/packers.js';
import type { Row, Schema } from '../schema/types.js';
import { keyString, type StateCache } from './stateCache.js';
import type { StatefulOp, StreamJoinSide } from './types.js';

export type StreamJoinOp = Extract<StatefulOp, { kind: 'streamJoin' }>;
/** 0: the left side, 1: the right. */
export type JoinSide = 0 | 1;

const sideOf = (op: StreamJoinOp, side: JoinSide): StreamJoinSide => (side === 0 ? op.left : op.right);
const keysOf = (op: StreamJoinOp, side: JoinSide): string[] => (side === 0 ? op.leftKeys : op.rightKeys);

/** The time of an event-time value: a TIMESTAMP's own, a window's end; null for null. */
export function eventTimeOf(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'number' ? v : (v as { end: number }).end;
}

/**
 * When a side's stored row expires: its index time, the watermark at or past which it goes (null:
 * never). A key-evicted side's row goes with its key's time; a value-evicted side's once its event
 * time is at or below the condition's bound on it, `watermark + offset` (stateValueWatermark is
 * the watermark plus a constant), so its index time is its event time less the offset.
 */
export function joinExpiry(op: StreamJoinOp, side: JoinSide): ((row: Row) => number | null) | undefined {
  const s = sideOf(op, side);
  if (s.eviction === null) return undefined;
  if (s.eviction.kind === 'key') {
    const column = keysOf(op, side)[s.eviction.key] as string;
    return (row) => eventTimeOf(row[column]);
  }
  const offset = valueEvictionOffset(op, side);
  const column = s.eventTime;
  if (offset === undefined || column === null) return undefined;
  return (row) => {
    const t = eventTimeOf(row[column]);
    return t === null ? null : t - offset;
  };
}

/**
 * The watermark a join passes on to the operator after it (Spark's produceOutputWatermark): the
 * least of its sides' state watermarks (a side evicted by key: the watermark; by value: the bound
 * on its event time), since a row it may still emit is no older; undefined when neither side's
 * state expires (the operator after it then has no watermark).
 */
export function joinOutputWatermark(op: StreamJoinOp, watermarkMs: number): number | undefined {
  let least: number | undefined;
  for (const side of [0, 1] as const) {
    const eviction = sideOf(op, side).eviction;
    const offset = eviction?.kind === 'key' ? 0 : eviction?.kind === 'value' ? valueEvictionOffset(op, side) : undefined;
    if (offset !== undefined) least = least === undefined ? watermarkMs + offset : Math.min(least, watermarkMs + offset);
  }
  return least;
}

/** The constant the condition's bound on a side's event time adds to the other side's watermark, if it is one. */
function valueEvictionOffset(op: StreamJoinOp, side: JoinSide): number | undefined {
  if (op.residual === undefined) return undefined;
  const sides = { side: lowerCaseNames(sideOf(op, side).schema.map((f) => f.name)), watermarked: lowerCaseNames(sideOf(op, side === 0 ? 1 : 0).watermarked) };
  const at0 = stateValueWatermark(op.residual, sides, 0);
  const at1 = stateValueWatermark(op.residual, sides, 1_000_000_000);
  return at0 !== undefined && at1 === at0 + 1_000_000_000 ? at0 : undefined;
}

// ---- state values ------------------------------------------------------------------------------

/** A stored row and whether it has matched a row of the other side. */
type Stored = [row: Row, matched: boolean];

/**
 * A side's rows of one key as one msgpack array (plainPackr): [index time or null, row count, then
 * for each row its matched flag (0 or 1) and its values in the side's schema order], engine form.
 */
export function encodeJoinValue(indexTime: number | null, rows: readonly Stored[], schema: Schema): Uint8Array {
  const out: unknown[] = [indexTime, rows.length];
  for (const [row, matched] of rows) {
    out.push(matched ? 1 : 0);
    for (const f of schema) out.push(row[f.name] ?? null);
  }
  return packr.pack(out);
}

export function decodeJoinValue(value: Uint8Array, schema: Schema): { indexTime: number | null; rows: Stored[] } {
  const a = unpackJoinValue(value);
  if (a.length - 2 !== (a[1] as number) * (schema.length + 1)) {
    throw new SluiceError(
      'STATE_STORE_CORRUPT',
      `a join state value holds ${String(a[1])} rows in ${a.length - 2} values, which rows of this side's ${schema.length} columns (${schema.map((f) => f.name).join(', ')}) cannot fill: the state was written by another query, or is damaged`,
    );
  }
  const rows: Stored[] = [];
  for (let i = 2; i < a.length; i += schema.length + 1) {
    const row: Row = {};
    for (let k = 0; k < schema.length; k++) row[(schema[k] as Schema[number]).name] = a[i + 1 + k];
    rows.push([row, a[i] === 1]);
  }
  return { indexTime: a[0] as number | null, rows };
}

/** A stored value's array, checked for its header: [index time or null, row count, ...]. */
function unpackJoinValue(value: Uint8Array): unknown[] {
  let a: unknown;
  try {
    a = packr.unpack(value);
  } catch (e) {
    throw new SluiceError('STATE_STORE_CORRUPT', `a join state value does not decode: ${(e as Error).message}`);
  }
  if (!Array.isArray(a) || a.length < 2 || !(a[0] === null || typeof a[0] === 'number') || !Number.isInteger(a[1])) {
    throw new SluiceError(
      'STATE_STORE_CORRUPT',
      'a join state value is not [index time, row count, rows...]: the state was written by another query, or is damaged',
    );
  }
  return a;
}

/** The index time a stored value records (a repartition writes each moved value's index entry beside it). */
export const joinIndexTimeOf = (value: Uint8Array): number | null => unpackJoinValue(value)[0] as number | null;

/** The rows a stored value holds (a repartition counts rows, not keys). */
export const joinRowsIn = (value: Uint8Array): number => unpackJoinValue(value)[1] as number;

/** The string a key's rows are known by in a task and in the cache (per side): key group and key bytes, latin1. */
function stateId(keyGroup: number, keyBytes: Uint8Array): string {
  let s = String.fromCharCode(keyGroup >>> 8, keyGroup & 0xff);
  for (let i = 0; i < keyBytes.length; i += 4096) s += String.fromCharCode.apply(null, keyBytes.subarray(i, i + 4096) as unknown as number[]);
  return s;
}

/** The key part of a side's state data key: [side u8][key bytes] (the data key puts it under the key group). */
function sideKey(side: JoinSide, keyBytes: Uint8Array): Uint8Array {
  const key = new Uint8Array(keyBytes.length + 1);
  key[0] = side;
  key.set(keyBytes, 1);
  return key;
}

// ---- the join ----------------------------------------------------------------------------------

/** The join compiled for a shard's task. */
interface CompiledJoin {
  /** The conditions on one side's columns alone (Spark's preJoinFilter), per side. */
  pre: [(row: Row) => boolean, (row: Row) => boolean];
  /** The rest of the condition, over a left and a right row. */
  post: (left: Row, right: Row) => boolean;
  /** The output row of a pair (null: the side is missing). */
  output: (left: Row | null, right: Row | null) => Row;
  expiry: [((row: Row) => number | null) | undefined, ((row: Row) => number | null) | undefined];
  schemas: [Schema, Schema];
}

const always = (): boolean => true;

function columnsOf(e: Expr): string[] {
  const out: string[] = [];
  walkExpr(e, (x) => {
    if (x.op === 'col') out.push(x.name);
  });
  return out;
}

/**
 * Spark's JoinConditionSplitPredicates: a conjunct on the left columns alone (or on none) is the
 * left's pre-join filter, one on the right's alone the right's; the rest is checked on pairs.
 */
export function splitJoinCondition(op: { residual?: Expr | undefined; left: { schema: Schema }; right: { schema: Schema } }): [Expr[], Expr[], Expr[]] {
  const leftNames = new Set(op.left.schema.map((f) => f.name));
  const rightNames = new Set(op.right.schema.map((f) => f.name));
  const parts: [Expr[], Expr[], Expr[]] = [[], [], []];
  for (const c of op.residual === undefined ? [] : conjuncts(op.residual)) {
    const cols = columnsOf(c);
    if (cols.every((n) => leftNames.has(n))) parts[0].push(c);
    else if (cols.every((n) => rightNames.has(n))) parts[1].push(c);
    else parts[2].push(c);
  }
  return parts;
}

function compileJoin(op: StreamJoinOp, udfs: UdfRegistry): CompiledJoin {
  const parts = splitJoinCondition(op);
  const predicate = (exprs: Expr[], schema: Schema): ((row: Row) => boolean) => {
    if (exprs.length === 0) return always;
    const fns = exprs.map((e) => compileExpr(e, schema, udfs));
    return (row) => fns.every((f) => f(row) === true);
  };
  const both = [...op.left.schema, ...op.right.schema];
  const pairs = predicate(parts[2], both);
  // The pair's columns in one row, reused (the condition reads it, and keeps nothing of it).
  const pairRow: Row = {};
  const leftNames = op.left.schema.map((f) => f.name);
  const rightNames = op.right.schema.map((f) => f.name);
  return {
    pre: [predicate(parts[0], op.left.schema), predicate(parts[1], op.right.schema)],
    post:
      parts[2].length === 0
        ? always
        : (l, r) => {
            for (const n of leftNames) pairRow[n] = l[n];
            for (const n of rightNames) pairRow[n] = r[n];
            return pairs(pairRow);
          },
    output: outputOf(op),
    expiry: [joinExpiry(op, 0), joinExpiry(op, 1)],
    schemas: [op.left.schema, op.right.schema],
  };
}

function outputOf(op: StreamJoinOp): (left: Row | null, right: Row | null) => Row {
  const names = (schema: Schema, skip: readonly string[]): string[] => schema.map((f) => f.name).filter((n) => !skip.includes(n));
  const leftOthers = names(op.left.schema, op.using ? op.leftKeys : []);
  const rightOthers = names(op.right.schema, op.using ? op.rightKeys : []);
  const keys = op.using ? op.leftKeys.map((k, i) => [k, op.rightKeys[i] as string] as const) : [];
  const semi = op.how === 'left_semi';
  return (l, r) => {
    const out: Row = {};
    for (const [lk, rk] of keys) {
      // A full outer join's key is whichever side's is there (they are equal when both are).
      out[lk] = op.how === 'right_outer' ? (r as Row)[rk] : l !== null ? l[lk] : (r as Row)[rk];
    }
    for (const n of leftOthers) out[n] = l === null ? null : l[n];
    if (semi) return out;
    for (const n of rightOthers) out[n] = r === null ? null : r[n];
    return out;
  };
}

/** A side's rows of one key, as the shard holds them and as this batch changes them. */
interface KeyState {
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

interface JoinCounters {
  updated: number;
  removed: number;
  rowDelta: number;
}

const EMPTY = new Uint8Array(0);
const NO_ROWS: readonly Stored[] = [];

function keyStateOf(side: JoinSide, keyGroup: number, key: Uint8Array, prior: Uint8Array | undefined, schema: Schema): KeyState {
  if (prior === undefined) return { side, keyGroup, key, prior: null, priorIndexTime: null, rows: [], dirty: false };
  const { indexTime, rows } = decodeJoinValue(prior, schema);
  return { side, keyGroup, key, prior, priorIndexTime: indexTime, rows, dirty: false };
}

const outerSide = (op: StreamJoinOp, side: JoinSide): boolean => op.how === 'full_outer' || (side === 0 ? op.how === 'left_outer' : op.how === 'right_outer');

/** Keys by the time of their index entry, least first (a binary heap; an entry whose key has moved on is skipped when it comes up). */
class ExpiryHeap {
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
const DECODED_BYTES_PER_BYTE = 4;

/**
 * The shard's join cache, filled from the shard when it has none: a shard holding nothing gives a
 * complete empty one; otherwise its data is read once, while it fits the cache's budget (past it,
 * the cache keeps what it has read and the rest is read per key).
 */
async function joinCacheOf(cache: StateCache, store: ShardStore, schemas: [Schema, Schema]): Promise<JoinStateCache> {
  if (cache.join !== undefined) return cache.join;
  const join: JoinStateCache = { states: [new Map(), new Map()], complete: true, bytes: 0, expiring: new ExpiryHeap(), stale: [] };
  if (store.numRows > 0) {
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
type BatchStates = [Map<string, KeyState>, Map<string, KeyState>];

/**
 * Runs the batch's records of this shard through the join (steps 1-3 above) and returns the rows
 * it emits; the state changes go into `changes`, and into the shard's cache (a failed task drops
 * the cache whole).
 */
export async function symmetricHashJoin(
  task: StateTask,
  op: StreamJoinOp,
  store: ShardStore,
  cache: StateCache,
  watermark: number | undefined,
  changes: ShardChange[],
  c: JoinCounters,
  udfs: UdfRegistry,
): Promise<Row[]> {
  const j = compileJoin(op, udfs);
  const known = await joinCacheOf(cache, store, j.schemas);
  const records: [JoinRecord[], JoinRecord[]] = [[], []];
  for (const block of task.blocks) for (const rec of decodeBlock<JoinRecord>(block.data)) records[rec[3]].push(rec);

  // Every key of the batch, both sides: from the cache, the rest in one read.
  const states: BatchStates = [new Map(), new Map()];
  const ids: [string[], string[]] = [[], []];
  const seen = new Set<string>();
  // A key neither side holds yet gets its state when a row is stored under it.
  const wanted: KeyState[] = [];
  for (const side of [0, 1] as const) {
    for (const rec of records[side]) {
      if (rec[1] === null) {
        ids[side].push('');
        continue;
      }
      const id = stateId(rec[0], rec[1]);
      ids[side].push(id);
      if (seen.has(id)) continue;
      seen.add(id);
      for (const s of [0, 1] as const) {
        const st = known.states[s].get(id);
        if (st !== undefined) states[s].set(id, st);
        else if (!known.complete) wanted.push(keyStateOf(s, rec[0], sideKey(s, rec[1]), undefined, j.schemas[s]));
      }
    }
  }
  if (wanted.length > 0) {
    const read = await store.getMany(wanted.map((st) => dataKey(st.keyGroup, st.key)));
    wanted.forEach((st, i) => {
      const prior = read[i];
      if (prior === undefined) return;
      const id = stateId(st.keyGroup, st.key.subarray(1));
      const loaded = keyStateOf(st.side, st.keyGroup, st.key, prior, j.schemas[st.side]);
      states[st.side].set(id, loaded);
      known.states[st.side].set(id, loaded);
      known.bytes += prior.length * DECODED_BYTES_PER_BYTE;
    });
  }

  const out: Row[] = [];
  /** The keys given a row the watermark has already passed (evicted at the end of the batch). */
  const expiredNow = new Set<KeyState>();
  const pair = (side: JoinSide, row: Row, other: Row | null): Row => (side === 0 ? j.output(row, other) : j.output(other, row));
  for (const side of [0, 1] as const) {
    const other: JoinSide = side === 0 ? 1 : 0;
    const expiry = j.expiry[side];
    const outer = outerSide(op, side);
    const sideIds = ids[side];
    records[side].forEach((rec, n) => {
      const row = rec[2];
      if (rec[1] === null || !j.pre[side](row)) {
        if (outer) out.push(pair(side, row, null));
        return;
      }
      const id = sideIds[n] as string;
      const theirs = states[other].get(id);
      let matched = false;
      for (const stored of theirs?.rows ?? NO_ROWS) {
        // A left semi join emits a left row once: the right side skips the ones that matched.
        if (op.how === 'left_semi' && side === 1 && stored[1]) continue;
        if (!(side === 0 ? j.post(row, stored[0]) : j.post(stored[0], row))) continue;
        if (!stored[1]) {
          stored[1] = true;
          (theirs as KeyState).dirty = true;
        }
        if (op.how !== 'left_semi') out.push(pair(side, row, stored[0]));
        else if (side === 1) out.push(j.output(stored[0], null));
        else if (!matched) out.push(j.output(row, null));
        matched = true;
      }
      if (op.how === 'left_semi' && side === 0 && matched) return;
      // A row the watermark has already passed (Spark's rule since SPARK-49829): a left one is
      // stored all the same, as this batch's right rows have yet to meet it; a right one only when
      // it is an unmatched outer row. Either is evicted at the end of this batch, an unmatched
      // outer one emitted with nulls then.
      const t = expiry?.(row) ?? null;
      const passed = watermark !== undefined && t !== null && t <= watermark;
      if (passed && side === 1 && (matched || !outer)) return;
      let mine = states[side].get(id);
      if (mine === undefined) {
        mine = keyStateOf(side, rec[0], sideKey(side, rec[1] as Uint8Array), undefined, j.schemas[side]);
        states[side].set(id, mine);
      }
      mine.rows.push([row, matched]);
      mine.dirty = true;
      if (passed) expiredNow.add(mine);
      c.updated += 1;
      c.rowDelta += 1;
    });
  }

  const evicts = watermark !== undefined && (j.expiry[0] !== undefined || j.expiry[1] !== undefined);
  const stale = [...known.stale, ...(evicts ? await evictJoinState(op, j, store, watermark, known, states, expiredNow, c, out) : [])];
  known.stale = [];
  const written = writeStates(j, states, known, changes, stale.length > 0);
  for (const ik of stale) if (!written.has(keyString(ik))) changes.push({ key: ik, value: null, prior: EMPTY });
  // Over its budget the cache starts again empty, not complete: keys are then read as they come.
  if (known.bytes > cache.budgetBytes) cache.join = { states: [new Map(), new Map()], complete: false, bytes: 0, expiring: undefined, stale: [] };
  return out;
}

/**
 * The batch's changed keys into `changes` and the cache: values, and index entries at their rows'
 * least expiry. With `track`, returns the index entries it writes (keyString), which a stale one
 * must not undo.
 */
function writeStates(j: CompiledJoin, states: BatchStates, known: JoinStateCache, changes: ShardChange[], track: boolean): Set<string> {
  const written = new Set<string>();
  for (const side of [0, 1] as const) {
    const expiry = j.expiry[side];
    for (const [id, s] of states[side]) {
      if (!s.dirty) continue;
      let indexTime: number | null = null;
      if (expiry !== undefined) {
        for (const [row] of s.rows) {
          const t = expiry(row);
          if (t !== null && (indexTime === null || t < indexTime)) indexTime = t;
        }
      }
      const value = s.rows.length === 0 ? null : encodeJoinValue(indexTime, s.rows, j.schemas[side]);
      if (value !== null || s.prior !== null) changes.push({ key: dataKey(s.keyGroup, s.key), value, prior: s.prior });
      if (s.priorIndexTime !== null && (value === null || s.priorIndexTime !== indexTime)) {
        changes.push({ key: indexKey(s.priorIndexTime, s.keyGroup, s.key), value: null, prior: EMPTY });
      }
      if (indexTime !== null && value !== null && indexTime !== s.priorIndexTime) {
        const ik = indexKey(indexTime, s.keyGroup, s.key);
        changes.push({ key: ik, value: EMPTY, prior: null });
        if (track) written.add(keyString(ik));
        known.expiring?.push(indexTime, s);
      }
      known.bytes += ((value?.length ?? 0) - (s.prior?.length ?? 0)) * DECODED_BYTES_PER_BYTE;
      s.dirty = false;
      s.priorIndexTime = value === null ? null : indexTime;
      s.prior = value;
      if (value === null) known.states[side].delete(id);
      else known.states[side].set(id, s);
    }
  }
  return written;
}

/**
 * Step 3: the rows of either side whose index time is at or below the watermark are removed, and
 * an outer side's unmatched ones emitted with nulls. A complete cache knows the keys in order of
 * expiry; otherwise they are found through the shard's time index (either way the cost is what
 * expires, not the whole state). Returns the index entries to delete that name no key's earliest
 * expiry (left by an earlier Sluice, or by data that is gone).
 */
async function evictJoinState(
  op: StreamJoinOp,
  j: CompiledJoin,
  store: ShardStore,
  watermark: number,
  known: JoinStateCache,
  states: BatchStates,
  expiredNow: Iterable<KeyState>,
  c: JoinCounters,
  out: Row[],
): Promise<Uint8Array[]> {
  const removed: [Row[], Row[]] = [[], []];
  const expire = (s: KeyState): boolean => {
    const expiry = j.expiry[s.side];
    if (expiry === undefined) return false;
    const kept: Stored[] = [];
    for (const stored of s.rows) {
      const t = expiry(stored[0]);
      if (t === null || t > watermark) kept.push(stored);
      else {
        if (!stored[1] && outerSide(op, s.side)) removed[s.side].push(stored[0]);
        c.removed += 1;
        c.rowDelta -= 1;
      }
    }
    if (kept.length === s.rows.length) return false;
    s.rows = kept;
    s.dirty = true;
    states[s.side].set(stateId(s.keyGroup, s.key.subarray(1)), s);
    return true;
  };
  // Rows this batch stored past the watermark, whose index entries are not written yet.
  for (const s of expiredNow) expire(s);
  const stale: Uint8Array[] = [];
  if (known.expiring !== undefined) {
    // An entry whose key has a later index time now (or no rows) was replaced when that changed;
    // a key that somehow expires nothing keeps its entry.
    const keep: Array<[number, KeyState]> = [];
    known.expiring.popUpTo(Math.floor(watermark), (s, time) => {
      if (s.priorIndexTime === time && !expire(s)) keep.push([time, s]);
    });
    for (const [time, s] of keep) known.expiring.push(time, s);
  } else {
    const [gte, lt] = indexRangeUpTo(Math.floor(watermark));
    const index = await store.range(gte, lt);
    const unknown: Array<{ ik: Uint8Array; side: JoinSide; kg: number; key: Uint8Array; id: string }> = [];
    const found: Array<{ ik: Uint8Array; timeMs: number; state: KeyState | undefined }> = index.map(([ik]) => {
      const { timeMs, kg, key } = decodeIndexKey(ik);
      const side = (key[0] ?? 0) as JoinSide;
      const id = stateId(kg, key.subarray(1));
      const state = states[side].get(id) ?? known.states[side].get(id);
      if (state === undefined) unknown.push({ ik, side, kg, key: new Uint8Array(key), id });
      return { ik, timeMs, state };
    });
    const read = await store.getMany(unknown.map((u) => dataKey(u.kg, u.key)));
    const loaded = new Map<Uint8Array, KeyState>();
    unknown.forEach((u, i) => {
      const value = read[i];
      if (value === undefined) return;
      const state = keyStateOf(u.side, u.kg, u.key, value, j.schemas[u.side]);
      known.states[u.side].set(u.id, state);
      known.bytes += value.length * DECODED_BYTES_PER_BYTE;
      loaded.set(u.ik, state);
    });
    for (const { ik, timeMs, state } of found) {
      const s = state ?? loaded.get(ik);
      if (s === undefined || s.priorIndexTime !== timeMs) stale.push(new Uint8Array(ik));
      else expire(s);
    }
  }
  for (const row of removed[0]) out.push(j.output(row, null));
  for (const row of removed[1]) out.push(j.output(null, row));
  return stale;
}
