/**
 * Changelog checkpointing of a LevelDB shard (as Spark's RocksDB store offers with
 * stateStore.rocksdb.changelogCheckpointing.enabled): a commit is durable once the LevelDB
 * operations it plans (changes, undo record, undo pruning, meta last) are in a synced file, a
 * sequential write of a few MB that costs a few ms, where LevelDB's own write of 100k entries costs
 * about 50 ms. The record is streamed to the file while the state task builds it, so a batch that
 * changes millions of keys never holds them all. LevelDB is brought up to date in the background,
 * in batches of a few MB (meta N comes last, so a crash half way leaves LevelDB at N - 1 and the
 * record is applied again whole), and every other operation of the store waits for that first. On
 * open, a record LevelDB lacks is applied before anything reads.
 *
 * The file `sluice-changelog` in the shard directory (LevelDB ignores files it does not name)
 * holds one record: a commit starts only after the previous record reached LevelDB, so it
 * truncates the file and writes its own. The footer is written after the rest is synced, and
 * synced itself: a record without its footer (or with another record's) was torn by a crash,
 * its commit never returned, and it is ignored.
 *
 *   record = header ops footer
 *   header = [magic u32 'SLCL'][version u8 = 2][batchId f64][priorMarker f64]
 *   op     = [0x01 put | 0x00 del][keyLen u32][key] and for a put [valueLen u32][value]
 *   footer = [count u32][batchId f64][byteLength f64][magic u32]
 *
 * integers big-endian.
 */
import { ByteBuffer } from './byteBuffer.js';
import { closeSync, fdatasyncSync, fsyncSync, fstatSync, ftruncateSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const CHANGELOG_FILE = 'sluice-changelog';
const MAGIC = 0x534c434c;
const VERSION = 2;
const HEADER = 21;
const FOOTER = 24;
/** Bytes the writer buffers before it appends them, and the reader reads at a time. */
export const CHANGELOG_CHUNK = 4 << 20;

/** Appends ops in the record layout to a growing byte buffer (ops stay contiguous). */
export class OpSink extends ByteBuffer {
  count = 0;

  constructor() {
    super(1 << 16);
  }

  put(key: Uint8Array, value: Uint8Array): void {
    this.ensure(9 + key.length + value.length);
    this.buf[this.pos] = 1;
    this.view.setUint32(this.pos + 1, key.length);
    this.buf.set(key, this.pos + 5);
    this.pos += 5 + key.length;
    this.view.setUint32(this.pos, value.length);
    this.buf.set(value, this.pos + 4);
    this.pos += 4 + value.length;
    this.count++;
  }

  /** The start of a put whose `length` value bytes the caller appends itself (the undo record). */
  putHeader(key: Uint8Array, length: number): void {
    this.ensure(9 + key.length);
    this.buf[this.pos] = 1;
    this.view.setUint32(this.pos + 1, key.length);
    this.buf.set(key, this.pos + 5);
    this.pos += 5 + key.length;
    this.view.setUint32(this.pos, length);
    this.pos += 4;
    this.count++;
  }

  del(key: Uint8Array): void {
    this.ensure(5 + key.length);
    this.buf[this.pos] = 0;
    this.view.setUint32(this.pos + 1, key.length);
    this.buf.set(key, this.pos + 5);
    this.pos += 5 + key.length;
    this.count++;
  }

  /**
   * The bytes so far, as a view valid until the next write (the sink reuses its buffer, so a
   * commit that streams many chunks allocates one), and an empty sink; the count goes on.
   */
  take(): Uint8Array {
    const out = this.bytes();
    this.pos = 0;
    return out;
  }
}

/** Where the complete ops of bytes[0, end) end (a walk over lengths: no views, no objects). */
export function opsEnd(bytes: Uint8Array, end: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  for (;;) {
    if (p + 5 > end) return p;
    const kl = v.getUint32(p + 1);
    let next = p + 5 + kl;
    if (bytes[p] === 1) {
      if (next + 4 > end) return p;
      next += 4 + v.getUint32(next);
    }
    if (next > end) return p;
    p = next;
  }
}

/** Where forEachOp's ops go: a LevelDB chained batch, or anything with its two methods. */
export interface OpTarget {
  put(key: Uint8Array, value: Uint8Array): unknown;
  del(key: Uint8Array): unknown;
}

/**
 * Calls `to.put` or `to.del` for each op of bytes[0, end) (complete ops only, as opsEnd found
 * them), with views into `bytes`; returns how many there were. Methods of an object, not two
 * closures made per call: V8 inlines a closure into this loop's optimized code, and drops that
 * code once the closure is collected, so every commit would compile the loop again.
 */
export function forEachOp(bytes: Uint8Array, end: number, to: OpTarget): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  let n = 0;
  while (p < end) {
    const kl = v.getUint32(p + 1);
    const k0 = p + 5;
    if (bytes[p] !== 1) {
      to.del(bytes.subarray(k0, k0 + kl));
      p = k0 + kl;
    } else {
      const vl = v.getUint32(k0 + kl);
      const v0 = k0 + kl + 4;
      to.put(bytes.subarray(k0, k0 + kl), bytes.subarray(v0, v0 + vl));
      p = v0 + vl;
    }
    n++;
  }
  return n;
}

/** The full length of the op that starts bytes[0, have), once its header is there. */
function opLength(bytes: Uint8Array, have: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kl = v.getUint32(1);
  if (bytes[0] !== 1) return 5 + kl;
  return have < 9 + kl ? 9 + kl : 9 + kl + v.getUint32(5 + kl);
}

export interface ChangelogRecordInfo {
  batchId: number;
  priorMarker: number;
  count: number;
  /** Bytes of ops, from HEADER. */
  opBytes: number;
}

/** The changelog file of one open shard. */
export class ChangelogFile {
  private fd: number | undefined;
  private named = false;
  private written = 0;

  constructor(readonly path: string) {}

  static of(dir: string): ChangelogFile {
    return new ChangelogFile(join(dir, CHANGELOG_FILE));
  }

  private open(): number {
    if (this.fd === undefined) this.fd = openSync(this.path, 'a+');
    if (!this.named) {
      // The file's name must be durable too, once.
      const dir = openSync(dirname(this.path), 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
      this.named = true;
    }
    return this.fd;
  }

  private append(bytes: Uint8Array): void {
    const fd = this.open();
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, this.written + done);
    this.written += bytes.length;
  }

  /** Starts a record (the previous one, already in LevelDB, goes). */
  begin(batchId: number, priorMarker: number): void {
    ftruncateSync(this.open(), 0);
    this.written = 0;
    const h = new Uint8Array(HEADER);
    const v = new DataView(h.buffer);
    v.setUint32(0, MAGIC);
    h[4] = VERSION;
    v.setFloat64(5, batchId);
    v.setFloat64(13, priorMarker);
    this.append(h);
  }

  /** Appends ops bytes (OpSink.take(), or a value after OpSink.putHeader). */
  appendOps(bytes: Uint8Array): void {
    this.append(bytes);
  }

  /** Syncs the ops, then writes and syncs the footer: the commit is durable when this returns. */
  seal(batchId: number, priorMarker: number, count: number): ChangelogRecordInfo {
    const fd = this.open();
    fdatasyncSync(fd);
    const f = new Uint8Array(FOOTER);
    const v = new DataView(f.buffer);
    v.setUint32(0, count);
    v.setFloat64(4, batchId);
    v.setFloat64(12, this.written + FOOTER);
    v.setUint32(20, MAGIC);
    this.append(f);
    fdatasyncSync(fd);
    return { batchId, priorMarker, count, opBytes: this.written - HEADER - FOOTER };
  }

  /** The sealed record on disk, if there is one. */
  info(): ChangelogRecordInfo | undefined {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < HEADER + FOOTER) return undefined;
      const h = new Uint8Array(HEADER);
      const f = new Uint8Array(FOOTER);
      readSync(fd, h, 0, HEADER, 0);
      readSync(fd, f, 0, FOOTER, size - FOOTER);
      const hv = new DataView(h.buffer);
      const fv = new DataView(f.buffer);
      if (hv.getUint32(0) !== MAGIC || h[4] !== VERSION || fv.getUint32(20) !== MAGIC) return undefined;
      const batchId = hv.getFloat64(5);
      if (fv.getFloat64(4) !== batchId || fv.getFloat64(12) !== size) return undefined;
      return { batchId, priorMarker: hv.getFloat64(13), count: fv.getUint32(0), opBytes: size - HEADER - FOOTER };
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Reads the sealed record's ops in pieces of about CHANGELOG_CHUNK bytes (an op is never split):
   * `fn` gets each piece as bytes[0, end), valid during the call, and returns how many ops it held,
   * or -1 to stop there. Gives whether every op was read.
   */
  async readOps(info: ChangelogRecordInfo, fn: (bytes: Uint8Array, end: number, last: boolean) => Promise<number>): Promise<boolean> {
    const fd = openSync(this.path, 'r');
    try {
      let buf = new Uint8Array(CHANGELOG_CHUNK);
      let have = 0;
      let offset = HEADER;
      const end = HEADER + info.opBytes;
      let seen = 0;
      while (offset < end || have > 0) {
        if (have === buf.length) {
          // An op larger than the buffer (the undo record): grow to exactly its size.
          const bigger = new Uint8Array(Math.max(opLength(buf, have), buf.length + 1));
          bigger.set(buf);
          buf = bigger;
        }
        const n = offset < end ? readSync(fd, buf, have, Math.min(buf.length - have, end - offset), offset) : 0;
        offset += n;
        have += n;
        const used = opsEnd(buf, have);
        if (used === 0 && offset >= end) throw new Error(`${this.path}: the record ends inside an operation`);
        if (used > 0) {
          const n = await fn(buf, used, offset >= end && used === have);
          if (n < 0) return false;
          seen += n;
        }
        buf.copyWithin(0, used, have);
        have -= used;
      }
      if (seen !== info.count) throw new Error(`${this.path}: the record holds ${seen} operations, its footer says ${info.count}`);
      return true;
    } finally {
      closeSync(fd);
    }
  }

  /** Empties the file (synced): after a rollback its record must not be applied again. */
  clear(): void {
    try {
      const fd = this.open();
      ftruncateSync(fd, 0);
      fdatasyncSync(fd);
      this.written = 0;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }

  /**
   * Frees the disk of a record LevelDB now holds (not synced: if the truncation is lost, the
   * record is at or below LevelDB's marker and is never applied again).
   */
  discard(): void {
    if (this.fd === undefined) return;
    ftruncateSync(this.fd, 0);
    this.written = 0;
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
