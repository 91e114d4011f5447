/**
 * Changelog checkpointing of a LevelDB shard (as Spark's RocksDB store offers with
 * stateStore.rocksdb.changelogCheckpointing.enabled): a commit is durable once the one batch of
 * LevelDB operations it plans (changes, undo record, meta) is appended to a synced file, a
 * sequential write of a few MB that costs a few ms, where LevelDB's own write of 100k entries costs
 * about 50 ms. LevelDB is brought up to date in the background, and every other operation of the
 * store waits for that first. On open, a record LevelDB lacks is applied before anything reads.
 *
 * The file `sluice-changelog` in the shard directory (LevelDB ignores files it does not name)
 * holds one record: a commit starts only after the previous record reached LevelDB, so it
 * overwrites it. A record torn by a crash fails its checksum and is ignored: its commit never
 * returned, so the driver runs the batch again.
 *
 *   record = [magic u32 'SLCL'][version u8 = 1][batchId f64][priorMarker f64][count u32] ops [checksum u32]
 *   op     = [0x01 put | 0x00 del][keyLen u32][key] and for a put [valueLen u32][value]
 *
 * integers big-endian; the checksum is murmur3-32 of everything before it.
 */
import { closeSync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { murmur3_x86_32 } from './murmur3.js';
import type { ShardOp } from './shardRecords.js';

export const CHANGELOG_FILE = 'sluice-changelog';
const MAGIC = 0x534c434c;
const VERSION = 1;
const HEADER = 25;

export interface ChangelogRecord {
  batchId: number;
  /** The marker the shard had before this commit: the record applies only on top of it. */
  priorMarker: number;
  ops: ShardOp[];
}

/**
 * The record's bytes, and the same operations as views into them: LevelDB's background write uses
 * those, so it never reads a buffer the caller of commit still owns.
 */
export function encodeChangelogRecord(batchId: number, priorMarker: number, ops: readonly ShardOp[]): { bytes: Uint8Array; ops: ShardOp[] } {
  let size = HEADER + 4;
  for (const op of ops) size += 5 + op.key.length + (op.type === 'put' ? 4 + op.value.length : 0);
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  v.setUint32(0, MAGIC);
  out[4] = VERSION;
  v.setFloat64(5, batchId);
  v.setFloat64(13, priorMarker);
  v.setUint32(21, ops.length);
  const views: ShardOp[] = [];
  let p = HEADER;
  for (const op of ops) {
    out[p] = op.type === 'put' ? 1 : 0;
    v.setUint32(p + 1, op.key.length);
    out.set(op.key, p + 5);
    const key = out.subarray(p + 5, p + 5 + op.key.length);
    p += 5 + op.key.length;
    if (op.type === 'put') {
      v.setUint32(p, op.value.length);
      out.set(op.value, p + 4);
      views.push({ type: 'put', key, value: out.subarray(p + 4, p + 4 + op.value.length) });
      p += 4 + op.value.length;
    } else views.push({ type: 'del', key });
  }
  v.setUint32(p, murmur3_x86_32(out.subarray(0, p)));
  return { bytes: out, ops: views };
}

/** The record in `bytes`, or undefined when there is none or it is torn (bad length or checksum). */
export function decodeChangelogRecord(bytes: Uint8Array): ChangelogRecord | undefined {
  if (bytes.length < HEADER + 4) return undefined;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0) !== MAGIC || bytes[4] !== VERSION) return undefined;
  const count = v.getUint32(21);
  const ops: ShardOp[] = [];
  let p = HEADER;
  for (let i = 0; i < count; i++) {
    if (p + 5 > bytes.length) return undefined;
    const put = bytes[p] === 1;
    const kl = v.getUint32(p + 1);
    if (p + 5 + kl > bytes.length) return undefined;
    const key = bytes.slice(p + 5, p + 5 + kl);
    p += 5 + kl;
    if (!put) {
      ops.push({ type: 'del', key });
      continue;
    }
    if (p + 4 > bytes.length) return undefined;
    const vl = v.getUint32(p);
    if (p + 4 + vl > bytes.length) return undefined;
    ops.push({ type: 'put', key, value: bytes.slice(p + 4, p + 4 + vl) });
    p += 4 + vl;
  }
  if (p + 4 !== bytes.length || v.getUint32(p) !== murmur3_x86_32(bytes.subarray(0, p))) return undefined;
  return { batchId: v.getFloat64(5), priorMarker: v.getFloat64(13), ops };
}

/** The changelog file of one open shard. */
export class ChangelogFile {
  private fd: number | undefined;

  constructor(readonly path: string) {}

  static of(dir: string): ChangelogFile {
    return new ChangelogFile(join(dir, CHANGELOG_FILE));
  }

  /** The record on disk, if a valid one is there. */
  read(): ChangelogRecord | undefined {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(this.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    return decodeChangelogRecord(bytes);
  }

  /** Replaces the record and syncs it: the commit is durable when this returns. */
  write(record: Uint8Array): void {
    if (this.fd === undefined) {
      this.fd = openSync(this.path, 'w');
      // The file's name must be durable too, once.
      const dir = openSync(dirname(this.path), 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
    }
    let done = 0;
    while (done < record.length) done += writeSync(this.fd, record, done, record.length - done, done);
    ftruncateSync(this.fd, record.length);
    fdatasyncSync(this.fd);
  }

  /** Empties the file (synced): after a rollback its record must not be applied again. */
  clear(): void {
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.path, 'r+');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
    }
    ftruncateSync(this.fd, 0);
    fdatasyncSync(this.fd);
  }

  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
