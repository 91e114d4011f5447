/**
 * A session window's stored value: a key's sessions, in start order (task.ts merges and closes
 * them; plan.ts reads the header for a repartition).
 *
 * The value: the state value header (kind `sessions`, its index time the least session end, its
 * rows the session count), then per session, in start order: start and end (f64), the length of
 * its buffers (u32), and its buffers in aggBufferCodec.ts's encoding (the hidden session end
 * last). Little-endian. Values written before the header have their own: tag 0x53, the least
 * session end (f64), the session count (u32).
 */
import { corruptStateValue, expectValueHeader, valueHeaderBytes, ValueKind, writeValueHeader, type SluiceError } from '@sluice/state';
import type { ReadCells, ValueArena } from '../aggCells.js';
import type { KeyTable } from '../keyTable.js';

const VERSION = 1;
const LEGACY_TAG = 0x53;
const LEGACY_HEADER = 13;

/** A session being merged: its bounds and its buffers, entry `e` of table `t`. */
export interface Session {
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

/** A key's sessions as its stored value (`list`: in start order, at least one). */
export function encodeSessions(list: readonly Session[], arena: ValueArena): Uint8Array {
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
export function decodeSessions(value: Uint8Array, read: ReadCells, t: KeyTable): { indexTime: number; sessions: Session[] } {
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
