/**
 * Decoded aggregation, join or processor state of a shard, kept in its worker between batches so that a key updated
 * every batch costs no LevelDB read and no decode. It holds exactly what the shard holds: every
 * write of a state task goes through it, and it is dropped when the shard rolls back, when a task
 * fails, and when the shard closes. When it outgrows its budget it is dropped whole (the keys are
 * read from LevelDB again), which keeps the budget without per-key bookkeeping.
 */
import { cellTable, type CellLayout } from './aggCells.js';
import type { ShardStore } from '@sluice/state';
import type { KeyTable } from './keyTable.js';
import type { JoinStateCache } from './join/cache.js';
import type { ProcessorKey } from './processor/handle.js';

export class StateCache {
  /** The shard's decoded aggregation state (aggregate/task.ts). */
  private cells: KeyTable | undefined;
  /** Whether `cells` holds every key the shard holds (table()). */
  cellsComplete = false;
  /** The shard's decoded join state (join/cache.ts). */
  join: JoinStateCache | undefined;
  /** A processor's decoded keys (processor/handle.ts), by key bytes: each one's entry, its stored value decoded. */
  processor: Map<string, ProcessorKey> | undefined;
  processorBytes = 0;
  /** The cache has outgrown its budget since the shard opened: a kind that would fill it whole from the shard fills it as keys come. */
  overflowed = false;

  constructor(public budgetBytes: number) {}

  clear(): void {
    this.cells = undefined;
    this.cellsComplete = false;
    this.join = undefined;
    this.processor = undefined;
    this.processorBytes = 0;
  }

  /**
   * The cell table of this shard (a fresh one if there is none, or one of another layout). Given
   * the shard at the start of a task, a fresh table made while the shard holds nothing holds every
   * key the shard will hold (`cellsComplete`) until it is dropped: a key it lacks needs no read.
   */
  table(L: CellLayout, atTaskStart?: Pick<ShardStore, 'numRows'>): KeyTable {
    const c = this.cells;
    if (c === undefined || c.width !== L.width || c.nullWidth !== L.nullWidth || c.objWidth !== L.objWidth) {
      this.cells = cellTable(L);
      this.cellsComplete = atTaskStart?.numRows === 0;
    }
    return this.cells as KeyTable;
  }

  /** The one budget rule, after every task (and between an aggregation's groups): over its budget, the cache is dropped whole (LevelDB still holds everything). */
  settle(): void {
    if (this.memoryUsedBytes <= this.budgetBytes) return;
    this.clear();
    this.overflowed = true;
  }

  get memoryUsedBytes(): number {
    return (this.cells?.memoryUsedBytes ?? 0) + (this.join?.bytes ?? 0) + this.processorBytes;
  }
}

/** A state key's bytes as the string the caches and per-task maps key by (latin1: one char a byte). */
export const keyString = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

const caches = new Map<string, StateCache>();

/** The cache of the shard at `dir` in this worker, with the budget of the latest task. */
export function stateCache(dir: string, budgetBytes: number): StateCache {
  let cache = caches.get(dir);
  if (!cache) {
    cache = new StateCache(budgetBytes);
    caches.set(dir, cache);
  }
  cache.budgetBytes = budgetBytes;
  return cache;
}

export function dropStateCache(dir: string): void {
  caches.get(dir)?.clear();
  caches.delete(dir);
}
