/**
 * A ShardStore in memory, for tests: the same records (meta, undo) and the same commit and
 * rollback plans as LevelShardStore (shardRecords.ts), over a sorted map. A `MemoryVolume` plays
 * the directory: it outlives the store, so "close and reopen" and "locked elsewhere" behave as on
 * disk. It counts what it writes, so tests can check that a commit costs O(changes).
 */
import { SluiceError } from './errors.js';
import { fault } from './faults.js';
import { META_KEY, undoKey, undoRange, batchIdOfUndoKey } from './layout.js';
import {
  NEW_SHARD,
  Serial,
  decodeMeta,
  decodeUndo,
  planCommit,
  planMove,
  planResetMarker,
  planPrune,
  planRollback,
  storeClosed,
  undoMissing,
  type ShardOp,
  type ShardState,
} from './shardRecords.js';
import type { CommitBuilder, CommitResult, ShardChange, ShardStore } from './ShardStore.js';

// Keys are held as latin1 strings (one char per byte): JS string order is then unsigned byte order.
const toStr = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
const fromStr = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));

/** The "disk" of a memory shard. */
export class MemoryVolume {
  readonly data = new Map<string, Uint8Array>();
  /** Sorted keys, rebuilt lazily after inserts and deletes. */
  sorted: string[] | null = [];
  locked = false;
  /** Bytes of keys and values held. */
  bytes = 0;

  constructor(readonly name = 'memory') {}

  apply(ops: readonly ShardOp[]): number {
    for (const op of ops) {
      const k = toStr(op.key);
      const old = this.data.get(k);
      if (old !== undefined) this.bytes -= k.length + old.length;
      if (op.type === 'put') {
        if (old === undefined) this.sorted = null;
        this.data.set(k, op.value.slice());
        this.bytes += k.length + op.value.length;
      } else if (old !== undefined) {
        this.data.delete(k);
        this.sorted = null;
      }
    }
    return ops.length;
  }

  sortedKeys(): string[] {
    if (this.sorted === null) this.sorted = [...this.data.keys()].sort();
    return this.sorted;
  }
}

export interface MemoryShardStats {
  commits: number;
  rollbacks: number;
  /** Entries written by all commits. */
  entriesWritten: number;
  /** Entries written by each commit, in order. */
  entriesPerCommit: number[];
}

export async function openMemoryShard(volume: MemoryVolume = new MemoryVolume()): Promise<MemoryShardStore> {
  if (volume.locked) {
    throw new SluiceError('STATE_STORE_LOCKED', `state store ${volume.name} is open elsewhere`, { file: volume.name });
  }
  const metaBytes = volume.data.get(toStr(META_KEY));
  const meta = metaBytes === undefined ? NEW_SHARD : decodeMeta(metaBytes, volume.name);
  const [gte, lt] = undoRange();
  const undoIds = rangeOf(volume, gte, lt).map(([k]) => batchIdOfUndoKey(k));
  volume.locked = true;
  return new MemoryShardStore(volume, { ...meta, undoIds });
}

function lowerBound(keys: string[], k: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function rangeOf(v: MemoryVolume, gte: Uint8Array, lt: Uint8Array, limit = -1): Array<[Uint8Array, Uint8Array]> {
  const keys = v.sortedKeys();
  const hi = toStr(lt);
  const out: Array<[Uint8Array, Uint8Array]> = [];
  for (let i = lowerBound(keys, toStr(gte)); i < keys.length; i++) {
    const k = keys[i] as string;
    if (k >= hi || (limit >= 0 && out.length >= limit)) break;
    out.push([fromStr(k), (v.data.get(k) as Uint8Array).slice()]);
  }
  return out;
}

export class MemoryShardStore implements ShardStore {
  readonly stats: MemoryShardStats = { commits: 0, rollbacks: 0, entriesWritten: 0, entriesPerCommit: [] };
  private closed = false;
  private readonly serial = new Serial();

  constructor(
    readonly volume: MemoryVolume,
    private state: ShardState,
  ) {}

  get marker(): number {
    return this.state.marker;
  }

  get numRows(): number {
    return this.state.numRows;
  }

  get undoBatchIds(): readonly number[] {
    return this.state.undoIds;
  }

  async getMany(keys: Uint8Array[]): Promise<Array<Uint8Array | undefined>> {
    this.checkOpen();
    return keys.map((k) => this.volume.data.get(toStr(k))?.slice());
  }

  async range(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Array<[Uint8Array, Uint8Array]>> {
    this.checkOpen();
    return rangeOf(this.volume, gte, lt, limit ?? -1);
  }

  async rangeKeys(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Uint8Array[]> {
    return (await this.range(gte, lt, limit)).map(([k]) => k);
  }

  commit(batchId: number, changes: ShardChange[], rowDelta: number, pruneUndoBelow: number): Promise<CommitResult> {
    return this.serial.run(async () => {
      this.checkOpen();
      const start = performance.now();
      const plan = planCommit(this.state, batchId, changes, rowDelta, pruneUndoBelow, this.volume.name);
      const written = this.volume.apply(plan.ops);
      this.state = plan.next;
      this.stats.commits++;
      this.stats.entriesWritten += written;
      this.stats.entriesPerCommit.push(written);
      fault('after-state-commit');
      return { entriesWritten: written, commitTimeMs: performance.now() - start };
    });
  }

  beginCommit(batchId: number): Promise<CommitBuilder> {
    return collectingCommit(this, batchId);
  }

  applyMove(ops: readonly ShardOp[], rowDelta: number): Promise<void> {
    return this.serial.run(async () => {
      this.checkOpen();
      const plan = planMove(this.state, ops, rowDelta);
      this.volume.apply(plan.ops);
      this.state = plan.next;
    });
  }

  resetMarker(batchId: number): Promise<void> {
    return this.serial.run(async () => {
      this.checkOpen();
      const plan = planResetMarker(this.state, batchId);
      this.volume.apply(plan.ops);
      this.state = plan.next;
    });
  }

  rollbackIfAt(batchId: number): Promise<boolean> {
    return this.serial.run(async () => {
      this.checkOpen();
      if (this.state.marker !== batchId) return false;
      const bytes = this.volume.data.get(toStr(undoKey(batchId)));
      if (bytes === undefined) throw undoMissing(this.volume.name, batchId);
      const plan = planRollback(this.state, decodeUndo(bytes, this.volume.name));
      fault('mid-rollback');
      this.volume.apply(plan.ops);
      this.state = plan.next;
      this.stats.rollbacks++;
      return true;
    });
  }

  pruneUndoBelow(batchId: number): Promise<number> {
    return this.serial.run(async () => {
      this.checkOpen();
      const plan = planPrune(this.state, batchId);
      this.volume.apply(plan.ops);
      this.state = plan.next;
      return plan.ops.length;
    });
  }

  /** Bytes of keys and values held (approximate: ignores the map's own overhead). */
  memoryUsedBytes(): number {
    return this.volume.bytes;
  }

  /** The same bytes: a memory store holds its whole state in memory. */
  async stateBytes(): Promise<number> {
    this.checkOpen();
    return this.volume.bytes;
  }

  close(): Promise<void> {
    return this.serial.run(async () => {
      if (this.closed) return;
      this.closed = true;
      this.volume.locked = false;
    });
  }

  private checkOpen(): void {
    if (this.closed) throw storeClosed(this.volume.name);
  }
}

/**
 * A CommitBuilder that keeps copies of the changes and commits them at the end (a store whose
 * commit holds its changes anyway, as the memory store does).
 */
async function collectingCommit(store: ShardStore, batchId: number): Promise<CommitBuilder> {
  if (!Number.isSafeInteger(batchId) || batchId < 0) throw new RangeError(`batch id ${batchId} is not a non-negative integer`);
  const changes: ShardChange[] = [];
  const change = (key: Uint8Array, value: Uint8Array | null, prior: Uint8Array | null): void => {
    changes.push({ key: key.slice(), value: value === null ? null : value.slice(), prior: prior === null ? null : prior.slice() });
  };
  return {
    add: (more) =>
      more.forEach((c) => {
        change(c.key, c.value, c.prior);
      }),
    change,
    finish: (rowDelta, pruneUndoBelow) => store.commit(batchId, changes, rowDelta, pruneUndoBelow),
  };
}

/** The entries each commit of a wrapped store wrote, from its CommitResult. */
export class InstrumentedShardStore implements ShardStore {
  readonly entriesPerCommit: number[] = [];

  constructor(readonly inner: ShardStore) {}

  get marker(): number {
    return this.inner.marker;
  }
  get numRows(): number {
    return this.inner.numRows;
  }
  getMany(keys: Uint8Array[]): Promise<Array<Uint8Array | undefined>> {
    return this.inner.getMany(keys);
  }
  range(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Array<[Uint8Array, Uint8Array]>> {
    return this.inner.range(gte, lt, limit);
  }
  rangeKeys(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Uint8Array[]> {
    return this.inner.rangeKeys(gte, lt, limit);
  }
  async commit(batchId: number, changes: ShardChange[], rowDelta: number, pruneUndoBelow: number): Promise<CommitResult> {
    const r = await this.inner.commit(batchId, changes, rowDelta, pruneUndoBelow);
    this.entriesPerCommit.push(r.entriesWritten);
    return r;
  }
  async beginCommit(batchId: number): Promise<CommitBuilder> {
    const inner = await this.inner.beginCommit(batchId);
    return {
      add: (changes) => inner.add(changes),
      change: (key, value, prior) => inner.change(key, value, prior),
      finish: async (rowDelta, pruneUndoBelow) => {
        const r = await inner.finish(rowDelta, pruneUndoBelow);
        this.entriesPerCommit.push(r.entriesWritten);
        return r;
      },
    };
  }
  rollbackIfAt(batchId: number): Promise<boolean> {
    return this.inner.rollbackIfAt(batchId);
  }
  pruneUndoBelow(batchId: number): Promise<number> {
    return this.inner.pruneUndoBelow(batchId);
  }
  applyMove(ops: readonly ShardOp[], rowDelta: number): Promise<void> {
    return this.inner.applyMove(ops, rowDelta);
  }
  resetMarker(batchId: number): Promise<void> {
    return this.inner.resetMarker(batchId);
  }
  memoryUsedBytes(): number {
    return this.inner.memoryUsedBytes();
  }
  stateBytes(): Promise<number> {
    return this.inner.stateBytes();
  }
  close(options?: { settle?: boolean }): Promise<void> {
    return this.inner.close(options);
  }
}
