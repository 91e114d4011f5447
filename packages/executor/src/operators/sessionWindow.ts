/**
 * Session windows: an aggregation grouped by session_window(time, gap) and other keys (Spark's
 * SessionWindowStateStoreRestoreExec and SessionWindowStateStoreSaveExec, state format 1).
 *
 * A row opens the session [time, time + gap). Sessions of one key merge where they overlap or
 * touch (the next one starts at or before the current one's end), their aggregates merged.
 *
 * - Map side: an aggregation of partials per (other keys, session start), with the session's end
 *   as a last, hidden max aggregate. Only the other keys choose the key group, so every session
 *   of a key meets in one state task. The rows without a time or with a gap <= 0 were filtered
 *   before it, as Spark's SessionWindowing filters them.
 * - State: one value per key, its sessions in start order (the codec below), indexed by the least
 *   session end.
 * - A batch: partials whose session ends at or below the late watermark drop. The rest merge
 *   with each other and with the key's stored sessions. Sessions that end at or below the
 *   watermark are closed: emitted in append mode, and removed. Complete mode emits every session
 *   and closes none.
 */
import {
  corruptStateValue,
  dataKeyOf,
  dataRange,
  decodeDataKey,
  decodeKey,
  expectValueHeader,
  indexKey,
  valueHeaderBytes,
  ValueKind,
  writeValueHeader,
  type SluiceError,
} from '@sluice/state';
import { cellLayoutOf, cellReader, cellTable, finalizeInto, mergeCells, ValueArena, type CellLayout, type ReadCells } from './aggCells.js';
import { aggregateOutputSchema, sessionOfKey } from './aggregates.js';
import { aggregateEventTimeColumns, partitionGroups } from './compactAggregate.js';
import { forEachAggregateRecordAt } from '../shuffle/shuffleCodec.js';
import { KeyTable } from './keyTable.js';
import { aggregationExprs, aggregationPartials } from './mapSide.js';
import type { StatefulOperator } from './operator.js';
import type { StateContext } from './stateContext.js';
import { keyString } from './stateCache.js';
import type { StatefulOp } from './types.js';
import { exprType } from '../expressions/exprTypes.js';
import type { Expr } from '../expressions/types.js';
import type { Row } from '../schema/types.js';

type AggregateOp = Extract<StatefulOp, { kind: 'aggregate' }>;

/** The hidden names of the map side's session start key and session end aggregate. */
const SESSION_START = '__session_start';
const SESSION_END = '__session_end';

/** The index of `op`'s session window key, or -1 (not an aggregation, or no session window). */
export function sessionKeyOf(op: StatefulOp): number {
  return op.kind === 'aggregate' ? op.keys.findIndex((k) => sessionOfKey(k) !== undefined) : -1;
}

/**
 * The aggregation the map side of a session aggregation runs: the other keys and the session's
 * start as keys (only the other keys route), the aggregates and then max(session end).
 */
export function sessionMapOp(op: AggregateOp): AggregateOp {
  const s = sessionKeyOf(op);
  const [time, gap] = sessionOfKey(op.keys[s] as Expr)!.args as [Expr, Expr];
  const end: Expr = { op: 'binary', fn: 'plus', left: time, right: { op: 'cast', expr: gap, to: 'interval' } };
  const others = op.keys.filter((_, i) => i !== s);
  return {
    kind: 'aggregate',
    keys: [...others, time],
    keyNames: [...op.keyNames.filter((_, i) => i !== s), SESSION_START],
    aggs: [...op.aggs, { fn: 'max', arg: end, name: SESSION_END }],
    eventTimeKey: null,
    routeKeys: others.length,
  };
}

// ---- stored sessions ---------------------------------------------------------------------------
//
// A key's value: the state value header (kind `sessions`, its index time the least session end,
// its rows the session count), then per session, in start order: start and end (f64), the length
// of its buffers (u32), and its buffers in aggBufferCodec.ts's encoding (the hidden session end
// last). Little-endian. Values written before the header have their own: tag 0x53, the least
// session end (f64), the session count (u32).

const VERSION = 1;
const LEGACY_TAG = 0x53;
const LEGACY_HEADER = 13;

/** A session being merged: its bounds and its buffers, entry `e` of table `t`. */
interface Session {
  start: number;
  end: number;
  t: KeyTable;
  e: number;
  /** The state held it before this batch. */
  stored: boolean;
  /** New, or merged with another, in this batch. */
  changed: boolean;
}

const corrupt = (why: string): SluiceError => corruptStateValue('session window state', `${why}: the state was written by another query, or is damaged`);

const viewOf = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** A stored value's index time (its least session end), session count and where its sessions start, checked. */
export function sessionHeader(value: Uint8Array): { indexTime: number; count: number; start: number } {
  const h = expectValueHeader(value, ValueKind.sessions, VERSION, 'session window state');
  if (h !== undefined) {
    if (typeof h.indexTime !== 'number') throw corrupt('has no index time');
    return { indexTime: h.indexTime, count: h.rows, start: h.start };
  }
  if (value.length < LEGACY_HEADER || value[0] !== LEGACY_TAG) throw corrupt('is not a list of sessions');
  const v = viewOf(value);
  return { indexTime: v.getFloat64(1, true), count: v.getUint32(9, true), start: LEGACY_HEADER };
}

function encodeSessions(list: readonly Session[], arena: ValueArena): Uint8Array {
  const buffers = list.map((x) => arena.encode(x.t, x.e));
  const indexTime = Math.min(...list.map((x) => x.end));
  const head = valueHeaderBytes(indexTime, list.length);
  const out = new Uint8Array(head + buffers.reduce((n, b) => n + 20 + b.length, 0));
  const v = viewOf(out);
  let pos = writeValueHeader(out, v, 0, ValueKind.sessions, VERSION, indexTime, list.length);
  list.forEach((x, i) => {
    const b = buffers[i]!;
    v.setFloat64(pos, x.start, true);
    v.setFloat64(pos + 8, x.end, true);
    v.setUint32(pos + 16, b.length, true);
    out.set(b, pos + 20);
    pos += 20 + b.length;
  });
  return out;
}

/** The sessions of a stored value, their buffers decoded into new entries of `t`. */
function decodeSessions(value: Uint8Array, read: ReadCells, t: KeyTable): { indexTime: number; sessions: Session[] } {
  const { indexTime, count, start: first } = sessionHeader(value);
  const v = viewOf(value);
  const sessions: Session[] = [];
  let pos = first;
  for (let i = 0; i < count; i++) {
    if (pos + 20 > value.length) throw corrupt(`ends inside session ${i + 1} of ${count}`);
    const start = v.getFloat64(pos, true);
    const end = v.getFloat64(pos + 8, true);
    const len = v.getUint32(pos + 16, true);
    if (pos + 20 + len > value.length || !(end > start)) throw corrupt(`has a damaged session ${i + 1} of ${count}`);
    const e = t.append();
    read(value, pos + 20, pos + 20 + len, t, e);
    sessions.push({ start, end, t, e, stored: true, changed: false });
    pos += 20 + len;
  }
  if (pos !== value.length) throw corrupt('has trailing bytes');
  return { indexTime, sessions };
}

/** Sorts sessions by start and merges those that overlap or touch; counts the stored ones merged into another. */
function mergeSessions(L: CellLayout, list: Session[]): { merged: Session[]; absorbed: number } {
  list.sort((a, b) => a.start - b.start);
  const merged: Session[] = [];
  let absorbed = 0;
  let cur: Session | undefined;
  for (const x of list) {
    if (cur !== undefined && x.start <= cur.end) {
      mergeCells(L, cur.t, cur.e, x.t, x.e);
      if (x.end > cur.end) cur.end = x.end;
      cur.changed = true;
      if (x.stored) absorbed += 1;
      continue;
    }
    cur = x;
    merged.push(x);
  }
  return { merged, absorbed };
}

// ---- the task ----------------------------------------------------------------------------------

/**
 * A session window's batch (see stateTask.ts for the steps): writes the changes, fills the
 * counters, and returns the rows the output mode emits.
 */
async function sessionAggregate(ctx: StateContext, op: AggregateOp): Promise<Row[]> {
  const { task, store, watermark, counters: c, writer: out } = ctx;
  const s = sessionKeyOf(op);
  const mapOp = sessionMapOp(op);
  const schema = task.stateInputSchema;
  const L = cellLayoutOf(mapOp, schema);
  const endCell = L.aggs[L.aggs.length - 1]!.cell;
  // The user's aggregates, without the hidden session end (the cells keep their places).
  const shown: CellLayout = { ...L, aggs: L.aggs.slice(0, -1) };
  const read = cellReader(L);
  const keyTypes = mapOp.keys.slice(0, -1).map((k) => exprType(k, schema));
  const arena = new ValueArena(L);
  const partial = cellTable(L, 1);
  const slot = partial.append();
  const rows: Row[] = [];
  /** Keys changed in this batch: skipped by the eviction, and their rows for complete mode. */
  const touched = new Map<string, Row[]>();

  const rowsOf = (dk: Uint8Array, list: readonly Session[]): Row[] => {
    if (list.length === 0) return [];
    const kv = decodeKey(decodeDataKey(dk).key, keyTypes);
    return list.map((x) => {
      const row: Row = {};
      let j = 0;
      op.keyNames.forEach((name, i) => {
        row[name] = i === s ? { start: x.start, end: x.end } : kv[j++];
      });
      finalizeInto(shown, row, x.t, x.e);
      return row;
    });
  };
  /** Closes the sessions that end at or below the watermark (emitted in append mode); gives the rest. */
  const close = (dk: Uint8Array, list: Session[]): Session[] => {
    if (watermark === undefined) return list;
    const closed = list.filter((x) => x.end <= watermark);
    if (closed.length === 0) return list;
    c.removed += closed.length;
    if (task.outputMode === 'append') for (const row of rowsOf(dk, closed)) rows.push(row);
    return list.filter((x) => x.end > watermark);
  };
  /** Writes a key's remaining sessions (or deletes it; `stored`: the shard holds it) and moves its index entry to their least end. */
  const write = (dk: Uint8Array, keep: readonly Session[], stored: boolean, priorIndex: number | undefined): void => {
    const { kg, key } = decodeDataKey(dk);
    if (keep.length > 0) out.put(dk, encodeSessions(keep, arena));
    else if (stored) out.delete(dk);
    const index = keep.length === 0 ? undefined : Math.min(...keep.map((x) => x.end));
    if (index === priorIndex) return;
    if (priorIndex !== undefined) out.removeIndex(indexKey(priorIndex, kg, key));
    if (index !== undefined) out.addIndex(indexKey(index, kg, key));
  };

  for (const blocks of partitionGroups(task.blocks)) {
    // 1. Partials of one (key, session start) from several map tasks merge into one.
    const batch = cellTable(L);
    for (const block of blocks) {
      const data = block.data;
      forEachAggregateRecordAt(data, (k0, kl, _t, b0, end) => {
        const h = KeyTable.hash(data, k0, kl);
        const g = batch.find(data, k0, kl, h);
        if (g < 0) read(data, b0, end, batch, batch.insert(data, k0, kl, h));
        else {
          read(data, b0, end, partial, slot);
          mergeCells(L, batch, g, partial, slot);
        }
      });
    }

    // 2. Late sessions drop; the others gather by key (the data key less the session start).
    const keys = new Map<string, { dk: Uint8Array; sessions: Session[] }>();
    for (let g = 0; g < batch.count; g++) {
      const full = batch.keyView(g);
      const cut = full.length - 9; // the session start: a present TIMESTAMP, 9 bytes
      const start = decodeKey(full.subarray(cut), ['timestamp'])[0] as number;
      const end = batch.cells[g * L.width + endCell]!;
      if (ctx.isLate(end)) {
        c.dropped += 1;
        continue;
      }
      const id = keyString(full.subarray(0, cut));
      let k = keys.get(id);
      if (k === undefined) {
        k = { dk: full.slice(0, cut), sessions: [] };
        keys.set(id, k);
      }
      k.sessions.push({ start, end, t: batch, e: g, stored: false, changed: true });
    }
    if (keys.size === 0) continue;

    // 3. Each key's sessions merge with its stored ones; the closed ones go.
    const list = [...keys];
    const stored = await out.read(list.map(([, k]) => k.dk));
    const decoded = cellTable(L);
    list.forEach(([id, k], i) => {
      const prior = stored[i];
      const old = prior === undefined ? undefined : decodeSessions(prior, read, decoded);
      const { merged, absorbed } = mergeSessions(L, old === undefined ? k.sessions : [...old.sessions, ...k.sessions]);
      c.updated += merged.filter((x) => x.changed).length;
      c.removed += absorbed;
      const keep = close(k.dk, merged);
      c.rowDelta += keep.length - (old?.sessions.length ?? 0);
      write(k.dk, keep, prior !== undefined, old?.indexTime);
      touched.set(id, task.outputMode === 'complete' ? rowsOf(k.dk, keep) : []);
    });
    await out.flush();
  }

  // 4. Eviction of the keys this batch left alone: those whose least session end is <= the watermark.
  if (watermark !== undefined) {
    await ctx.forEachExpired(async (page) => {
      const index = page.filter((ik) => !touched.has(keyString(dataKeyOf(ik))));
      if (index.length === 0) return;
      const data = index.map(dataKeyOf);
      const values = await out.read(data);
      const decoded = cellTable(L);
      index.forEach((ik, i) => {
        const dk = data[i]!;
        const prior = values[i];
        // The entry goes; a key with sessions left gets one at their least end.
        out.removeIndex(ik);
        if (prior === undefined) return;
        const old = decodeSessions(prior, read, decoded);
        const keep = close(dk, old.sessions);
        if (keep.length === old.sessions.length) return; // an entry left behind: the key's own is above
        c.rowDelta += keep.length - old.sessions.length;
        write(dk, keep, true, undefined);
      });
      await out.flush();
    });
  }

  if (task.outputMode === 'complete') {
    // Every session as it stands after this batch (the store still holds the prior of a changed key).
    const decoded = cellTable(L);
    const [gte, lt] = dataRange();
    for (const [dk, value] of await store.range(gte, lt)) {
      const id = keyString(dk);
      const changed = touched.get(id);
      for (const row of changed ?? rowsOf(dk, decodeSessions(value, read, decoded).sessions)) rows.push(row);
      touched.delete(id);
    }
    for (const changed of touched.values()) for (const row of changed) rows.push(row);
  }
  return rows;
}

/** An aggregation grouped by a session window (Spark's SessionWindowStateStoreSaveExec). */
export const sessionWindow: StatefulOperator<AggregateOp> = {
  kind: 'sessionWindow',
  progressName: 'sessionWindowStateStoreSaveExec',
  usesWatermark: (op) => op.eventTimeKey !== null,
  lateOnMapSide: false,
  eventTimeColumnsOut: aggregateEventTimeColumns,
  outputSchema: aggregateOutputSchema,
  mapSideExprs: (op) => aggregationExprs(sessionMapOp(op)),
  mapSide: (op, input) => aggregationPartials(sessionMapOp(op), input.schema, input.layout, input.udfs),
  mapSideAggregation: sessionMapOp,
  run: sessionAggregate,
  oldValues: { indexTimeOf: () => (_key, value) => sessionHeader(value).indexTime, rowsIn: (value) => sessionHeader(value).count },
};
