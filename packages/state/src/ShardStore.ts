/**
 * The state of one stateful operator lives in a few stores ("shards"), each holding a contiguous
 * block of partitions. A shard is a sorted byte-key store (LevelDB in production, memory in
 * tests) with one extra duty: exactly-once commits.
 *
 * Exactly-once uses undo records. `commit(N)` writes, in one atomic synced batch, the changes of
 * batch N, an undo record holding the prior values of every changed key (and the prior marker and
 * row count), and the marker N. Every attempt at batch N (a retry in this run or a replay after a
 * restart) first calls `rollbackIfAt(N)`, which restores the prior values when the marker is N,
 * so the attempt starts from the state of N-1. An undo record is pruned once the driver reports
 * `commits/N` durable (`pruneUndoBelow`). Markers are sparse (a shard without data in a batch is
 * not committed), so a rollback restores the recorded prior marker rather than assuming N-1.
 */

export interface ShardChange {
  key: Uint8Array;
  /** New value; null deletes the key. */
  value: Uint8Array | null;
  /** Value before this batch (null: absent), recorded in the undo record. */
  prior: Uint8Array | null;
}

/**
 * A commit given in pieces (ShardStore.beginCommit), so that a batch that changes millions of keys
 * never holds them all as objects: each `add` encodes its changes and lets them go. The commit is
 * the same one atomic batch as `commit` writes; nothing is visible before `finish`.
 */
export interface CommitBuilder {
  add(changes: readonly ShardChange[]): void;
  /** One change, without a ShardChange object (the buffers are copied before it returns). */
  change(key: Uint8Array, value: Uint8Array | null, prior: Uint8Array | null): void;
  finish(rowDelta: number, pruneUndoBelow: number): Promise<CommitResult>;
}

export interface CommitResult {
  /** Entries written to the store, undo and marker included (the conformance suite checks O(changes)). */
  entriesWritten: number;
  commitTimeMs: number;
}

export interface ShardStore {
  /** Batch id of the last commit, -1 for a new shard. */
  readonly marker: number;
  /** Rows of state (kept by commit from `rowDelta`), for numRowsTotal. */
  readonly numRows: number;

  getMany(keys: Uint8Array[]): Promise<Array<Uint8Array | undefined>>;

  /** Entries with gte <= key < lt in (unsigned byte) key order, at most `limit` (default: all). */
  range(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Array<[Uint8Array, Uint8Array]>>;

  /** The keys of `range` alone (an eviction reads index entries, whose values are empty). */
  rangeKeys(gte: Uint8Array, lt: Uint8Array, limit?: number): Promise<Uint8Array[]>;

  /**
   * One atomic, synced batch: the changes, undo(N), marker N, numRows += rowDelta, and the removal
   * of undo records of batches below `pruneUndoBelow` (undo(N) itself is always kept).
   * `batchId` must be above the marker (else STATE_COMMIT_OUT_OF_ORDER: roll back first). A key
   * may appear more than once; the last change wins and a rollback restores the first prior.
   * Writes changes.length + 2 entries, plus one per pruned undo record.
   */
  commit(batchId: number, changes: ShardChange[], rowDelta: number, pruneUndoBelow: number): Promise<CommitResult>;

  /** The same commit in pieces (CommitBuilder); `batchId` is checked here and again at finish. */
  beginCommit(batchId: number): Promise<CommitBuilder>;

  /**
   * When the marker is `batchId`, restores the state before it (atomically). Returns whether it did.
   * Throws STATE_UNDO_MISSING when the marker is `batchId` but undo(batchId) was pruned: the driver
   * reported that batch durable, so it must not run again.
   */
  rollbackIfAt(batchId: number): Promise<boolean>;

  /**
   * Removes the undo records of batches below `batchId` in one synced batch (for maintenance between
   * tasks, e.g. of a shard that had no data in recent batches). Returns how many it removed.
   */
  pruneUndoBelow(batchId: number): Promise<number>;

  /**
   * Repartition only, with no task running on the shard: writes `ops` (raw data and index entries
   * put or deleted) in one atomic, synced batch, and moves the row count by `rowDelta`. The marker
   * and the undo records stay.
   */
  applyMove(ops: ReadonlyArray<{ type: 'put'; key: Uint8Array; value: Uint8Array } | { type: 'del'; key: Uint8Array }>, rowDelta: number): Promise<void>;

  /** Repartition only: drops every undo record and sets the marker to `batchId` (one synced batch). */
  resetMarker(batchId: number): Promise<void>;

  /** Approximate bytes of memory the store holds (caches, write buffers); see the implementation. */
  memoryUsedBytes(): number;

  /**
   * Approximate bytes of the state the store keeps (progress's memoryUsedBytes): small for a small
   * state and growing with it, unlike memoryUsedBytes, which is what the store was allotted.
   */
  stateBytes(): Promise<number>;

  /**
   * Closes the store. `settle`: first lets the background LevelDB write of the last changelog
   * commit finish (a query that stopped), so that the next open, by a repartition or another
   * process, has nothing to replay; without it that write stops after its current piece and the
   * next open finishes it (a shard closed to make room must not wait).
   */
  close(options?: { settle?: boolean }): Promise<void>;
}

/** Per-instance resources, derived by the driver from the per-worker budgets. */
export interface ShardOptions {
  cacheBytes: number;
  writeBufferBytes: number;
  maxOpenFiles: number;
  /** Decoded state its worker keeps for the shard between batches (charged to the worker's memory budget). */
  stateCacheBytes?: number;
  /** Commits append to a synced changelog and reach LevelDB in the background (changelog.ts). */
  changelog?: boolean;
  /**
   * With a changelog, commits under this many bytes still go to LevelDB directly, in one synced
   * batch (default: CHANGELOG_MIN_BYTES, 256 KB).
   */
  changelogMinBytes?: number;
}
