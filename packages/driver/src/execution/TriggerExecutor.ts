/**
 * When a query's triggers run, as Spark's TriggerExecutors: processing time (a trigger every
 * interval, or back to back), single batch (Trigger.Once) and multi batch (Trigger.AvailableNow).
 * The batch loop asks its executor; it never tests the trigger kind itself.
 */
import type { TriggerSpec } from '../plan/QuerySpec.js';
import type { ReadLimit } from '../sources/Source.js';

/** What the loop lends its executor: the clock, an interruptible sleep, and whether to stop. */
export interface TriggerLoop {
  now(): number;
  sleep(ms: number): Promise<void>;
  stopRequested(): boolean;
}

export interface TriggerExecutor {
  /** What sources may hand one batch: everything available (Once), or up to their limits. */
  readonly readLimit: ReadLimit;
  /** Whether a batch without new data may run to advance the watermark (Once runs none). */
  readonly runsNoDataBatches: boolean;
  /** Whether sources pin the data available at start, and the query ends once it is read. */
  readonly pinsAvailableData: boolean;
  /**
   * Runs triggers until this executor is done or a stop is requested. `trigger(startMs)` runs one
   * trigger and resolves whether a batch ran.
   */
  execute(trigger: (startMs: number) => Promise<boolean>, loop: TriggerLoop): Promise<void>;
}

/**
 * A trigger every `intervalMs`; with 0, the next one as soon as a batch ends, and after an idle
 * trigger a wait of `pollingDelayMs` before looking for data again.
 */
export class ProcessingTimeExecutor implements TriggerExecutor {
  readonly readLimit: ReadLimit = { ignoreLimits: false };
  readonly runsNoDataBatches = true;
  readonly pinsAvailableData = false;

  constructor(
    private readonly intervalMs: number,
    private readonly pollingDelayMs: number,
  ) {}

  async execute(trigger: (startMs: number) => Promise<boolean>, loop: TriggerLoop): Promise<void> {
    while (!loop.stopRequested()) {
      const start = loop.now();
      const ran = await trigger(start);
      if (loop.stopRequested()) return;
      const wait = this.intervalMs > 0 ? start + this.intervalMs - loop.now() : ran ? 0 : this.pollingDelayMs;
      if (wait > 0) await loop.sleep(wait);
    }
  }
}

/** Trigger.Once: one batch over everything available, ignoring the limits, no no-data batch. */
export class SingleBatchExecutor implements TriggerExecutor {
  readonly readLimit: ReadLimit = { ignoreLimits: true };
  readonly runsNoDataBatches = false;
  readonly pinsAvailableData = false;

  async execute(trigger: (startMs: number) => Promise<boolean>, loop: TriggerLoop): Promise<void> {
    if (!loop.stopRequested()) await trigger(loop.now());
  }
}

/**
 * Trigger.AvailableNow: what exists at start, in batches that respect the limits, then any due
 * no-data batch; the query ends at the first trigger that runs no batch.
 */
export class MultiBatchExecutor implements TriggerExecutor {
  readonly readLimit: ReadLimit = { ignoreLimits: false };
  readonly runsNoDataBatches = true;
  readonly pinsAvailableData = true;

  async execute(trigger: (startMs: number) => Promise<boolean>, loop: TriggerLoop): Promise<void> {
    while (!loop.stopRequested() && (await trigger(loop.now()))) {
      // one batch per trigger, until the data available at start (and its no-data batch) is done
    }
  }
}

export function triggerExecutorOf(trigger: TriggerSpec, pollingDelayMs: number): TriggerExecutor {
  switch (trigger.kind) {
    case 'ProcessingTime':
      return new ProcessingTimeExecutor(trigger.intervalMs, pollingDelayMs);
    case 'Once':
      return new SingleBatchExecutor();
    case 'AvailableNow':
      return new MultiBatchExecutor();
  }
}
