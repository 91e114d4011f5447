/**
 * The header every operator's state value starts with, so that what a repartition and the
 * checkpoint tool need of a value (where its index entry is, how many rows it holds) is read the
 * same way for every kind, and a damaged value is one error naming its shard.
 *
 *   [0xF5] [kind u8] [version u8] [flags u8] [index time f64]? [rows u32]? payload
 *
 * flags bits 0-1, the value's eviction index entry: 0 none, 1 one at `index time` (the f64
 * follows), 2 not one the value can tell (several, such as a processor's timers: a repartition
 * scans the index for them). Bit 2: a row count follows (absent: the value is one row). Numbers
 * are little-endian, as every payload's are.
 *
 * Values written before the header (by 32a9167 and earlier) start with another byte: each kind's
 * codec still reads them, and `valueHeader` answers undefined for them.
 */
import { SluiceError } from './errors.js';

export const STATE_VALUE_MARK = 0xf5;

/** The kinds of value, by the operator that writes them. */
export const ValueKind = { aggregate: 1, sessions: 2, dedup: 3, joinRows: 4, processor: 5, limit: 6 } as const;
export type ValueKind = (typeof ValueKind)[keyof typeof ValueKind];

/** The index entry a value records: none (null), one at a time, or unknown (undefined: scan the index). */
export type ValueIndexTime = number | null | undefined;

export interface ValueHeader {
  kind: number;
  version: number;
  indexTime: ValueIndexTime;
  rows: number;
  /** Where the payload starts. */
  start: number;
}

const INDEX_AT = 1;
const INDEX_UNKNOWN = 2;
const HAS_ROWS = 4;

/** Bytes of the header for a value with this index time and row count. */
export function valueHeaderBytes(indexTime: ValueIndexTime, rows = 1): number {
  return 4 + (typeof indexTime === 'number' ? 8 : 0) + (rows === 1 ? 0 : 4);
}

/** Numbers of a header written without the caller's DataView, through this one (8 bytes). */
const scratch = new DataView(new ArrayBuffer(8));

/**
 * Writes a header at `pos` (valueHeaderBytes of room); returns where the payload starts. `view`
 * is a DataView over `bytes`' whole buffer, when the caller keeps one; without it the numbers go
 * through a scratch view, so a value packed elsewhere (packWithValueHeader) needs no view of its own.
 */
export function writeValueHeader(
  bytes: Uint8Array,
  view: DataView | undefined,
  pos: number,
  kind: ValueKind,
  version: number,
  indexTime: ValueIndexTime,
  rows = 1,
): number {
  const at = typeof indexTime === 'number';
  bytes[pos] = STATE_VALUE_MARK;
  bytes[pos + 1] = kind;
  bytes[pos + 2] = version;
  bytes[pos + 3] = (at ? INDEX_AT : indexTime === undefined ? INDEX_UNKNOWN : 0) | (rows === 1 ? 0 : HAS_ROWS);
  let p = pos + 4;
  if (at) {
    if (view !== undefined) view.setFloat64(p, indexTime, true);
    else {
      scratch.setFloat64(0, indexTime, true);
      for (let i = 0; i < 8; i++) bytes[p + i] = scratch.getUint8(i);
    }
    p += 8;
  }
  if (rows !== 1) {
    if (view !== undefined) view.setUint32(p, rows, true);
    else {
      scratch.setUint32(0, rows, true);
      for (let i = 0; i < 4; i++) bytes[p + i] = scratch.getUint8(i);
    }
    p += 4;
  }
  return p;
}

/** A value of a header and a payload written apart (a deduplication's empty payload). */
export function withValueHeader(kind: ValueKind, version: number, indexTime: ValueIndexTime, rows: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(valueHeaderBytes(indexTime, rows) + payload.length);
  out.set(payload, writeValueHeader(out, undefined, 0, kind, version, indexTime, rows));
  return out;
}

/** Where the payload of a value with a header starts (the value's first byte is the mark). */
export function valuePayloadStart(value: Uint8Array): number {
  const flags = value[3] as number;
  return 4 + ((flags & 3) === INDEX_AT ? 8 : 0) + (flags & HAS_ROWS ? 4 : 0);
}

/** A marked value's payload start, or undefined when its header is damaged (flags no version writes, or bytes missing). */
function soundPayloadStart(value: Uint8Array): number | undefined {
  const flags = value[3] as number;
  if (value.length < 4 || flags > 7 || (flags & 3) === 3) return undefined;
  const start = valuePayloadStart(value);
  return start <= value.length ? start : undefined;
}

/** A value's header; undefined for a value written before the header. */
export function valueHeader(value: Uint8Array): ValueHeader | undefined {
  if (value[0] !== STATE_VALUE_MARK) return undefined;
  if (value.length < 4) throw corruptStateValue('state', `has a header of ${value.length} bytes`);
  const flags = value[3] as number;
  const start = soundPayloadStart(value);
  if (start === undefined) throw corruptStateValue('state', `has a damaged header (flags ${flags}, ${value.length} bytes)`);
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const mode = flags & 3;
  return {
    kind: value[1] as number,
    version: value[2] as number,
    indexTime: mode === INDEX_AT ? view.getFloat64(4, true) : mode === INDEX_UNKNOWN ? undefined : null,
    rows: flags & HAS_ROWS ? view.getUint32(start - 4, true) : 1,
    start,
  };
}

/**
 * A value's header, checked to be of `kind` at a version this code reads; undefined for a value
 * written before the header (its kind's codec reads it the old way).
 */
export function expectValueHeader(value: Uint8Array, kind: ValueKind, maxVersion: number, what: string): ValueHeader | undefined {
  const h = valueHeader(value);
  if (h === undefined) return undefined;
  if (h.kind !== kind) throw corruptStateValue(what, `is a value of kind ${h.kind}, not ${kind}: the state was written by another operator`);
  if (h.version > maxVersion) throw corruptStateValue(what, `has format version ${h.version}, newer than this Sluice reads (${maxVersion})`);
  return h;
}

/** The same, for a hot path: where the payload starts, 0 for a value before the header; no object made. */
export function payloadStartOf(value: Uint8Array, kind: ValueKind, maxVersion: number, what: string): number {
  if (value[0] !== STATE_VALUE_MARK) return 0;
  const start = soundPayloadStart(value);
  if (start !== undefined && value[1] === kind && (value[2] as number) <= maxVersion) return start;
  // Damaged, or not this kind's: the full read says which.
  return (expectValueHeader(value, kind, maxVersion, what) as ValueHeader).start;
}

/**
 * The one error of a state value that does not decode: STATE_STORE_CORRUPT. The state task adds
 * the shard it was read from (`inShard`).
 */
export function corruptStateValue(what: string, why: string): SluiceError {
  return new SluiceError('STATE_STORE_CORRUPT', `a ${what} value ${why}`);
}

/** A state-value error of a task, naming the shard it came from (an error that names a file already is left). */
export function inShard(e: unknown, shardDir: string): unknown {
  if (!(e instanceof SluiceError) || e.code !== 'STATE_STORE_CORRUPT' || e.file !== undefined) return e;
  return new SluiceError('STATE_STORE_CORRUPT', `state shard ${shardDir}: ${e.message}; restore the shard or use a new checkpoint`, {
    file: shardDir,
    cause: e,
  });
}
