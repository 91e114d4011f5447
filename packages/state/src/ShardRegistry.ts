/**
 * The open shards of one worker thread. A shard directory is opened once per worker and reused by
 * every task and batch that touches it (LevelDB's lock allows one open per directory anyway);
 * two tasks asking at once share the same opening. Keep one registry per worker (a module-level
 * instance in the worker entry): a worker that dies releases its locks with it.
 *
 * The worker's budgets (stateStore.maxOpenFiles and maxMemoryMB) hold across every query whose
 * shards it hosts: before opening a shard, `use` closes the least recently used idle shards until
 * the open ones and the new one fit, and after each use until they fit again (a use may add table
 * files). Files are charged as LevelDB really holds them (its table
 * files, at most its table cache, plus its fixed files), measured after each use; memory as the
 * shard's configured caches and write buffers.
 */
import { readdirSync } from 'node:fs';
import { openLevelShard } from './LevelShardStore.js';
import type { ShardOptions, ShardStore } from './ShardStore.js';

export type ShardOpener = (dir: string, opts: ShardOptions) => Promise<ShardStore>;

/**
 * Handles a LevelDB instance holds besides table files: its LOCK, info LOG, MANIFEST and
 * write-ahead log, the table a compaction is writing, and Sluice's changelog during a commit.
 */
export const SHARD_FIXED_FILES = 6;
/** LevelDB's table cache keeps at most max_open_files minus this many table files open. */
const NON_TABLE_CACHE_FILES = 10;

/** One worker's budgets, shared by all the shards it hosts. */
export interface WorkerBudget {
  /** File handles its shards may hold (its share of sluice.sql.streaming.stateStore.maxOpenFiles). */
  maxOpenFiles: number;
  /** Bytes its shards' caches and write buffers may take (sluice.sql.streaming.stateStore.maxMemoryMB). */
  maxMemoryBytes: number;
}

/** A worker's open shards, what they are charged, and its budget. */
export interface WorkerStateUsage extends WorkerBudget {
  /** State shards (LevelDB instances) open in the worker. */
  openShards: number;
  /** Handles charged: the table files LevelDB may hold open plus its fixed files (an upper bound). */
  fileHandles: number;
  /** Memory charged: caches and write buffers, in bytes. */
  memoryBytes: number;
  /** Idle shards closed to make room since the worker started. */
  shardsClosedForBudget: number;
}

interface OpenShard {
  opening: Promise<ShardStore>;
  opts: ShardOptions;
  /** File handles and bytes charged to the budget. */
  files: number;
  memoryBytes: number;
  /** Uses in progress: a shard in use is never closed to make room. */
  users: number;
  store?: ShardStore;
}

/** The table files (.ldb, or .sst of older LevelDBs) under `dir`: an upper bound on those LevelDB holds open. */
function tableFiles(dir: string): number {
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.ldb') || n.endsWith('.sst')).length;
  } catch {
    return 0;
  }
}

export class ShardRegistry {
  /** Least recently used first. */
  private readonly shards = new Map<string, OpenShard>();
  /** Closes in progress: an open of the same dir waits for them, or it would find the lock held. */
  private readonly closing = new Map<string, Promise<void>>();
  /** Shards closed to make room, for session metrics and tests. */
  evictions = 0;
  /** The budget of the latest use. */
  private budget: WorkerBudget | undefined;

  constructor(
    private readonly opener: ShardOpener = openLevelShard,
    /** Called when a shard is closed to make room (its worker-side caches go with it). */
    private readonly onEvict: (dir: string) => void = () => {},
  ) {}

  /**
   * The shard at `dir`, opened on first use. `opts` apply to that first open; later calls get the
   * open instance whatever their options. A failed open is not cached, so the next call retries.
   */
  get(dir: string, opts: ShardOptions): Promise<ShardStore> {
    return this.entry(dir, opts).opening;
  }

  /**
   * Runs `fn` on the shard at `dir`, first closing idle shards, least recently used first, until
   * it fits `budget` with the shards already open. A shard open with other options than `opts`
   * (its query's share of the budget changed) is reopened with them when idle.
   */
  async use<T>(dir: string, opts: ShardOptions, budget: WorkerBudget, fn: (store: ShardStore) => Promise<T>): Promise<T> {
    this.budget = { maxOpenFiles: budget.maxOpenFiles, maxMemoryBytes: budget.maxMemoryBytes };
    const open = this.shards.get(dir);
    if (open !== undefined && open.users === 0 && !sameOptions(open.opts, opts)) await this.close(dir);
    if (!this.shards.has(dir)) await this.makeRoom(dir, filesCharged(dir, opts), memoryCharged(opts), budget);
    const e = this.entry(dir, opts);
    e.users++;
    let result: T;
    try {
      result = await fn(await e.opening);
    } finally {
      e.users--;
      e.files = filesCharged(dir, e.opts);
    }
    // The use may have added table files (a reopened shard turns its log into a table): back
    // within the budget, closing idle shards, so that the budget holds between uses too.
    await this.makeRoom(dir, 0, 0, budget);
    return result;
  }

  /** Closes idle shards other than `dir`, least recently used first, until `files` and `memoryBytes` more fit. */
  private async makeRoom(dir: string, files: number, memoryBytes: number, budget: WorkerBudget): Promise<void> {
    for (;;) {
      let usedFiles = 0;
      let usedMemory = 0;
      for (const e of this.shards.values()) {
        usedFiles += e.files;
        usedMemory += e.memoryBytes;
      }
      if (usedFiles + files <= budget.maxOpenFiles && usedMemory + memoryBytes <= budget.maxMemoryBytes) return;
      const idle = [...this.shards].find(([d, e]) => d !== dir && e.users === 0);
      // Every other shard is in use: open anyway, the budget check at start keeps one shard in budget.
      if (idle === undefined) return;
      this.evictions++;
      this.onEvict(idle[0]);
      await this.close(idle[0]);
    }
  }

  private entry(dir: string, opts: ShardOptions): OpenShard {
    const existing = this.shards.get(dir);
    if (existing) {
      // Most recently used last.
      this.shards.delete(dir);
      this.shards.set(dir, existing);
      return existing;
    }
    const pendingClose = this.closing.get(dir) ?? Promise.resolve();
    const opening = pendingClose.then(() => this.opener(dir, opts));
    const e: OpenShard = { opening, opts, files: filesCharged(dir, opts), memoryBytes: memoryCharged(opts), users: 0 };
    this.shards.set(dir, e);
    opening.then(
      (store) => {
        e.store = store;
      },
      () => {
        if (this.shards.get(dir) === e) this.shards.delete(dir);
      },
    );
    return e;
  }

  has(dir: string): boolean {
    return this.shards.has(dir);
  }

  /** Directories with an open (or opening) shard. */
  dirs(): string[] {
    return [...this.shards.keys()];
  }

  /** File handles and bytes the open shards are charged. */
  charged(): { files: number; memoryBytes: number } {
    let files = 0;
    let memoryBytes = 0;
    for (const e of this.shards.values()) {
      files += e.files;
      memoryBytes += e.memoryBytes;
    }
    return { files, memoryBytes };
  }

  /** What the worker's shards hold against the budget of its latest use, for session.metrics(). */
  usage(): WorkerStateUsage | undefined {
    if (this.budget === undefined) return undefined;
    const { files, memoryBytes } = this.charged();
    return { openShards: this.shards.size, fileHandles: files, memoryBytes, shardsClosedForBudget: this.evictions, ...this.budget };
  }

  /** Closes the shard at `dir` if open (`options`: ShardStore.close's). */
  close(dir: string, options?: { settle?: boolean }): Promise<void> {
    const e = this.shards.get(dir);
    if (!e) return this.closing.get(dir) ?? Promise.resolve();
    this.shards.delete(dir);
    const closing = e.opening
      .then(
        (store) => store.close(options),
        () => undefined,
      )
      .finally(() => {
        if (this.closing.get(dir) === closing) this.closing.delete(dir);
      });
    this.closing.set(dir, closing);
    return closing;
  }

  async closeAll(): Promise<void> {
    const results = await Promise.allSettled(this.dirs().map((d) => this.close(d)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Sum of the open shards' memoryUsedBytes (shards still opening count 0). */
  memoryUsedBytes(): number {
    let n = 0;
    for (const e of this.shards.values()) n += e.store?.memoryUsedBytes() ?? 0;
    return n;
  }
}

function filesCharged(dir: string, opts: ShardOptions): number {
  return Math.min(tableFiles(dir), Math.max(0, opts.maxOpenFiles - NON_TABLE_CACHE_FILES)) + SHARD_FIXED_FILES;
}

function memoryCharged(opts: ShardOptions): number {
  return opts.cacheBytes + 2 * opts.writeBufferBytes + (opts.stateCacheBytes ?? 0);
}

function sameOptions(a: ShardOptions, b: ShardOptions): boolean {
  return (
    a.cacheBytes === b.cacheBytes &&
    a.writeBufferBytes === b.writeBufferBytes &&
    a.maxOpenFiles === b.maxOpenFiles &&
    (a.stateCacheBytes ?? 0) === (b.stateCacheBytes ?? 0) &&
    (a.changelog ?? true) === (b.changelog ?? true)
  );
}
