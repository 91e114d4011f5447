/**
 * A log of versioned files named by batch id, the base of the offset, commit, source and sink
 * manifest logs.
 *
 * The micro-batch protocol built on it: plan offsets, `offsets.add(N)` (the write-ahead log),
 * run the batch, commit the sink idempotently, then `commits.add(N)`. On restart an `offsets/N`
 * without `commits/N` is re-run with exactly the same offsets and batch timestamp.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkpointWriter } from './CheckpointWriter.js';
import { readVersioned, writeVersioned, writeVersionedAsync } from './versionedFile.js';

export class MetadataLog<T> {
  /** Every entry below this is gone (purge's own record, so that it lists the directory once). */
  private purgedBelow: number | undefined;

  constructor(
    readonly dir: string,
    private readonly validate?: (v: unknown) => v is T,
  ) {}

  protected path(batchId: number): string {
    return join(this.dir, String(batchId));
  }

  /** Writes entry `batchId` unless it exists; returns false when it already did. */
  add(batchId: number, value: T): boolean {
    if (existsSync(this.path(batchId))) return false;
    mkdirSync(this.dir, { recursive: true });
    writeVersioned(this.path(batchId), value);
    return true;
  }

  /** add, its writes off the driver's thread (a batch's own entries: BatchTransaction). */
  async append(batchId: number, value: T): Promise<boolean> {
    if (existsSync(this.path(batchId))) return false;
    await writeVersionedAsync(this.path(batchId), value);
    return true;
  }

  /** Writes entry `batchId`, replacing any existing one. */
  put(batchId: number, value: T): void {
    writeVersioned(this.path(batchId), value);
  }

  get(batchId: number): T | undefined {
    return existsSync(this.path(batchId)) ? readVersioned(this.path(batchId), this.validate) : undefined;
  }

  has(batchId: number): boolean {
    return existsSync(this.path(batchId));
  }

  /** Batch ids present, ascending. Temp files and foreign names are ignored. */
  ids(): number[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b);
  }

  latestId(): number | undefined {
    return this.ids().at(-1);
  }

  getLatest(): { batchId: number; value: T } | undefined {
    const id = this.latestId();
    if (id === undefined) return undefined;
    return { batchId: id, value: this.get(id) as T };
  }

  /**
   * Removes entries below `thresholdBatchId`; idempotent. The first call lists the directory;
   * later ones remove only the entries between the last threshold and this one.
   */
  async purge(thresholdBatchId: number): Promise<void> {
    const ids =
      this.purgedBelow === undefined
        ? this.ids().filter((id) => id < thresholdBatchId)
        : Array.from({ length: Math.max(0, thresholdBatchId - this.purgedBelow) }, (_, i) => (this.purgedBelow as number) + i);
    await checkpointWriter.remove(ids.map((id) => this.path(id)));
    this.purgedBelow = Math.max(this.purgedBelow ?? 0, thresholdBatchId);
  }
}
