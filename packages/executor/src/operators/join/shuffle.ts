/**
 * A join side's rows across the shuffle, as column blocks: a map task sends every row of its side
 * (late ones dropped), each under its join key, and a block holds chunks of them:
 *
 *   chunk := [side u8][rows u32][keys length u32][keys][the side's columns in its schema's order]
 *   keys  := per row [key group u16][key length u32, 0xffffffff for a key with a null][key bytes]
 *
 * little-endian, the columns as vectorCodec.ts writes them. A map task over column batches writes
 * a chunk per batch and partition, picking the partition's rows out of the batch's vectors; one
 * fed rows (after another stateful operator) builds the vectors from its rows.
 */
import { ByteBuffer, encodeKey, keyGroupOf, partitionOfKeyGroup, type KeyType } from '@sluice/state';
import { resolveColumn } from '../../expressions/resolveColumn.js';
import { readerOf, readVector, writeVector } from '../../columns/vectorCodec.js';
import { isNullAt, rowsFromVectors, valueAt, VectorBuilder, type ColumnBatch, type Vector } from '../../columns/vectors.js';
import type { Row, Schema } from '../../schema/types.js';
import { shared } from '../../shuffle/shuffleCodec.js';
import type { StateLayoutMsg } from '../../task/messages.js';
import type { PartitionedPartials } from '../operator.js';
import { isLateAt } from '../stateContext.js';
import { eventTimeOf, type JoinSide, type StreamJoinOp } from './plan.js';

const NULL_KEY = 0xffffffff;
/** Rows a partition gathers from rows before they go into a chunk. */
const CHUNK_ROWS = 1 << 16;

/** A row of one side as the reduce side reads it; keyBytes null: a key with a null (it matches nothing). */
export type JoinRecord = [keyGroup: number, keyBytes: Uint8Array | null, row: Row, side: JoinSide];

/** A partition's block, and the rows of the chunk it is gathering (a batch's row numbers, or rows). */
interface PartitionOut {
  block: ByteBuffer;
  keys: ByteBuffer;
  picked: number[];
  rows: Row[];
}

/** The map side of one join side: rows or column batches in, one block per partition out. */
export class JoinBlockWriter {
  private readonly keys: string[];
  private readonly types: KeyType[];
  private readonly time: string | null;
  private readonly schema: Schema;
  private readonly parts = new Map<number, PartitionOut>();
  /** The partitions the current batch has rows for. */
  private readonly touched: PartitionOut[] = [];
  private readonly values: unknown[];
  numRecords = 0;
  numLate = 0;

  constructor(
    private readonly op: StreamJoinOp,
    private readonly side: JoinSide,
    private readonly layout: StateLayoutMsg,
    private readonly lateThresholdMs: number | null,
  ) {
    const s = side === 0 ? op.left : op.right;
    this.keys = side === 0 ? op.leftKeys : op.rightKeys;
    // Both sides encode keys with the left's types (the join checked that they are the same).
    this.types = op.leftKeys.map((k) => resolveColumn(k, op.left.schema).field.type);
    this.time = s.eventTime;
    this.schema = s.schema;
    this.values = new Array(this.keys.length);
  }

  /** A row of the side (in its schema). */
  addRow(row: Row): void {
    if (this.time !== null && isLateAt(eventTimeOf(row[this.time]), this.lateThresholdMs)) {
      this.numLate += 1;
      return;
    }
    let isNull = false;
    for (let i = 0; i < this.keys.length; i++) {
      const v = row[this.keys[i]!];
      isNull = this.keyValue(i, v === undefined ? null : v) || isNull;
    }
    const p = this.route(isNull);
    p.rows.push(row);
    if (p.rows.length >= CHUNK_ROWS) this.flushRows(p);
  }

  /** The rows of a batch (the side's columns; valid only during the call). */
  addBatch(batch: ColumnBatch): void {
    const keyVectors = this.keys.map((k) => batch.columns.get(k) as Vector);
    const time = this.time === null ? undefined : (batch.columns.get(this.time) as Vector);
    const late = this.lateThresholdMs;
    for (let i = 0; i < batch.length; i++) {
      if (time !== undefined && isLateAt(time.kind === 'num' ? (isNullAt(time, i) ? null : time.values[i]!) : eventTimeOf(valueAt(time, i)), late)) {
        this.numLate += 1;
        continue;
      }
      let isNull = false;
      for (let k = 0; k < keyVectors.length; k++) isNull = this.keyValue(k, valueAt(keyVectors[k]!, i)) || isNull;
      const p = this.route(isNull);
      if (p.picked.length === 0) this.touched.push(p);
      p.picked.push(i);
    }
    const vectors = this.schema.map((f) => batch.columns.get(f.name) as Vector);
    for (const p of this.touched) {
      const idx = Int32Array.from(p.picked);
      this.writeChunk(p, idx.length, (out) => {
        for (const v of vectors) writeVector(out, v, idx, idx.length);
      });
      p.picked.length = 0;
    }
    this.touched.length = 0;
  }

  /** Sets key value `i`; true when it makes the key one with a null (a null not compared null-safely). */
  private keyValue(i: number, v: unknown): boolean {
    if (v === null) {
      this.values[i] = null;
      return this.op.nullSafe?.[i] !== true;
    }
    // -0 and 0 are one key (as `normalizer` makes them).
    this.values[i] = v === 0 ? 0 : v;
    return false;
  }

  /** Writes the key of `values` to its partition's chunk and returns the partition. */
  private route(isNull: boolean): PartitionOut {
    const keyBytes = isNull ? null : encodeKey(this.values, this.types);
    const keyGroup = keyBytes === null ? 0 : keyGroupOf(keyBytes, this.layout.keyGroups);
    const partition = partitionOfKeyGroup(keyGroup, this.layout);
    let p = this.parts.get(partition);
    if (p === undefined) {
      p = { block: new ByteBuffer(1 << 12), keys: new ByteBuffer(1 << 10), picked: [], rows: [] };
      this.parts.set(partition, p);
    }
    const k = p.keys;
    k.ensure(6 + (keyBytes?.length ?? 0));
    k.view.setUint16(k.pos, keyGroup, true);
    k.view.setUint32(k.pos + 2, keyBytes === null ? NULL_KEY : keyBytes.length, true);
    if (keyBytes !== null) k.buf.set(keyBytes, k.pos + 6);
    k.pos += 6 + (keyBytes?.length ?? 0);
    this.numRecords += 1;
    return p;
  }

  private flushRows(p: PartitionOut): void {
    const rows = p.rows;
    this.writeChunk(p, rows.length, (out) => {
      for (const f of this.schema) {
        const b = new VectorBuilder(f.type, rows.length);
        for (const row of rows) b.push(row[f.name]);
        writeVector(out, b.build(), null, rows.length);
      }
    });
    p.rows = [];
  }

  private writeChunk(p: PartitionOut, count: number, columns: (out: ByteBuffer) => void): void {
    const out = p.block;
    const keys = p.keys.bytes();
    out.ensure(9 + keys.length);
    out.buf[out.pos] = this.side;
    out.view.setUint32(out.pos + 1, count, true);
    out.view.setUint32(out.pos + 5, keys.length, true);
    out.buf.set(keys, out.pos + 9);
    out.pos += 9 + keys.length;
    columns(out);
    p.keys.pos = 0;
  }

  finish(): PartitionedPartials {
    for (const p of this.parts.values()) if (p.rows.length > 0) this.flushRows(p);
    const blocks = [...this.parts.entries()].sort(([a], [b]) => a - b).map(([partition, p]) => ({ partition, data: shared(p.block.bytes()) }));
    return { blocks, numRecords: this.numRecords, numLate: this.numLate };
  }
}

/** A chunk of a block, read: its side, rows, their keys (offsets into the block) and columns. */
export interface JoinChunk {
  side: JoinSide;
  count: number;
  /** The block; row i's key bytes are data[keyAt[i], keyAt[i] + keyLength[i]), keyAt[i] -1 for a key with a null. */
  data: Uint8Array;
  keyAt: Int32Array;
  keyLength: Int32Array;
  keyGroup: Int32Array;
  /** The side's columns, in its schema's order. */
  vectors: Vector[];
}

/** The chunks of a block, in the order they were sent. */
export function readJoinChunks(data: Uint8Array, schemas: readonly [Schema, Schema], into: JoinChunk[]): void {
  const r = readerOf(data);
  while (r.pos < data.length) {
    const side = data[r.pos] as JoinSide;
    const count = r.view.getUint32(r.pos + 1, true);
    const keysLength = r.view.getUint32(r.pos + 5, true);
    let k = r.pos + 9;
    r.pos = k + keysLength;
    const schema = schemas[side];
    if (schema === undefined) throw new RangeError(`a join block's chunk names side ${side}`);
    const keyAt = new Int32Array(count);
    const keyLength = new Int32Array(count);
    const keyGroup = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      keyGroup[i] = r.view.getUint16(k, true);
      const len = r.view.getUint32(k + 2, true);
      k += 6;
      if (len === NULL_KEY) keyAt[i] = -1;
      else {
        keyAt[i] = k;
        keyLength[i] = len;
        k += len;
      }
    }
    into.push({ side, count, data, keyAt, keyLength, keyGroup, vectors: schema.map(() => readVector(r, count)) });
  }
}

/** The rows of a block, per side, in the order they were sent (each key's bytes a view into the block; tests). */
export function decodeJoinBlock(data: Uint8Array, schemas: readonly [Schema, Schema], into: [JoinRecord[], JoinRecord[]]): void {
  const chunks: JoinChunk[] = [];
  readJoinChunks(data, schemas, chunks);
  for (const c of chunks) {
    const rows = rowsFromVectors(c.vectors, schemas[c.side], c.count);
    for (let i = 0; i < c.count; i++) {
      const at = c.keyAt[i]!;
      into[c.side].push([c.keyGroup[i]!, at < 0 ? null : data.subarray(at, at + c.keyLength[i]!), rows[i]!, c.side]);
    }
  }
}
