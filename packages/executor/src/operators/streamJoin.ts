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
 * A row that would expire at once is not stored, and a row with a null key matches nothing (an
 * outer side emits it with nulls at once). Late rows (the side's event time at or below the late
 * watermark) were dropped by the map tasks.
 *
 * State, per side and key: the data key is [side u8][key bytes] under the key's key group, and its
 * value (encodeJoinValue) holds the side's rows of the key with their matched flags and the time
 * of its eviction index entry: the least index time of its rows (joinExpiry). numRows counts rows.
 */
import { dataKey, dataKeyOf, decodeDataKey, decodeIndexKey, indexKey, indexRangeUpTo, type ShardChange, type ShardStore } from '@sluice/state';
import { compileExpr } from '../expressions/compileExpr.js';
import { walkExpr } from '../expressions/exprTree.js';
import { conjuncts, stateValueWatermark } from '../expressions/joinBounds.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { Expr } from '../expressions/types.js';
import { decodeBlock, type JoinRecord } from '../shuffle/shuffleCodec.js';
import type { StateTask } from '../task/messages.js';
import { plainPackr as packr } from '../task/packers.js';
import type { Row, Schema } from '../schema/types.js';
import { keyString } from './stateCache.js';
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

/** The constant the condition's bound on a side's event time adds to the other side's watermark, if it is one. */
function valueEvictionOffset(op: StreamJoinOp, side: JoinSide): number | undefined {
  if (op.residual === undefined) return undefined;
  const lower = (names: Iterable<string>): Set<string> => new Set([...names].map((n) => n.toLowerCase()));
  const sides = { side: lower(sideOf(op, side).schema.map((f) => f.name)), watermarked: lower(sideOf(op, side === 0 ? 1 : 0).watermarked) };
  const at0 = stateValueWatermark(op.residual, sides, 0);
  const at1 = stateValueWatermark(op.residual, sides, 1_000_000_000);
  return at0 !== undefined && at1 === at0 + 1_000_000_000 ? at0 : undefined;
}

// ---- state values ------------------------------------------------------------------------------

/** A stored row and whether it has matched a row of the other side. */
type Stored = [row: Row, matched: boolean];

/** [index time or null, rows]: msgpack (plainPackr), rows in engine form. */
export function encodeJoinValue(indexTime: number | null, rows: readonly Stored[]): Uint8Array {
  return packr.pack([indexTime, rows]);
}

export function decodeJoinValue(value: Uint8Array): { indexTime: number | null; rows: Stored[] } {
  const [indexTime, rows] = packr.unpack(value) as [number | null, Stored[]];
  return { indexTime, rows };
}

/**
 * The repartition hook of an operator that keeps several rows in one state value (by its progress
 * name): a join's values count their rows. Empty for the others, whose values are one row each.
 */
export function rowsInOf(operatorName: string | undefined): { rowsIn?: (value: Uint8Array) => number } {
  return operatorName === 'symmetricHashJoin' ? { rowsIn: (value) => decodeJoinValue(value).rows.length } : {};
}

/** The state key of a side's rows of one join key (under the key's key group). */
export function joinStateKey(keyGroup: number, side: JoinSide, keyBytes: Uint8Array): Uint8Array {
  const key = new Uint8Array(keyBytes.length + 1);
  key[0] = side;
  key.set(keyBytes, 1);
  return dataKey(keyGroup, key);
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
}

const always = (): boolean => true;

function columnsOf(e: Expr): string[] {
  const out: string[] = [];
  walkExpr(e, (x) => {
    if (x.op === 'col') out.push(x.name);
  });
  return out;
}

function compileJoin(op: StreamJoinOp, udfs: UdfRegistry): CompiledJoin {
  const leftNames = new Set(op.left.schema.map((f) => f.name));
  const rightNames = new Set(op.right.schema.map((f) => f.name));
  const both = [...op.left.schema, ...op.right.schema];
  // Spark's JoinConditionSplitPredicates: a conjunct on the left columns alone (or on none) is the
  // left's pre-join filter, one on the right's alone the right's; the rest is checked on pairs.
  const parts: [Expr[], Expr[], Expr[]] = [[], [], []];
  for (const c of op.residual === undefined ? [] : conjuncts(op.residual)) {
    const cols = columnsOf(c);
    if (cols.every((n) => leftNames.has(n))) parts[0].push(c);
    else if (cols.every((n) => rightNames.has(n))) parts[1].push(c);
    else parts[2].push(c);
  }
  const predicate = (exprs: Expr[], schema: Schema): ((row: Row) => boolean) => {
    if (exprs.length === 0) return always;
    const fns = exprs.map((e) => compileExpr(e, schema, udfs));
    return (row) => fns.every((f) => f(row) === true);
  };
  const pairs = predicate(parts[2], both);
  return {
    pre: [predicate(parts[0], op.left.schema), predicate(parts[1], op.right.schema)],
    post: parts[2].length === 0 ? always : (l, r) => pairs({ ...l, ...r }),
    output: outputOf(op),
    expiry: [joinExpiry(op, 0), joinExpiry(op, 1)],
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

/** A side's rows of one key, as read and as this batch leaves them. */
interface KeyState {
  dataKey: Uint8Array;
  /** The stored value (null: none), and the time of its index entry. */
  prior: Uint8Array | null;
  priorIndexTime: number | null;
  rows: Stored[];
  dirty: boolean;
}

interface JoinCounters {
  updated: number;
  removed: number;
  rowDelta: number;
}

const EMPTY = new Uint8Array(0);

function keyStateOf(dk: Uint8Array, prior: Uint8Array | undefined): KeyState {
  if (prior === undefined) return { dataKey: dk, prior: null, priorIndexTime: null, rows: [], dirty: false };
  const { indexTime, rows } = decodeJoinValue(prior);
  return { dataKey: dk, prior, priorIndexTime: indexTime, rows, dirty: false };
}

const outerSide = (op: StreamJoinOp, side: JoinSide): boolean =>
  op.how === 'full_outer' || (side === 0 ? op.how === 'left_outer' : op.how === 'right_outer');

/**
 * Runs the batch's records of this shard through the join (steps 1-3 above) and returns the rows
 * it emits; the state changes go into `changes`.
 */
export async function symmetricHashJoin(
  task: StateTask,
  op: StreamJoinOp,
  store: ShardStore,
  watermark: number | undefined,
  changes: ShardChange[],
  c: JoinCounters,
  udfs: UdfRegistry,
): Promise<Row[]> {
  const j = compileJoin(op, udfs);
  const records: [JoinRecord[], JoinRecord[]] = [[], []];
  for (const block of task.blocks) for (const rec of decodeBlock<JoinRecord>(block.data)) records[rec[3]].push(rec);

  // The state of every key the batch's records have, both sides, in one read.
  const states = new Map<string, KeyState>();
  const wanted: Uint8Array[] = [];
  for (const side of [0, 1] as const) {
    for (const rec of records[side]) {
      if (rec[1] === null) continue;
      for (const s of [0, 1] as const) {
        const dk = joinStateKey(rec[0], s, rec[1]);
        const k = keyString(dk);
        if (states.has(k)) continue;
        states.set(k, keyStateOf(dk, undefined));
        wanted.push(dk);
      }
    }
  }
  const read = await store.getMany(wanted);
  wanted.forEach((dk, i) => {
    const prior = read[i];
    if (prior !== undefined) states.set(keyString(dk), keyStateOf(dk, prior));
  });

  const out: Row[] = [];
  const pair = (side: JoinSide, row: Row, other: Row | null): Row => (side === 0 ? j.output(row, other) : j.output(other, row));
  for (const side of [0, 1] as const) {
    const other: JoinSide = side === 0 ? 1 : 0;
    const expiry = j.expiry[side];
    const outer = outerSide(op, side);
    for (const [kg, keyBytes, row] of records[side]) {
      if (keyBytes === null || !j.pre[side](row)) {
        if (outer) out.push(pair(side, row, null));
        continue;
      }
      const theirs = states.get(keyString(joinStateKey(kg, other, keyBytes))) as KeyState;
      let matched = false;
      for (const stored of theirs.rows) {
        // A left semi join emits a left row once: the right side skips the ones that matched.
        if (op.how === 'left_semi' && side === 1 && stored[1]) continue;
        if (!(side === 0 ? j.post(row, stored[0]) : j.post(stored[0], row))) continue;
        if (!stored[1]) {
          stored[1] = true;
          theirs.dirty = true;
        }
        if (op.how !== 'left_semi') out.push(pair(side, row, stored[0]));
        else if (side === 1) out.push(j.output(stored[0], null));
        else if (!matched) out.push(j.output(row, null));
        matched = true;
      }
      if (op.how === 'left_semi' && side === 0 && matched) continue;
      // A row the watermark has already passed is not stored (an unmatched outer one is lost, as in Spark).
      const t = expiry?.(row) ?? null;
      if (watermark !== undefined && t !== null && t <= watermark) continue;
      const mine = states.get(keyString(joinStateKey(kg, side, keyBytes))) as KeyState;
      mine.rows.push([row, matched]);
      mine.dirty = true;
      c.updated += 1;
      c.rowDelta += 1;
    }
  }

  const evicts = watermark !== undefined && (j.expiry[0] !== undefined || j.expiry[1] !== undefined);
  const stale = evicts ? await evictJoinState(op, j, store, watermark, states, c, out) : new Map<string, Uint8Array>();

  for (const s of states.values()) {
    if (!s.dirty) continue;
    const side = (decodeDataKey(s.dataKey).key[0] ?? 0) as JoinSide;
    const expiry = j.expiry[side];
    let indexTime: number | null = null;
    if (expiry !== undefined) {
      for (const [row] of s.rows) {
        const t = expiry(row);
        if (t !== null && (indexTime === null || t < indexTime)) indexTime = t;
      }
    }
    const { kg, key } = decodeDataKey(s.dataKey);
    if (s.rows.length === 0) {
      if (s.prior !== null) changes.push({ key: s.dataKey, value: null, prior: s.prior });
    } else changes.push({ key: s.dataKey, value: encodeJoinValue(indexTime, s.rows), prior: s.prior });
    if (s.priorIndexTime !== null && (s.rows.length === 0 || s.priorIndexTime !== indexTime)) {
      changes.push({ key: indexKey(s.priorIndexTime, kg, key), value: null, prior: EMPTY });
    }
    if (indexTime !== null && s.rows.length > 0 && indexTime !== s.priorIndexTime) {
      const ik = indexKey(indexTime, kg, key);
      if (!stale.delete(keyString(ik))) changes.push({ key: ik, value: EMPTY, prior: null });
    }
  }
  for (const ik of stale.values()) changes.push({ key: ik, value: null, prior: EMPTY });
  return out;
}

/**
 * Step 3: the rows of either side whose index time is at or below the watermark, found through
 * the shard's time index (the cost is what expires, not the whole state), are removed; an outer
 * side's unmatched ones are emitted with nulls. An index entry that no longer names its key's
 * earliest expiry (the key's rows changed since) is removed without reading further.
 */
async function evictJoinState(
  op: StreamJoinOp,
  j: CompiledJoin,
  store: ShardStore,
  watermark: number,
  states: Map<string, KeyState>,
  c: JoinCounters,
  out: Row[],
): Promise<Map<string, Uint8Array>> {
  const [gte, lt] = indexRangeUpTo(Math.floor(watermark));
  const index = await store.range(gte, lt);
  const stale = new Map<string, Uint8Array>();
  if (index.length === 0) return stale;
  const unknown = new Map<string, Uint8Array>();
  for (const [ik] of index) {
    const dk = dataKeyOf(ik);
    const k = keyString(dk);
    if (!states.has(k)) unknown.set(k, dk);
  }
  const read = await store.getMany([...unknown.values()]);
  [...unknown].forEach(([k, dk], i) => states.set(k, keyStateOf(dk, read[i])));
  const removed: [Row[], Row[]] = [[], []];
  for (const [ik] of index) {
    const s = states.get(keyString(dataKeyOf(ik))) as KeyState;
    if (s.priorIndexTime !== decodeIndexKey(ik).timeMs) {
      // Not the key's entry (its rows are gone, or expire later): it goes, unless the batch writes it again.
      stale.set(keyString(ik), new Uint8Array(ik));
      continue;
    }
    const side = (decodeDataKey(s.dataKey).key[0] ?? 0) as JoinSide;
    const expiry = j.expiry[side];
    if (expiry === undefined) continue;
    const kept: Stored[] = [];
    for (const stored of s.rows) {
      const t = expiry(stored[0]);
      if (t === null || t > watermark) kept.push(stored);
      else {
        if (!stored[1] && outerSide(op, side)) removed[side].push(stored[0]);
        c.removed += 1;
        c.rowDelta -= 1;
      }
    }
    if (kept.length === s.rows.length) continue;
    s.rows = kept;
    s.dirty = true;
  }
  for (const row of removed[0]) out.push(j.output(row, null));
  for (const row of removed[1]) out.push(j.output(null, row));
  return stale;
}
