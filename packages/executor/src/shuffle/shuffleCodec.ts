/**
 * The shuffle between the map and the reduce side of a stateful batch. A map task sends one block
 * per partition (ShuffleBlock in messages.ts), one record per state key the task saw.
 *
 * Aggregation blocks are binary, since the seed query moves 100k partials a batch per task: each
 * record is
 *
 *   [dataKeyLen u32][dataKey][eventTimeMs f64 (NaN: none)][buffersLen u32][buffers]
 *
 * (lengths of 32 bits: a collect_set's buffer passes 64 KiB easily)
 *
 * with dataKey the state store key itself ([0x01][keyGroup u16 BE][keyBytes], layout.ts), so the
 * reduce side reads it in place, and buffers in aggBufferCodec.ts's encoding. The key values are
 * not sent: the reduce side decodes them from keyBytes when it emits a row.
 *
 * Deduplication blocks are msgpack (task/packers.ts's recordPackr: row objects of one shape share
 * one field list) of an array of [keyGroup, keyBytes, row, eventTimeMs]:
 *
 *   keyGroup     keyGroupOf(keyBytes, layout.keyGroups); partitionOfKeyGroup(keyGroup) is the
 *                block's partition
 *   keyBytes     encodeKey(key values, key types) from @sluice/state: the canonical key, byte-equal
 *                for equal keys whichever task produced them; decoded as a view into the block
 *   row          the first row of the key in this task, in engine form (the schema entering the
 *                operator)
 *   eventTimeMs  that row's event time, or null without an event-time column or when it is null
 *
 * A task sends each key at most once, but several tasks send the same key: the reduce side merges
 * aggregate records with equal keyBytes and keeps one deduplication record per key.
 *
 * A join of two streams sends every row, as column blocks (operators/join/shuffle.ts).
 *
 * A processor (transformWithState) sends every row too, a task's rows of a key together: a block
 * is msgpack [header, rows], the header binary, per key [keyGroup u16][keyLen u32][rowCount u32]
 * [keyBytes] (little-endian), and rows every key's rows in header order, in one array (recordPackr:
 * one field list for all of them).
 */
import { ByteBuffer, dataKey, decodeDataKey, decodeKey, PREFIX_DATA, type KeyType } from '@sluice/state';
import { decodeBuffers, encodeBuffers } from '../operators/aggBufferCodec.js';
import type { AggBuffer } from '../operators/aggregates.js';
import type { Row } from '../schema/types.js';
import { recordPackr as packr } from '../task/packers.js';

export type AggregateRecord = [keyGroup: number, keyBytes: Uint8Array, keyValues: unknown[], buffers: AggBuffer[]];
export type DedupRecord = [keyGroup: number, keyBytes: Uint8Array, row: Row, eventTimeMs: number | null];
/** A processor's rows of one grouping key in a map task (processor/batch.ts). */
export type GroupRecord = [keyGroup: number, keyBytes: Uint8Array, rows: Row[]];
export type ShuffleRecord = AggregateRecord | DedupRecord;

/**
 * Encodes a block into its own exactly-sized buffer: msgpackr returns views into a shared scratch
 * buffer, and a view crossing threads would clone (or transfer) the whole of that buffer.
 */
export function encodeBlock(records: readonly ShuffleRecord[]): Uint8Array {
  return shared(packr.pack(records));
}

/**
 * Blocks live in shared memory: they cross from the map task to the driver and from the driver to
 * the state task without a copy, and the driver still holds them for a retried state task.
 */
export function shared(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(new SharedArrayBuffer(bytes.length));
  out.set(bytes);
  return out;
}

/** Encodes a processor's block (layout above). */
export function encodeGroupBlock(records: readonly GroupRecord[]): Uint8Array {
  let size = 0;
  let numRows = 0;
  for (const [, key, rows] of records) {
    size += 10 + key.length;
    numRows += rows.length;
  }
  const header = new Uint8Array(size);
  const view = new DataView(header.buffer);
  const allRows: Row[] = new Array<Row>(numRows);
  let at = 0;
  let r = 0;
  for (const [kg, key, rows] of records) {
    view.setUint16(at, kg, true);
    view.setUint32(at + 2, key.length, true);
    view.setUint32(at + 6, rows.length, true);
    header.set(key, at + 10);
    at += 10 + key.length;
    for (const row of rows) allRows[r++] = row;
  }
  return shared(packr.pack([header, allRows]));
}

/** The records of a processor's block; each key's bytes are a view into the block. */
export function decodeGroupBlock(data: Uint8Array): GroupRecord[] {
  if (data.byteLength === 0) return [];
  const [header, rows] = packr.unpack(data) as [Uint8Array, Row[]];
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const out: GroupRecord[] = [];
  let r = 0;
  for (let at = 0; at < header.length; ) {
    const kg = view.getUint16(at, true);
    const len = view.getUint32(at + 2, true);
    const count = view.getUint32(at + 6, true);
    out.push([kg, header.subarray(at + 10, at + 10 + len), rows.slice(r, r + count)]);
    r += count;
    at += 10 + len;
  }
  return out;
}

export function decodeBlock<R extends ShuffleRecord = ShuffleRecord>(data: Uint8Array): R[] {
  return data.byteLength === 0 ? [] : (packr.unpack(data) as R[]);
}

/** Builds one aggregation block (record layout above). */
export class AggregateBlockWriter {
  private readonly out = new ByteBuffer(1 << 12);
  private recordBuffers = 0;

  /**
   * Starts a record of key group `keyGroup` and canonical key `key[0, keyLen)` whose buffers take
   * at most `maxBufferBytes`: returns where they go in `bytes`/`view`; endRecord closes it.
   */
  beginRecord(keyGroup: number, key: Uint8Array, keyLen: number, eventTimeMs: number | null, maxBufferBytes: number): number {
    const o = this.out;
    o.ensure(19 + keyLen + maxBufferBytes);
    const b = o.buf;
    const p = o.pos;
    o.view.setUint32(p, 3 + keyLen, true);
    b[p + 4] = PREFIX_DATA;
    b[p + 5] = keyGroup >>> 8;
    b[p + 6] = keyGroup & 0xff;
    for (let i = 0; i < keyLen; i++) b[p + 7 + i] = key[i]!;
    const t = p + 7 + keyLen;
    o.view.setFloat64(t, eventTimeMs ?? Number.NaN, true);
    this.recordBuffers = t + 12;
    return t + 12;
  }

  endRecord(end: number): void {
    this.out.view.setUint32(this.recordBuffers - 4, end - this.recordBuffers, true);
    this.out.pos = end;
  }

  get bytes(): Uint8Array {
    return this.out.buf;
  }

  get dataView(): DataView {
    return this.out.view;
  }

  add(keyGroup: number, keyBytes: Uint8Array, eventTimeMs: number | null, buffers: readonly AggBuffer[]): void {
    const o = this.out;
    const dk = dataKey(keyGroup, keyBytes);
    const b = encodeBuffers(buffers);
    o.ensure(16 + dk.length + b.length);
    o.view.setUint32(o.pos, dk.length, true);
    o.buf.set(dk, o.pos + 4);
    o.pos += 4 + dk.length;
    o.view.setFloat64(o.pos, eventTimeMs ?? Number.NaN, true);
    o.view.setUint32(o.pos + 8, b.length, true);
    o.buf.set(b, o.pos + 12);
    o.pos += 12 + b.length;
  }

  /** The block in exactly-sized shared memory (see `shared`). */
  finish(): Uint8Array {
    return shared(this.out.bytes());
  }
}

/**
 * The records of an aggregation block (layout above): each one's data key at data[k0, k0 + kl),
 * its event time (NaN: none), and its buffers at data[b0, end).
 */
export function forEachAggregateRecordAt(data: Uint8Array, fn: (k0: number, kl: number, t: number, b0: number, end: number) => void): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = 0;
  while (pos < data.length) {
    const kl = view.getUint32(pos, true);
    const k0 = pos + 4;
    pos = k0 + kl;
    const t = view.getFloat64(pos, true);
    const bl = view.getUint32(pos + 8, true);
    const b0 = pos + 12;
    pos = b0 + bl;
    fn(k0, kl, t, b0, pos);
  }
}

/** Calls `fn` for each record of an aggregation block; dataKey and buffers are views into it. */
export function forEachAggregateRecord(data: Uint8Array, fn: (dataKey: Uint8Array, eventTimeMs: number | null, buffers: Uint8Array) => void): void {
  forEachAggregateRecordAt(data, (k0, kl, t, b0, end) => fn(data.subarray(k0, k0 + kl), Number.isNaN(t) ? null : t, data.subarray(b0, end)));
}

/** An aggregation block as [keyGroup, keyBytes, keyValues, buffers] records (tests, debugging). */
export function decodeAggregateBlock(data: Uint8Array, keyTypes: readonly KeyType[]): AggregateRecord[] {
  const out: AggregateRecord[] = [];
  forEachAggregateRecord(data, (dk, _t, buffers) => {
    const { kg, key } = decodeDataKey(dk);
    out.push([kg, key, decodeKey(key, keyTypes), decodeBuffers(buffers)]);
  });
  return out;
}
