/**
 * The bytes and the decisions shared by every ShardStore (pure: no I/O).
 *
 * A store keeps three things beside the state itself (see layout.ts for the key prefixes):
 * - meta, at [0x00]: format version, marker, numRows;
 * - undo(N), at [0x03][N u64 BE]: ONE value holding the prior marker, prior numRows and the prior
 *   value of every key batch N changed, so a commit writes changes + 2 entries whatever the size
 *   of the state, and a rollback reads one value.
 * `planCommit` and `planRollback` turn what the store knows into the one atomic batch to write;
 * the stores only execute it, so LevelDB and memory cannot drift apart.
 *
 * Formats (all integers big-endian, doubles IEEE 754):
 *   meta  = [version u8 = 1][marker f64][numRows f64]
 *   undo  = [version u8 = 1][batchId f64][priorMarker f64][priorNumRows f64][count u32]
 *           then per entry [keyLen u32][key][0x00 | 0x01 [valueLen u32][value]]
 */
import { SluiceError } from './errors.js';
import { META_KEY, undoKey } from './layout.js';
import type { ShardChange } from './ShardStore.js';

export const SHARD_FORMAT_VERSION = 1;

export type ShardOp = { type: 'put'; key: Uint8Array; value: Uint8Array } | { type: 'del'; key: Uint8Array };

export interface ShardMeta {
  marker: number;
  numRows: number;
}

export interface UndoRecord {
  batchId: number;
  priorMarker: number;
  priorNumRows: number;
  /** In commit order; a rollback applies them in reverse so that a key's first prior wins. */
  entries: Array<[Uint8Array, Uint8Array | null]>;
}

/** What a store holds in memory about itself: its meta and the batch ids of its undo records. */
export interface ShardState extends ShardMeta {
  /** Ascending. */
  undoIds: number[];
}

export const NEW_SHARD: ShardMeta = { marker: -1, numRows: 0 };

export function encodeMeta(m: ShardMeta): Uint8Array {
  const out = new Uint8Array(17);
  const v = new DataView(out.buffer);
  out[0] = SHARD_FORMAT_VERSION;
  v.setFloat64(1, m.marker);
  v.setFloat64(9, m.numRows);
  return out;
}

export function decodeMeta(b: Uint8Array, file: string): ShardMeta {
  checkVersion(b, file, 'meta');
  if (b.length !== 17) throw corrupt(file, 'its meta record is torn');
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { marker: v.getFloat64(1), numRows: v.getFloat64(9) };
}

export const UNDO_HEADER_BYTES = 29;

/** The first bytes of an undo record; its `count` entries follow. */
export function encodeUndoHeader(batchId: number, priorMarker: number, priorNumRows: number, count: number): Uint8Array {
  const out = new Uint8Array(UNDO_HEADER_BYTES);
  const v = new DataView(out.buffer);
  out[0] = SHARD_FORMAT_VERSION;
  v.setFloat64(1, batchId);
  v.setFloat64(9, priorMarker);
  v.setFloat64(17, priorNumRows);
  v.setUint32(25, count);
  return out;
}

export function encodeUndo(u: UndoRecord): Uint8Array {
  let size = 29;
  for (const [k, prior] of u.entries) size += 5 + k.length + (prior === null ? 0 : 4 + prior.length);
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  out[0] = SHARD_FORMAT_VERSION;
  v.setFloat64(1, u.batchId);
  v.setFloat64(9, u.priorMarker);
  v.setFloat64(17, u.priorNumRows);
  v.setUint32(25, u.entries.length);
  let p = 29;
  for (const [k, prior] of u.entries) {
    v.setUint32(p, k.length);
    out.set(k, p + 4);
    p += 4 + k.length;
    if (prior === null) {
      out[p++] = 0;
    } else {
      out[p++] = 1;
      v.setUint32(p, prior.length);
      out.set(prior, p + 4);
      p += 4 + prior.length;
    }
  }
  return out;
}

export function decodeUndo(b: Uint8Array, file: string): UndoRecord {
  checkVersion(b, file, 'undo');
  const torn = () => corrupt(file, 'an undo record is torn');
  if (b.length < 29) throw torn();
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const count = v.getUint32(25);
  const entries: Array<[Uint8Array, Uint8Array | null]> = [];
  let p = 29;
  for (let i = 0; i < count; i++) {
    if (p + 5 > b.length) throw torn();
    const kl = v.getUint32(p);
    if (p + 4 + kl + 1 > b.length) throw torn();
    const key = b.slice(p + 4, p + 4 + kl);
    p += 4 + kl;
    const flag = b[p++];
    if (flag === 0) entries.push([key, null]);
    else if (flag === 1) {
      if (p + 4 > b.length) throw torn();
      const vl = v.getUint32(p);
      if (p + 4 + vl > b.length) throw torn();
      entries.push([key, b.slice(p + 4, p + 4 + vl)]);
      p += 4 + vl;
    } else throw torn();
  }
  if (p !== b.length) throw torn();
  return { batchId: v.getFloat64(1), priorMarker: v.getFloat64(9), priorNumRows: v.getFloat64(17), entries };
}

function checkVersion(b: Uint8Array, file: string, what: string): void {
  const version = b[0];
  if (version === undefined || version === 0) throw corrupt(file, `its ${what} record is torn`);
  if (version > SHARD_FORMAT_VERSION) {
    throw new SluiceError(
      'STATE_STORE_INCOMPATIBLE',
      `state store ${file} was written by a newer Sluice (format ${version}, this one reads ${SHARD_FORMAT_VERSION})`,
      { file },
    );
  }
}

function corrupt(file: string, why: string): SluiceError {
  return new SluiceError('STATE_STORE_CORRUPT', `state store ${file} is corrupt: ${why}`, { file });
}

export interface CommitPlan {
  ops: ShardOp[];
  next: ShardState;
}

/** Throws unless batch `batchId` may commit on top of `s` (it must be above the marker). */
export function checkCommit(s: ShardState, batchId: number, rowDelta: number, file: string): void {
  if (!Number.isSafeInteger(batchId) || batchId < 0) throw new RangeError(`batch id ${batchId} is not a non-negative integer`);
  if (!Number.isSafeInteger(rowDelta)) throw new RangeError(`row delta ${rowDelta} is not an integer`);
  if (batchId <= s.marker) {
    // Committing N over marker N would record batch N's own writes as "prior" values: an attempt
    // must call rollbackIfAt(N) first.
    throw new SluiceError(
      'STATE_COMMIT_OUT_OF_ORDER',
      `state store ${file} is at batch ${s.marker}; batch ${batchId} cannot commit over it without a rollback`,
      { file },
    );
  }
}

/**
 * What follows a commit's changes and undo(N): deletion of undo records below `pruneUndoBelow`
 * (never undo(N) itself: batch N is running, so it cannot be durable yet), then meta N, last.
 */
export function commitTail(s: ShardState, batchId: number, rowDelta: number, pruneUndoBelow: number): CommitPlan {
  const next: ShardState = { marker: batchId, numRows: s.numRows + rowDelta, undoIds: [] };
  const ops: ShardOp[] = [];
  for (const id of s.undoIds) {
    if (id < pruneUndoBelow && id !== batchId) ops.push({ type: 'del', key: undoKey(id) });
    else if (id !== batchId) next.undoIds.push(id);
  }
  next.undoIds.push(batchId);
  next.undoIds.sort((a, b) => a - b);
  ops.push({ type: 'put', key: META_KEY, value: encodeMeta(next) });
  return { ops, next };
}

/**
 * The one batch of a commit: the changes, undo(N), deletion of undo records below
 * `pruneUndoBelow`, and meta N.
 */
export function planCommit(
  s: ShardState,
  batchId: number,
  changes: readonly ShardChange[],
  rowDelta: number,
  pruneUndoBelow: number,
  file: string,
): CommitPlan {
  checkCommit(s, batchId, rowDelta, file);
  const ops: ShardOp[] = [];
  const entries: Array<[Uint8Array, Uint8Array | null]> = [];
  for (const c of changes) {
    ops.push(c.value === null ? { type: 'del', key: c.key } : { type: 'put', key: c.key, value: c.value });
    entries.push([c.key, c.prior]);
  }
  ops.push({ type: 'put', key: undoKey(batchId), value: encodeUndo({ batchId, priorMarker: s.marker, priorNumRows: s.numRows, entries }) });
  const tail = commitTail(s, batchId, rowDelta, pruneUndoBelow);
  return { ops: [...ops, ...tail.ops], next: tail.next };
}

/** The one batch of a rollback of `undo`: priors in reverse commit order, prior meta, undo deleted. */
export function planRollback(s: ShardState, undo: UndoRecord): CommitPlan {
  const ops: ShardOp[] = [];
  for (let i = undo.entries.length - 1; i >= 0; i--) {
    const [key, prior] = undo.entries[i] as [Uint8Array, Uint8Array | null];
    ops.push(prior === null ? { type: 'del', key } : { type: 'put', key, value: prior });
  }
  const meta: ShardMeta = { marker: undo.priorMarker, numRows: undo.priorNumRows };
  ops.push({ type: 'put', key: META_KEY, value: encodeMeta(meta) });
  ops.push({ type: 'del', key: undoKey(undo.batchId) });
  return { ops, next: { ...meta, undoIds: s.undoIds.filter((id) => id !== undo.batchId) } };
}

/** Deletes of the undo records below `batchId`. */
export function planPrune(s: ShardState, batchId: number): CommitPlan {
  const ops: ShardOp[] = [];
  const keep: number[] = [];
  for (const id of s.undoIds) {
    if (id < batchId) ops.push({ type: 'del', key: undoKey(id) });
    else keep.push(id);
  }
  return { ops, next: { marker: s.marker, numRows: s.numRows, undoIds: keep } };
}

export function undoMissing(file: string, batchId: number): SluiceError {
  return new SluiceError(
    'STATE_UNDO_MISSING',
    `state store ${file} is at batch ${batchId} but its undo record was pruned (the driver reported commits/${batchId} durable), so the batch cannot be re-run`,
    { file },
  );
}

export function storeClosed(file: string): SluiceError {
  return new SluiceError('STATE_STORE_CLOSED', `state store ${file} is closed`, { file });
}

/** Runs async critical sections one after another (commit, rollback, prune, close). */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * Raw entries written or deleted by a repartition's copy or garbage collection, with the meta's
 * row count moved by `rowDelta`; the marker and the undo records stay.
 */
export function planMove(s: ShardState, ops: readonly ShardOp[], rowDelta: number): CommitPlan {
  const next = { marker: s.marker, numRows: s.numRows + rowDelta, undoIds: s.undoIds };
  return { ops: [...ops, { type: 'put', key: META_KEY, value: encodeMeta(next) }], next };
}

/**
 * After a repartition changed what a shard holds, its undo records describe state it no longer
 * has: they go, and the marker becomes the control batch's id.
 */
export function planResetMarker(s: ShardState, batchId: number): CommitPlan {
  const ops: ShardOp[] = s.undoIds.map((id) => ({ type: 'del', key: undoKey(id) }));
  const next = { marker: batchId, numRows: s.numRows, undoIds: [] };
  ops.push({ type: 'put', key: META_KEY, value: encodeMeta(next) });
  return { ops, next };
}
