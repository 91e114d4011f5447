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
import { dataKey, decodeIndexKey, indexKey } from '@sluice/state';
import { compileExpr } from '../../expressions/compileExpr.js';
import type { UdfRegistry } from '../../expressions/udfs.js';
import type { Expr } from '../../expressions/types.js';
import type { Row, Schema } from '../../schema/types.js';
import type { StateContext } from '../stateContext.js';
import type { StateWriter } from '../stateWriter.js';
import { keyString } from '../stateCache.js';
import { joinExpiry, splitJoinCondition, type JoinSide, type StreamJoinOp } from './plan.js';
import { encodeJoinValue, sideKey, stateId, type Stored } from './codec.js';
import { DECODED_BYTES_PER_BYTE, joinCacheOf, keyStateOf, type JoinStateCache, type KeyState } from './cache.js';
import { decodeJoinBlock, type JoinRecord } from './shuffle.js';

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

const NO_ROWS: readonly Stored[] = [];

const outerSide = (op: StreamJoinOp, side: JoinSide): boolean => op.how === 'full_outer' || (side === 0 ? op.how === 'left_outer' : op.how === 'right_outer');

type BatchStates = [Map<string, KeyState>, Map<string, KeyState>];

/**
 * Runs the batch's records of this shard through the join (steps 1-3 above) and returns the rows
 * it emits; the state changes go to the writer, and into the shard's cache (a failed task drops
 * the cache whole).
 */
export async function symmetricHashJoin(ctx: StateContext, op: StreamJoinOp): Promise<Row[]> {
  const { task, store, cache, watermark, counters: c, writer } = ctx;
  const j = compileJoin(op, ctx.udfs);
  const known = await joinCacheOf(cache, store, j.schemas);
  const records: [JoinRecord[], JoinRecord[]] = [[], []];
  for (const block of task.blocks) decodeJoinBlock(block.data, j.schemas, records);

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
  const stale = [...known.stale, ...(evicts ? await evictJoinState(ctx, op, j, known, states, expiredNow, out) : [])];
  known.stale = [];
  const written = writeStates(j, states, known, writer, stale.length > 0);
  for (const ik of stale) if (!written.has(keyString(ik))) writer.removeIndex(ik);
  return out;
}

/**
 * The batch's changed keys to the writer and the cache: values, and index entries at their rows'
 * least expiry. With `track`, returns the index entries it writes (keyString), which a stale one
 * must not undo.
 */
function writeStates(j: CompiledJoin, states: BatchStates, known: JoinStateCache, writer: StateWriter, track: boolean): Set<string> {
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
      if (value !== null || s.prior !== null) {
        const dk = dataKey(s.keyGroup, s.key);
        // The key's state records the value the shard holds (read, or kept decoded since).
        writer.cached(dk, s.prior);
        if (value === null) writer.delete(dk);
        else writer.put(dk, value);
      }
      if (s.priorIndexTime !== null && (value === null || s.priorIndexTime !== indexTime)) writer.removeIndex(indexKey(s.priorIndexTime, s.keyGroup, s.key));
      if (indexTime !== null && value !== null && indexTime !== s.priorIndexTime) {
        const ik = indexKey(indexTime, s.keyGroup, s.key);
        writer.addIndex(ik);
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
  ctx: StateContext,
  op: StreamJoinOp,
  j: CompiledJoin,
  known: JoinStateCache,
  states: BatchStates,
  expiredNow: Iterable<KeyState>,
  out: Row[],
): Promise<Uint8Array[]> {
  const watermark = ctx.watermark as number;
  const c = ctx.counters;
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
    await ctx.forEachExpired(async (index) => {
      const unknown: Array<{ ik: Uint8Array; side: JoinSide; kg: number; key: Uint8Array; id: string }> = [];
      const found: Array<{ ik: Uint8Array; timeMs: number; state: KeyState | undefined }> = index.map((ik) => {
        const { timeMs, kg, key } = decodeIndexKey(ik);
        const side = (key[0] ?? 0) as JoinSide;
        const id = stateId(kg, key.subarray(1));
        const state = states[side].get(id) ?? known.states[side].get(id);
        if (state === undefined) unknown.push({ ik, side, kg, key: new Uint8Array(key), id });
        return { ik, timeMs, state };
      });
      const read = await ctx.store.getMany(unknown.map((u) => dataKey(u.kg, u.key)));
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
    });
  }
  for (const row of removed[0]) out.push(j.output(row, null));
  for (const row of removed[1]) out.push(j.output(null, row));
  return stale;
}
