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
 * value (codec.ts) holds the side's rows of the key with their matched flags and the time of its
 * eviction index entry: the least index time of its rows (joinExpiry). numRows counts rows. The
 * shard's worker keeps the state decoded between batches as columns (JoinStateCache, cache.ts),
 * within the state cache's budget; rows become objects only for what the join emits.
 */
import { dataKey, decodeIndexKey, indexKey } from '@sluice/state';
import { compileExpr } from '../../expressions/compileExpr.js';
import type { UdfRegistry } from '../../expressions/udfs.js';
import type { Expr } from '../../expressions/types.js';
import type { Row, Schema } from '../../schema/types.js';
import type { StateContext } from '../stateContext.js';
import type { StateWriter } from '../stateWriter.js';
import { keyString } from '../stateCache.js';
import { eventTimeOf, joinExpiryColumn, splitJoinCondition, type JoinSide, type StreamJoinOp } from './plan.js';
import { encodeJoinRows, sideKey } from './codec.js';
import { cachedBytes, ExpiryHeap, joinCacheOf, type JoinStateCache, type SideTable } from './cache.js';
import { readJoinChunks, type JoinChunk } from './shuffle.js';
import { rowAtOf, valueAt, type Vector } from '../../columns/vectors.js';
import { CompileCache } from '../../compileCache.js';

// ---- the join ----------------------------------------------------------------------------------

/** The join compiled for a shard's task. */
interface CompiledJoin {
  /** The conditions on one side's columns alone (Spark's preJoinFilter), per side. */
  pre: [(row: Row) => boolean, (row: Row) => boolean];
  /** The rest of the condition, over a batch's row of `side` and a stored row of the other side; null when there is none. */
  post: PairCondition | null;
  /** The output row of a pair (null: the side is missing). */
  output: (left: Row | null, right: Row | null) => Row;
  /** Where a side's row expiry is read: its column's number in the side's schema (-1: its rows never expire) and the offset taken from its time. */
  expiry: [{ column: number; offset: number }, { column: number; offset: number }];
  schemas: [Schema, Schema];
  /** A row of a side out of a chunk's vectors. */
  rowAt: [RowAt, RowAt];
}

type RowAt = (vectors: readonly Vector[], i: number) => Row;

const always = (): boolean => true;

const compiledJoins = new CompileCache<CompiledJoin>();

/** The condition on a pair: a batch's row of one side, and row r of the other side's stored rows. */
class PairCondition {
  /** The pair's columns in one row, reused (the condition reads it, and keeps nothing of it). */
  private readonly pair: Row = {};
  private readonly names: [string[], string[]];

  constructor(
    private readonly test: (row: Row) => boolean,
    schemas: [Schema, Schema],
  ) {
    this.names = [schemas[0].map((f) => f.name), schemas[1].map((f) => f.name)];
  }

  /** Whether it holds for row i of a chunk of `side` and row r of the other side's stored rows. */
  holds(side: JoinSide, vectors: readonly Vector[], i: number, stored: SideTable, r: number): boolean {
    // Left columns first, then right ones (a name on both sides reads the right's).
    if (side === 0) this.fromChunk(0, vectors, i);
    this.fromStored(stored, r);
    if (side === 1) this.fromChunk(1, vectors, i);
    return this.test(this.pair);
  }

  private fromChunk(side: JoinSide, vectors: readonly Vector[], i: number): void {
    const names = this.names[side];
    for (let k = 0; k < names.length; k++) this.pair[names[k]!] = valueAt(vectors[k]!, i);
  }

  private fromStored(stored: SideTable, r: number): void {
    const names = this.names[stored.side];
    for (let k = 0; k < names.length; k++) this.pair[names[k]!] = stored.arena.value(k, r);
  }
}

function compileJoin(op: StreamJoinOp, udfs: UdfRegistry): CompiledJoin {
  const parts = splitJoinCondition(op);
  const predicate = (exprs: Expr[], schema: Schema): ((row: Row) => boolean) => {
    if (exprs.length === 0) return always;
    const fns = exprs.map((e) => compileExpr(e, schema, udfs));
    return (row) => fns.every((f) => f(row) === true);
  };
  const schemas: [Schema, Schema] = [op.left.schema, op.right.schema];
  const expiry = (side: JoinSide): { column: number; offset: number } => {
    const e = joinExpiryColumn(op, side);
    return { column: e === undefined ? -1 : schemas[side].findIndex((f) => f.name === e.column), offset: e?.offset ?? 0 };
  };
  return {
    pre: [predicate(parts[0], op.left.schema), predicate(parts[1], op.right.schema)],
    post: parts[2].length === 0 ? null : new PairCondition(predicate(parts[2], [...op.left.schema, ...op.right.schema]), schemas),
    output: outputOf(op),
    expiry: [expiry(0), expiry(1)],
    schemas,
    rowAt: [rowAtOf(schemas[0]), rowAtOf(schemas[1])],
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

const outerSide = (op: StreamJoinOp, side: JoinSide): boolean => op.how === 'full_outer' || (side === 0 ? op.how === 'left_outer' : op.how === 'right_outer');

/**
 * Runs the batch's records of this shard through the join (steps 1-3 above) and returns the rows
 * it emits; the state changes go to the writer, and into the shard's cache (a failed task drops
 * the cache whole).
 */
export async function symmetricHashJoin(ctx: StateContext, op: StreamJoinOp): Promise<Row[]> {
  const { task, store, cache, watermark, counters: c, writer } = ctx;
  // Compiled once per worker: a closure made per task and called per row costs a recompile of the loop every batch (operators.md).
  const j = compiledJoins.of(JSON.stringify(op), () => compileJoin(op, ctx.udfs));
  const known = await joinCacheOf(cache, store, j.schemas, [joinExpiryColumn(op, 0), joinExpiryColumn(op, 1)]);
  const stamp = ++known.batches;
  const chunks: JoinChunk[] = [];
  for (const block of task.blocks) readJoinChunks(block.data, j.schemas, chunks);
  // A cache that does not hold every key reads the batch's keys it lacks, both sides, in one read.
  if (!known.complete) await readKeys(ctx, known, chunks);

  const out: Row[] = [];
  /** The keys given a row the watermark has already passed (evicted at the end of the batch), per side. */
  const expiredNow: [number[], number[]] = [[], []];
  for (const side of [0, 1] as const) for (const chunk of chunks) if (chunk.side === side) joinChunk(op, j, known, chunk, watermark, stamp, expiredNow, out, c);

  const evicts = watermark !== undefined && (j.expiry[0].column >= 0 || j.expiry[1].column >= 0);
  const stale = [...known.stale, ...(evicts ? await evictJoinState(ctx, op, j, known, stamp, expiredNow, out) : [])];
  known.stale = [];
  // The changes' priors are known (the cache's, or null for a new key): each goes to the commit at once.
  if (known.sides[0].changed.length + known.sides[1].changed.length + stale.length > 0) await writer.begin();
  const written = writeStates(known.sides, known, writer, stale.length > 0);
  for (const ik of stale) if (!written.has(keyString(ik))) writer.removeIndex(ik);
  compactTables(known);
  return out;
}

/** Steps 1 and 2 for one chunk's rows (of its side, in order): each joins the other side's stored rows, then is stored. */
function joinChunk(
  op: StreamJoinOp,
  j: CompiledJoin,
  known: JoinStateCache,
  chunk: JoinChunk,
  watermark: number | undefined,
  stamp: number,
  expiredNow: [number[], number[]],
  out: Row[],
  c: StateContext['counters'],
): void {
  const side = chunk.side;
  const mine = known.sides[side];
  const theirs = known.sides[side === 0 ? 1 : 0];
  const outer = outerSide(op, side);
  const pre = j.pre[side];
  const rowAt = j.rowAt[side];
  const { data, keyAt, keyLength, keyGroup, vectors } = chunk;
  const expiryVector = j.expiry[side].column < 0 ? undefined : vectors[j.expiry[side].column];
  const offset = j.expiry[side].offset;
  for (let i = 0; i < chunk.count; i++) {
    const at = keyAt[i]!;
    // The row as an object, made when the join needs one (a condition on its side, or a row it emits).
    let row: Row | null = pre === always ? null : rowAt(vectors, i);
    if (at < 0 || (row !== null && !pre(row))) {
      if (outer) out.push(pairOf(j, side, row ?? rowAt(vectors, i), null));
      continue;
    }
    const g = theirs.findAt(data, at, keyLength[i]!);
    let matched = false;
    for (let r = g < 0 ? -1 : theirs.head(g); r >= 0; r = theirs.arena.next[r]!) {
      // A left semi join emits a left row once: the right side skips the ones that matched.
      if (op.how === 'left_semi' && side === 1 && theirs.arena.matched[r] === 1) continue;
      if (j.post !== null && !j.post.holds(side, vectors, i, theirs, r)) continue;
      if (theirs.arena.matched[r] === 0) {
        theirs.willChange(g, stamp);
        theirs.arena.matched[r] = 1;
      }
      row ??= rowAt(vectors, i);
      if (op.how !== 'left_semi') out.push(pairOf(j, side, row, theirs.arena.row(r)));
      else if (side === 1) out.push(j.output(theirs.arena.row(r), null));
      else if (!matched) out.push(j.output(row, null));
      matched = true;
    }
    if (op.how === 'left_semi' && side === 0 && matched) continue;
    // A row the watermark has already passed (Spark's rule since SPARK-49829): a left one is
    // stored all the same, as this batch's right rows have yet to meet it; a right one only when
    // it is an unmatched outer row. Either is evicted at the end of this batch, an unmatched
    // outer one emitted with nulls then.
    const time = expiryVector === undefined ? null : eventTimeOf(valueAt(expiryVector, i));
    const t = time === null ? null : time - offset;
    const passed = watermark !== undefined && t !== null && t <= watermark;
    if (passed && side === 1 && (matched || !outer)) continue;
    let k = mine.findAt(data, at, keyLength[i]!);
    if (k < 0) k = mine.insertAt(keyGroup[i]!, data, at, keyLength[i]!);
    mine.willChange(k, stamp);
    const r = mine.arena.alloc();
    mine.arena.setFromVectors(r, vectors, i);
    mine.arena.matched[r] = matched ? 1 : 0;
    mine.arena.expiry[r] = t ?? Number.NaN;
    mine.append(k, r);
    if (passed) expiredNow[side].push(k);
    c.updated += 1;
    c.rowDelta += 1;
  }
}

const pairOf = (j: CompiledJoin, side: JoinSide, row: Row, other: Row | null): Row => (side === 0 ? j.output(row, other) : j.output(other, row));

/**
 * The batch's keys the cache lacks, read from the shard for both sides in one getMany, into the
 * cache (a key the shard lacks too gets an empty entry, dropped at the end of the batch unless a
 * row is stored under it).
 */
async function readKeys(ctx: StateContext, known: JoinStateCache, chunks: readonly JoinChunk[]): Promise<void> {
  const wanted: Array<[SideTable, number]> = [];
  for (const { count, data, keyAt, keyLength, keyGroup } of chunks) {
    for (let i = 0; i < count; i++) {
      const at = keyAt[i]!;
      if (at < 0) continue;
      for (const table of known.sides)
        if (table.findAt(data, at, keyLength[i]!) < 0) wanted.push([table, table.insertAt(keyGroup[i]!, data, at, keyLength[i]!)]);
    }
  }
  await loadKeys(ctx.store, known, wanted);
}

/** Reads the values of new, empty entries from the shard into them. */
async function loadKeys(store: StateContext['store'], known: JoinStateCache, wanted: Array<[SideTable, number]>): Promise<void> {
  if (wanted.length === 0) return;
  const read = await store.getMany(wanted.map(([t, g]) => dataKey(t.keyGroup(g), sideKey(t.side, t.keys.keyView(g)))));
  wanted.forEach(([t, g], i) => {
    const value = read[i];
    if (value === undefined) return;
    t.load(g, value);
    known.bytes += cachedBytes(value.length);
  });
}

/**
 * The batch's changed keys to the writer and the cache: values, and index entries at their rows'
 * least expiry. With `track`, returns the index entries it writes (keyString), which a stale one
 * must not undo.
 */
function writeStates(tables: [SideTable, SideTable], known: JoinStateCache, writer: StateWriter, track: boolean): Set<string> {
  const written = new Set<string>();
  for (const t of tables) {
    const { changed, priors } = t;
    for (let i = 0; i < changed.length; i++) {
      const g = changed[i]!;
      const n = t.count(g);
      const indexTime = t.leastExpiry(g);
      const value = n === 0 ? null : encodeJoinRows(indexTime, t.arena, t.rowsOf(g), n);
      const held = t.heldBytes(g);
      const priorIndex = t.indexTime(g);
      const key = sideKey(t.side, t.keys.keyView(g));
      const kg = t.keyGroup(g);
      if (value !== null || held > 0) {
        const dk = dataKey(kg, key);
        const prior = priors[i];
        // The key's prior: the value the shard holds, as the cache gave it back (or read again at the flush).
        if (prior !== undefined) writer.cached(dk, prior);
        if (value === null) writer.delete(dk);
        else writer.put(dk, value);
      }
      if (priorIndex !== null && (value === null || priorIndex !== indexTime)) writer.removeIndex(indexKey(priorIndex, kg, key));
      if (indexTime !== null && value !== null && indexTime !== priorIndex) {
        const ik = indexKey(indexTime, kg, key);
        writer.addIndex(ik);
        if (track) written.add(keyString(ik));
        known.expiring?.[t.side].push(indexTime, g);
      }
      known.bytes += cachedBytes(value?.length ?? 0) - cachedBytes(held);
      t.setHeld(g, value?.length ?? 0, value === null ? null : indexTime);
      if (value === null) t.remove(g);
    }
    t.changed = [];
    t.priors = [];
  }
  return written;
}

/**
 * Keys read for a batch that the shard lacks and that got no row are dropped; a table whose
 * removed keys outnumber its live ones is compacted (its expiry heap rebuilt, as keys renumber).
 */
function compactTables(known: JoinStateCache): void {
  for (const t of known.sides) {
    const keys = t.keys;
    for (let g = 0; g < keys.count; g++) if (keys.isLive(g) && t.count(g) === 0 && t.heldBytes(g) === 0) t.remove(g);
    if (keys.count < 4096 || keys.count < 2 * keys.size) continue;
    keys.compact();
    if (known.expiring === undefined) continue;
    const heap = new ExpiryHeap();
    for (let g = 0; g < keys.count; g++) {
      const time = t.indexTime(g);
      if (time !== null) heap.push(time, g);
    }
    known.expiring[t.side] = heap;
  }
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
  stamp: number,
  expiredNow: [number[], number[]],
  out: Row[],
): Promise<Uint8Array[]> {
  const watermark = ctx.watermark as number;
  const c = ctx.counters;
  const removed: [Row[], Row[]] = [[], []];
  /** Removes key g's rows the watermark has passed; false when none has. */
  const expire = (t: SideTable, g: number): boolean => {
    if (j.expiry[t.side].column < 0) return false;
    const { expiry } = t.arena;
    let any = false;
    for (let r = t.head(g); r >= 0 && !any; r = t.arena.next[r]!) any = expiry[r]! <= watermark;
    if (!any) return false;
    t.willChange(g, stamp);
    const gone = t.removeExpired(g, watermark, outerSide(op, t.side) ? removed[t.side] : null);
    c.removed += gone;
    c.rowDelta -= gone;
    return true;
  };
  // Rows this batch stored past the watermark, whose index entries are not written yet.
  for (const t of known.sides) for (const g of expiredNow[t.side]) expire(t, g);
  const stale: Uint8Array[] = [];
  if (known.expiring !== undefined) {
    // An entry whose key has a later index time now (or no rows) was replaced when that changed;
    // a key that somehow expires nothing keeps its entry.
    for (const t of known.sides) {
      const heap = known.expiring[t.side];
      const due: number[] = [];
      heap.popUpTo(Math.floor(watermark), due);
      for (let i = 0; i < due.length; i += 2) {
        const time = due[i]!;
        const g = due[i + 1]!;
        if (t.keys.isLive(g) && t.indexTime(g) === time && !expire(t, g)) heap.push(time, g);
      }
    }
  } else {
    await ctx.forEachExpired(async (index) => {
      const found: Array<[Uint8Array, number, SideTable, number]> = [];
      const unknown: Array<[SideTable, number]> = [];
      for (const ik of index) {
        const { timeMs, kg, key } = decodeIndexKey(ik);
        const t = known.sides[(key[0] ?? 0) as JoinSide];
        let g = t.find(key.subarray(1));
        if (g < 0) {
          g = t.insert(kg, key.subarray(1));
          unknown.push([t, g]);
        }
        found.push([ik, timeMs, t, g]);
      }
      await loadKeys(ctx.store, known, unknown);
      for (const [ik, timeMs, t, g] of found) {
        if (t.indexTime(g) !== timeMs) stale.push(new Uint8Array(ik));
        else expire(t, g);
      }
    });
  }
  for (const row of removed[0]) out.push(j.output(row, null));
  for (const row of removed[1]) out.push(j.output(null, row));
  return stale;
}
