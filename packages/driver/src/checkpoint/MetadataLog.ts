/**
 * A log of versioned files named by batch id, the base of the offset, commit, source and sink
 * manifest logs.
 *
 * The micro-batch protocol built on it: plan offsets, `offsets.add(N)` (the write-ahead log),
 * run the batch, commit the sink idempotently, then `commits.add(N)`. On restart an `offsets/N`
 * without `commits/N` is re-run with exactly the same offsets and batch timestamp.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readVersioned, writeVersioned } from './versionedFile.js';

export class MetadataLog<T> {
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

  /** Removes entries below `thresholdBatchId`; idempotent. */
  purge(thresholdBatchId: number): void {
    for (const id of this.ids()) {
      if (id >= thresholdBatchId) break;
      rmSync(this.path(id), { force: true });
    }
  }
}
