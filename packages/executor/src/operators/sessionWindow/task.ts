/**
 * Session windows, the task part: an aggregation grouped by session_window(time, gap) and other
 * keys (Spark's SessionWindowStateStoreRestoreExec and SessionWindowStateStoreSaveExec, state
 * format 1); plan.ts has what the driver plans with.
 *
 * A row opens the session [time, time + gap). Sessions of one key merge where they overlap or
 * touch (the next one starts at or before the current one's end), their aggregates merged.
 *
 * - Map side: an aggregation of partials per (other keys, session start), with the session's end
 *   as a last, hidden max aggregate. Only the other keys choose the key group, so every session
 *   of a key meets in one state task. The rows without a time or with a gap <= 0 were filtered
 *   before it, as Spark's SessionWindowing filters them.
 * - State: one value per key, its sessions in start order (codec.ts), indexed by the least
 *   session end.
 * - A batch: partials whose session ends at or below the late watermark drop. The rest merge
 *   with each other and with the key's stored sessions. Sessions that end at or below the
 *   watermark are closed: emitted in append mode, and removed. Complete mode emits every session
 *   and closes none.
 */
import { dataKeyOf, dataRange, decodeDataKey, decodeKey, indexKey } from '@sluice/state';
import { cellLayoutOf, cellReader, cellTable, finalizeInto, mergeCells, ValueArena, type CellLayout } from '../aggCells.js';
import type { AggregateOp } from '../aggregate/plan.js';
import { partitionGroups } from '../aggregate/task.js';
import { forEachAggregateRecordAt } from '../../shuffle/shuffleCodec.js';
import { KeyTable } from '../keyTable.js';
import { aggregationPartials } from '../mapSide.js';
import type { OperatorTask } from '../operator.js';
import type { StateContext } from '../stateContext.js';
import { keyString } from '../stateCache.js';
import { exprType } from '../../expressions/exprTypes.js';
import type { Row } from '../../schema/types.js';
import { decodeSessions, encodeSessions, type Session } from './codec.js';
import { sessionKeyOf, sessionMapOp } from './plan.js';

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

export const sessionWindowTask: OperatorTask<AggregateOp> = {
  mapSide: (op, input) => aggregationPartials(sessionMapOp(op), input.schema, input.layout, input.udfs),
  mapSideAggregation: sessionMapOp,
  run: sessionAggregate,
};
