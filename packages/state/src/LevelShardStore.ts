/**
 * A ShardStore on LevelDB (classic-level). One instance per shard directory per worker thread
 * (LevelDB holds an exclusive lock; ShardRegistry enforces one open per dir per worker). Every
 * write is one `batch(..., { sync: true })`, so a commit is atomic and durable before the task
 * replies, and a crash between two commits leaves the store at one of them. With changelog
 * checkpointing (changelog.ts) a commit's batch is first made durable in the changelog, and
 * reaches LevelDB before the store's next operation.
 */
import { createRequire } from 'node:module';
import type { ClassicLevel } from 'classic-level';
import { CONF_KEYS } from './confKeys.js';
import { asEnvironmentError, environmentError } from './environment.js';
import { SluiceError } from './errors.js';
import { fault } from './faults.js';
import { META_KEY, undoKey, undoRange, batchIdOfUndoKey } from './layout.js';
import { ChangelogFile, forEachOp, type ChangelogRecordInfo } from './changelog.js';
import { CHANGELOG_MIN_BYTES, LevelCommit, writeBatch, writeOps, type Chained, type Db } from './levelCommit.js';

export { CHANGELOG_MIN_BYTES };

import {
  NEW_SHARD,
  Serial,
  decodeMeta,
  checkCommit,
  commitTail,
  decodeUndo,
  planMove,
  planResetMarker,
  planPrune,
  planRollback,
  storeClosed,
  undoMissing,
  type ShardOp,
  type ShardState,
} from './shardRecords.js';
import type { CommitBuilder, CommitResult, ShardChange, ShardOptions, ShardStore } from './ShardStore.js';

/** LevelDB never uses fewer: it clamps max_open_files to [64 + 10, 50000]. */
export const LEVELDB_MIN_OPEN_FILES = 74;
/** LevelDB clamps write_buffer_size to [64 KiB, 1 GiB]. */
export const LEVELDB_MIN_WRITE_BUFFER_BYTES = 64 << 10;
export const LEVELDB_MAX_WRITE_BUFFER_BYTES = 1 << 30;
const UINT32_MAX = 0xffffffff;

/**
 * Throws INVALID_CONF when the per-instance share of a worker budget is below what LevelDB will
 * use anyway (so the budget would be silently exceeded) or not an integer LevelDB accepts.
 */
export function validateShardOptions(opts: ShardOptions): void {
  if (!Number.isInteger(opts.maxOpenFiles) || opts.maxOpenFiles < LEVELDB_MIN_OPEN_FILES || opts.maxOpenFiles > UINT32_MAX) {
    throw new SluiceError(
      'INVALID_CONF',
      `${CONF_KEYS.stateStoreMaxOpenFiles} leaves ${opts.maxOpenFiles} file handles to a state store instance; LevelDB needs at least ${LEVELDB_MIN_OPEN_FILES}`,
      { option: CONF_KEYS.stateStoreMaxOpenFiles },
    );
  }
  for (const [name, v] of [
    ['cache', opts.cacheBytes],
    ['write buffer', opts.writeBufferBytes],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > UINT32_MAX) {
      throw new SluiceError('INVALID_CONF', `${CONF_KEYS.stateStoreMaxMemoryMB} gives a state store instance a ${name} of ${v} bytes`, {
        option: CONF_KEYS.stateStoreMaxMemoryMB,
      });
    }
  }
}

// LevelDB's native binding loads with the first shard a thread opens: a worker that runs only
// stateless tasks, and a session that starts no stateful query, never pay for it.
let classicLevel: typeof ClassicLevel | undefined;
const levelClass = (): typeof ClassicLevel =>
  (classicLevel ??= (createRequire(import.meta.url)('classic-level') as { ClassicLevel: typeof ClassicLevel }).ClassicLevel);

/** Opens (creating if missing) the shard at `dir`. */
export async function openLevelShard(dir: string, opts: ShardOptions): Promise<LevelShardStore> {
  validateShardOptions(opts);
  const Level = levelClass();
  const db: Db = new Level<Uint8Array, Uint8Array>(dir, {
    keyEncoding: 'view',
    valueEncoding: 'view',
    cacheSize: opts.cacheBytes,
    writeBufferSize: opts.writeBufferBytes,
    maxOpenFiles: opts.maxOpenFiles,
  });
  try {
    await db.open();
  } catch (e) {
    throw openError(dir, e);
  }
  try {
    await replayChangelog(db, dir, opts.changelog === true);
    const [metaBytes] = await db.getMany([META_KEY]);
    const meta = metaBytes === undefined ? NEW_SHARD : decodeMeta(metaBytes, dir);
    const [gte, lt] = undoRange();
    const undoIds = (await drain(db.keys({ gte, lt }))).map(batchIdOfUndoKey);
    // The files' first estimate (stateBytes asks for the next ones without waiting).
    const filesBytes = await db.approximateSize(ALL_KEYS[0], ALL_KEYS[1]);
    return new LevelShardStore(db, dir, { ...meta, undoIds }, opts, filesBytes);
  } catch (e) {
    await db.close().catch(() => undefined);
    if (e instanceof SluiceError) throw e;
    const env = environmentError(e, dir, 'read the state store', 'read');
    if (env) throw env;
    throw new SluiceError('STATE_STORE_CORRUPT', `state store ${dir} could not be read: ${errorText(e)}`, { file: dir, cause: e });
  }
}

/**
 * A commit that reached the changelog but not LevelDB (the process died in between) is applied
 * now, before anything reads: the record is the very batch the commit planned. A record LevelDB
 * already holds (its marker is at or past it) is left alone, and so is one that does not follow
 * LevelDB's marker: LevelDB lost more than the last commit, which the driver's marker check then
 * reports as STATE_STORE_CORRUPT rather than state with a hole in it.
 */
async function replayChangelog(db: Db, dir: string, keep: boolean): Promise<void> {
  const file = ChangelogFile.of(dir);
  try {
    const info = file.info();
    if (info !== undefined) {
      const [metaBytes] = await db.getMany([META_KEY]);
      const marker = metaBytes === undefined ? NEW_SHARD.marker : decodeMeta(metaBytes, dir).marker;
      if (info.batchId > marker && info.priorMarker === marker) await applyRecord(db, file, info, dir);
    }
    // Without changelog checkpointing nothing would clear it after a rollback: it goes now.
    if (!keep) file.remove();
  } catch (e) {
    if (e instanceof SluiceError) throw e;
    throw asEnvironmentError(e, dir, 'read the state changelog');
  } finally {
    file.close();
  }
}

/**
 * Writes a sealed changelog record to LevelDB in batches of about CHANGELOG_CHUNK bytes; the last
 * (meta N) is synced, which makes the earlier ones durable too (one log).
 */
async function applyRecord(db: Db, file: ChangelogFile, info: ChangelogRecordInfo, dir: string, stop = (): boolean => false): Promise<boolean> {
  return file.readOps(info, async (bytes, end, last) => {
    // Stopped half way, LevelDB is still at the prior marker (meta comes last): the record stays,
    // and the next open applies it whole.
    if (stop()) return -1;
    return writeBatch(db, dir, last, (batch) => forEachOp(bytes, end, batch));
  });
}

/** Every item of a LevelDB iterator (entries or keys), a thousand at a time; the iterator is closed. */
async function drain<T>(it: { nextv(size: number): Promise<T[]>; close(): Promise<void> }): Promise<T[]> {
  const out: T[] = [];
  try {
    for (;;) {
      const batch = await it.nextv(1000);
      if (batch.length === 0) break;
      for (const e of batch) out.push(e);
    }
  } finally {
    await it.close();
  }
  return out;
}

function openError(dir: string, e: unknown): SluiceError {
  const env = environmentError(e, dir, 'open the state store');
  if (env) return env;
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause?.code === 'LEVEL_LOCKED') {
    return new SluiceError('STATE_STORE_LOCKED', `state store ${dir} is open elsewhere (another worker or process holds its lock)`, {
      file: dir,
      cause: e,
    });
  }
  return new SluiceError('STATE_STORE_CORRUPT', `state store ${dir} could not be opened: ${errorText(e)}`, { file: dir, cause: e });
}

function errorText(e: unknown): string {
  const cause = (e as { cause?: unknown } | undefined)?.cause;
  const msg = e instanceof Error ? e.message : String(e);
  return cause instanceof Error ? `${msg} (${cause.message})` : msg;
}

/** A key below no prefix of layout.ts: a compaction of [NO_KEY, NO_KEY] touches no table. */
const NO_KEY = Uint8Array.of(0xff);
/** Every key of a shard: all of them start with a prefix byte of layout.ts, below NO_KEY. */
const ALL_KEYS: [Uint8Array, Uint8Array] = [Uint8Array.of(0x00), NO_KEY];

export class LevelShardStore implements ShardStore {
  private state: ShardState;
  private closed = false;
  private readonly serial = new Serial();
  private readonly changelog: ChangelogFile | undefined;
  /** The background LevelDB write of the last changelog commit (it never rejects). */
  private applying: Promise<void> = Promise.resolve();
  /** That commit's record while LevelDB lacks it (the write is pending, or it failed). */
  private pendingRecord: ChangelogRecordInfo | undefined;
  /** Whether LevelDB's next estimate of the shard's table files is being asked for (stateBytes). */
  private sizing = false;

  /** Use openLevelShard. */
  constructor(
    private readonly db: Db,
    readonly dir: string,
    state: ShardState,
    private readonly opts: ShardOptions,
    /** LevelDB's last estimate of the shard's table files (stateBytes). */
    private filesBytes: number,
  ) {
    this.state = state;
    this.changelog = opts.changelog ? ChangelogFile.of(dir) : undefined;
  }

  get marker(): number {
    return this.state.marker;
  }

  get numRows(): number {
    return this.state.numRows;
  }

  /** Batch ids of the undo records the store holds, ascending (for maintenance and tests). */
  get undoBatchIds(): readonly number[] {
    return this.state.undoIds;
  }

  async getMany(keys: Uint8Array[]): Promise<Array<Uint8Array | undefined>> {
    this.checkOpen();
    await this.caughtUp();
    if (keys.length === 0) return [];
    return this.db.getMany(keys);
  }

  async rangeKeys(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Uint8Array[]> {
    this.checkOpen();
    await this.caughtUp();
    return drain(this.db.keys({ gte, lt, limit: limit ?? -1 }));
  }

  async range(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Array<[Uint8Array, Uint8Array]>> {
    this.checkOpen();
    await this.caughtUp();
    return drain(this.db.iterator({ gte, lt, limit: limit ?? -1 }));
  }

  commit(batchId: number, changes: ShardChange[], rowDelta: number, pruneUndoBelow: number): Promise<CommitResult> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      checkCommit(this.state, batchId, rowDelta, this.dir);
      const commit = new LevelCommit(this, batchId, this.state, this.changelog, this.opts.changelogMinBytes);
      commit.add(changes);
      return this.end(commit, rowDelta, pruneUndoBelow);
    });
  }

  beginCommit(batchId: number): Promise<CommitBuilder> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      checkCommit(this.state, batchId, 0, this.dir);
      return new LevelCommit(this, batchId, this.state, this.changelog, this.opts.changelogMinBytes);
    });
  }

  /** LevelCommit's end: in the store's serial order, as every write. */
  finishCommit(commit: LevelCommit, rowDelta: number, pruneUndoBelow: number): Promise<CommitResult> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      return this.end(commit, rowDelta, pruneUndoBelow);
    });
  }

  private async end(commit: LevelCommit, rowDelta: number, pruneUndoBelow: number): Promise<CommitResult> {
    const start = performance.now();
    checkCommit(this.state, commit.batchId, rowDelta, this.dir);
    if (this.state !== commit.prior) throw new Error(`state store ${this.dir} changed while batch ${commit.batchId} was being committed`);
    const tail = commitTail(this.state, commit.batchId, rowDelta, pruneUndoBelow);
    const record = await commit.end(tail.ops);
    if (record !== undefined) {
      // After the task has replied; the next operation on this store waits for it (caughtUp).
      this.pendingRecord = record;
      this.applying = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => applyRecord(this.db, this.changelog!, record, this.dir, () => this.closed))
        .then(
          (complete) => {
            if (!complete || this.pendingRecord !== record) return;
            this.pendingRecord = undefined;
            try {
              this.changelog!.discard();
            } catch {
              // Only disk space: the record is at or below LevelDB's marker now, so it never applies again.
            }
          },
          () => undefined,
        );
    }
    this.state = tail.next;
    fault('after-state-commit');
    return { entriesWritten: commit.count, commitTimeMs: performance.now() - start };
  }

  /** A chained LevelDB batch (commits without a changelog write one). */
  chainedBatch(): Chained {
    return this.db.batch();
  }

  rollbackIfAt(batchId: number): Promise<boolean> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      if (this.state.marker !== batchId) return false;
      const [bytes] = await this.db.getMany([undoKey(batchId)]);
      if (bytes === undefined) throw undoMissing(this.dir, batchId);
      const undo = decodeUndo(bytes, this.dir);
      const plan = planRollback(this.state, undo);
      fault('mid-rollback');
      await this.write(plan.ops);
      // The rolled-back commit's record would apply again on top of the restored marker. A crash
      // before this leaves the shard at the batch again, which the next attempt rolls back again.
      try {
        this.changelog?.clear();
      } catch (e) {
        throw asEnvironmentError(e, this.dir, 'write the state changelog');
      }
      this.state = plan.next;
      return true;
    });
  }

  pruneUndoBelow(batchId: number): Promise<number> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      const plan = planPrune(this.state, batchId);
      if (plan.ops.length > 0) await this.write(plan.ops);
      this.state = plan.next;
      return plan.ops.length;
    });
  }

  applyMove(ops: readonly ShardOp[], rowDelta: number): Promise<void> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      const plan = planMove(this.state, ops, rowDelta);
      await this.write(plan.ops);
      this.state = plan.next;
    });
  }

  resetMarker(batchId: number): Promise<void> {
    return this.serial.run(async () => {
      this.checkOpen();
      await this.caughtUp();
      const plan = planResetMarker(this.state, batchId);
      await this.write(plan.ops);
      this.state = plan.next;
    });
  }

  /**
   * What LevelDB was allotted, not what it currently uses: the block cache plus one write buffer
   * (as LevelDB clamps it). While a full memtable is being flushed a second one exists, so the
   * peak can briefly exceed this by one write buffer; the per-worker budget should leave room.
   */
  memoryUsedBytes(): number {
    const wb = Math.min(LEVELDB_MAX_WRITE_BUFFER_BYTES, Math.max(LEVELDB_MIN_WRITE_BUFFER_BYTES, this.opts.writeBufferBytes));
    return this.opts.cacheBytes + wb;
  }

  /**
   * The state's bytes: LevelDB's estimate of its table files over every key of the shard (state,
   * eviction index, undo, meta), plus what LevelDB holds in memory for it (memtables, where recent
   * writes are before they reach a table file, and cached blocks), plus a changelog commit not yet
   * written to LevelDB. Approximate, as LevelDB's figures are, and never waited for: the files'
   * estimate is the last one LevelDB gave, and each call asks for the next in the background.
   * Waiting for it put LevelDB's own work behind every state task (a batch that closes as many keys
   * as it opens lost about a seventh of its throughput).
   */
  async stateBytes(): Promise<number> {
    this.checkOpen();
    if (!this.sizing) {
      this.sizing = true;
      this.db.approximateSize(ALL_KEYS[0], ALL_KEYS[1]).then(
        (bytes) => {
          this.filesBytes = bytes;
          this.sizing = false;
        },
        // An estimate the shard could not give (it closed meanwhile) keeps the last one.
        () => {
          this.sizing = false;
        },
      );
    }
    const memory = Number(this.db.getProperty('leveldb.approximate-memory-usage'));
    return this.filesBytes + (Number.isFinite(memory) ? memory : 0) + (this.pendingRecord?.opBytes ?? 0);
  }

  /** Waits for a running commit or rollback, then closes. Idempotent. */
  close(options: { settle?: boolean } = {}): Promise<void> {
    return this.serial.run(async () => {
      if (this.closed) return;
      if (options.settle) {
        await this.caughtUp();
        // LevelDB's memtable goes to a table file now (CompactRange flushes it first; the range
        // holds no key, so nothing else is compacted): the next open has no log to replay, which
        // for a large last commit took about as long as the commit itself.
        await this.db.compactRange(NO_KEY, NO_KEY);
      }
      this.closed = true;
      // A LevelDB write in the background stops after its current piece; the next open applies
      // the changelog's record instead, so a stop never waits for a large commit to reach LevelDB.
      await this.applying;
      this.changelog?.close();
      await this.db.close();
    });
  }

  /**
   * Waits for the background write of the last changelog commit; if it failed, writes it again
   * (a failure now is the operation's, with its code). LevelDB is then up to date.
   */
  private async caughtUp(): Promise<void> {
    await this.applying;
    const record = this.pendingRecord;
    if (record === undefined) return;
    try {
      await applyRecord(this.db, this.changelog!, record, this.dir);
    } catch (e) {
      if (e instanceof SluiceError) throw e;
      throw asEnvironmentError(e, this.dir, 'read the state changelog');
    }
    if (this.pendingRecord === record) this.pendingRecord = undefined;
  }

  private write(ops: ShardOp[]): Promise<void> {
    return writeOps(this.db, ops, this.dir);
  }

  private checkOpen(): void {
    if (this.closed) throw storeClosed(this.dir);
  }
}
