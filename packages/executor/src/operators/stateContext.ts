/**
 * What every stateful operator's batch runs on (operator.ts): the task and its shard, and the parts
 * no operator writes for itself, in the spirit of Spark's StateStoreWriter and WatermarkSupport:
 *
 * - the watermark the operator evicts by (undefined when it does not use one, registry.ts) and the
 *   late-row test (the previous batch's watermark, or the task's own late threshold);
 * - paged reads of the shard's time index, so an eviction's cost is what it evicts, a page at a time;
 * - the writer, which records undo priors itself (stateWriter.ts);
 * - the counters that become the operator's progress, and the shard's decoded-value cache.
 */
import { indexRangeUpTo, type ShardStore } from '@sluice/state';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { StateTask } from '../task/messages.js';
import type { StateCache } from './stateCache.js';
import { StateWriter } from './stateWriter.js';

/** What a batch did to the state, as progress reports it (per shard, summed by the driver). */
export interface StateCounters {
  updated: number;
  removed: number;
  dropped: number;
  /** Rows added less rows removed: the shard's numRows follows it. */
  rowDelta: number;
}

/**
 * Whether an event time is late against `threshold` (null: nothing is): at or below it, as Spark
 * drops. A plain function, not a closure made per task: V8 inlines a closure called in a hot loop
 * into the loop's optimized code and throws the code away once the closure is collected, so every
 * worker would compile the loop again every batch (docs/internals/operators.md).
 */
export function isLateAt(time: number | null | undefined, threshold: number | null | undefined): boolean {
  return threshold !== null && threshold !== undefined && time !== null && time !== undefined && !Number.isNaN(time) && time <= threshold;
}

/** Index entries a page reads (a test makes it small so that small tests cross pages). */
let indexPage = 65536;

/** Test seam: the size of an index page; returns the previous one. */
export function useIndexPage(entries: number): number {
  const previous = indexPage;
  indexPage = entries;
  return previous;
}

/** Keys in [gte, lt), a page at a time: `fn` may change the shard's state between pages (a page's keys are read before it runs). */
export async function forEachKeyPage(store: ShardStore, range: readonly [Uint8Array, Uint8Array], fn: (page: Uint8Array[]) => Promise<void>): Promise<void> {
  let gte = range[0];
  for (;;) {
    const page = await store.rangeKeys(gte, range[1], indexPage);
    if (page.length > 0) await fn(page);
    if (page.length < indexPage) return;
    const last = page[page.length - 1]!;
    gte = new Uint8Array(last.length + 1);
    gte.set(last);
  }
}

export class StateContext {
  readonly counters: StateCounters = { updated: 0, removed: 0, dropped: 0, rowDelta: 0 };
  readonly writer: StateWriter;
  /** Spark's custom metrics of the operator, when it has some (summed over shards by the driver). */
  customMetrics: Record<string, number> | undefined;
  /** The late watermark (rows at or below it drop), when the operator uses a watermark. */
  readonly lateWatermark: number | undefined;

  constructor(
    readonly task: StateTask,
    readonly store: ShardStore,
    readonly cache: StateCache,
    readonly udfs: UdfRegistry,
    /** The batch's watermark when the operator uses it (it drops late rows and evicts by it), else undefined. */
    readonly watermark: number | undefined,
  ) {
    this.writer = new StateWriter(store, task.batchId);
    this.lateWatermark = watermark === undefined ? undefined : (task.lateWatermarkMs ?? watermark);
  }

  /** Whether an event time is late: at or below the late watermark. Never, when the operator uses no watermark. */
  isLate(time: number | null | undefined): boolean {
    return isLateAt(time, this.lateWatermark);
  }

  /** The time index's entries at or below the watermark (index time <= it), a page at a time. */
  forEachExpired(fn: (page: Uint8Array[]) => Promise<void>): Promise<void> {
    if (this.watermark === undefined) return Promise.resolve();
    return forEachKeyPage(this.store, indexRangeUpTo(Math.floor(this.watermark)), fn);
  }
}
