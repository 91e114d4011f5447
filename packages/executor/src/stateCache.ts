/**
 * Decoded aggregation state of a shard, kept in its worker between batches so that a key updated
 * every batch costs no LevelDB read and no decode. It holds exactly what the shard holds: every
 * write of a state task goes through it, and it is dropped when the shard rolls back, when a task
 * fails, and when the shard closes. When it outgrows its budget it is dropped whole (the keys are
 * read from LevelDB again), which keeps the budget without per-key bookkeeping.
 */
import type { AggBuffer } from './aggregates.js';

interface Entry {
  bytes: Uint8Array;
  buffers: AggBuffer[];
}

/** Estimated bytes of one entry beyond its key and value: Map slot, objects, array. */
const ENTRY_OVERHEAD = 160;

export class StateCache {
  private readonly entries = new Map<string, Entry>();
  private used = 0;

  constructor(private readonly budgetBytes: number) {}

  get(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  set(key: string, bytes: Uint8Array, buffers: AggBuffer[]): void {
    const old = this.entries.get(key);
    if (old) this.used -= ENTRY_OVERHEAD + key.length + old.bytes.length;
    this.entries.set(key, { bytes, buffers });
    this.used += ENTRY_OVERHEAD + key.length + bytes.length;
    if (this.used > this.budgetBytes) this.clear();
  }

  delete(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.used -= ENTRY_OVERHEAD + key.length + old.bytes.length;
  }

  clear(): void {
    this.entries.clear();
    this.used = 0;
  }

  get memoryUsedBytes(): number {
    return this.used;
  }
}

const caches = new Map<string, StateCache>();

/** The cache of the shard at `dir` in this worker. */
export function stateCache(dir: string, budgetBytes: number): StateCache {
  let cache = caches.get(dir);
  if (!cache) caches.set(dir, (cache = new StateCache(budgetBytes)));
  return cache;
}

export function dropStateCache(dir: string): void {
  caches.get(dir)?.clear();
  caches.delete(dir);
}
