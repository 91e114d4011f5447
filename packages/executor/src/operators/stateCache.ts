/**
 * Decoded aggregation state of a shard, kept in its worker between batches so that a key updated
 * every batch costs no LevelDB read and no decode. It holds exactly what the shard holds: every
 * write of a state task goes through it, and it is dropped when the shard rolls back, when a task
 * fails, and when the shard closes. When it outgrows its budget it is dropped whole (the keys are
 * read from LevelDB again), which keeps the budget without per-key bookkeeping.
 */
import type { AggBuffer } from './aggregates.js';
import { KeyTable } from './keyTable.js';

/**
 * Estimated bytes of one entry beyond its key: the Map slot, the buffers array and its numbers
 * (measured at about 150 bytes on Node 20 for a one-count buffer; doubled for Map growth slack).
 * Entries keep the decoded buffers only: their bytes are re-encoded when needed, since the
 * encoding is deterministic, and a typed array per entry would cost more than the value itself.
 */
const ENTRY_OVERHEAD = 300;

export class StateCache {
  private readonly entries = new Map<string, AggBuffer[]>();
  private used = 0;
  /** The decoded state of an aggregation whose buffers are numbers (compactAggregate.ts). */
  private cells: KeyTable | undefined;

  constructor(public budgetBytes: number) {}

  get(key: string): AggBuffer[] | undefined {
    return this.entries.get(key);
  }

  set(key: string, buffers: AggBuffer[]): void {
    if (!this.entries.has(key)) this.used += ENTRY_OVERHEAD + key.length;
    this.entries.set(key, buffers);
    if (this.used > this.budgetBytes) this.clear();
  }

  delete(key: string): void {
    if (this.entries.delete(key)) this.used -= ENTRY_OVERHEAD + key.length;
  }

  clear(): void {
    this.entries.clear();
    this.used = 0;
    this.cells = undefined;
  }

  /** The cell table of this shard (a fresh one if there is none, or one of another shape). */
  table(width: number, nullWidth: number): KeyTable {
    if (this.cells === undefined || this.cells.width !== width || this.cells.nullWidth !== nullWidth) {
      this.cells = new KeyTable(width, nullWidth);
    }
    return this.cells;
  }

  /** After a task: over its budget, the cache is dropped whole (LevelDB still holds everything). */
  settle(): void {
    if (this.memoryUsedBytes > this.budgetBytes) this.clear();
  }

  get memoryUsedBytes(): number {
    return this.used + (this.cells?.memoryUsedBytes ?? 0);
  }
}

/** A state key's bytes as the string the caches and per-task maps key by (latin1: one char a byte). */
export const keyString = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

const caches = new Map<string, StateCache>();

/** The cache of the shard at `dir` in this worker, with the budget of the latest task. */
export function stateCache(dir: string, budgetBytes: number): StateCache {
  let cache = caches.get(dir);
  if (!cache) caches.set(dir, (cache = new StateCache(budgetBytes)));
  cache.budgetBytes = budgetBytes;
  return cache;
}

export function dropStateCache(dir: string): void {
  caches.get(dir)?.clear();
  caches.delete(dir);
}
