/**
 * The open shards of one worker thread. A shard directory is opened once per worker and reused by
 * every task and batch that touches it (LevelDB's lock allows one open per directory anyway);
 * two tasks asking at once share the same opening. Keep one registry per worker (a module-level
 * instance in the worker entry): a worker that dies releases its locks with it.
 */
import { openLevelShard } from './LevelShardStore.js';
import type { ShardOptions, ShardStore } from './ShardStore.js';

export type ShardOpener = (dir: string, opts: ShardOptions) => Promise<ShardStore>;

export class ShardRegistry {
  private readonly open = new Map<string, Promise<ShardStore>>();
  private readonly ready = new Map<string, ShardStore>();
  /** Closes in progress: an open of the same dir waits for them, or it would find the lock held. */
  private readonly closing = new Map<string, Promise<void>>();

  constructor(private readonly opener: ShardOpener = openLevelShard) {}

  /**
   * The shard at `dir`, opened on first use. `opts` apply to that first open; later calls get the
   * open instance whatever their options. A failed open is not cached, so the next call retries.
   */
  get(dir: string, opts: ShardOptions): Promise<ShardStore> {
    const existing = this.open.get(dir);
    if (existing) return existing;
    const pendingClose = this.closing.get(dir) ?? Promise.resolve();
    const opening = pendingClose.then(() => this.opener(dir, opts));
    this.open.set(dir, opening);
    opening.then(
      (store) => {
        if (this.open.get(dir) === opening) this.ready.set(dir, store);
      },
      () => {
        if (this.open.get(dir) === opening) this.open.delete(dir);
      },
    );
    return opening;
  }

  has(dir: string): boolean {
    return this.open.has(dir);
  }

  /** Directories with an open (or opening) shard. */
  dirs(): string[] {
    return [...this.open.keys()];
  }

  /** Closes the shard at `dir` if open. */
  close(dir: string): Promise<void> {
    const opening = this.open.get(dir);
    if (!opening) return this.closing.get(dir) ?? Promise.resolve();
    this.open.delete(dir);
    this.ready.delete(dir);
    const closing = opening
      .then(
        (store) => store.close(),
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
    for (const s of this.ready.values()) n += s.memoryUsedBytes();
    return n;
  }
}
