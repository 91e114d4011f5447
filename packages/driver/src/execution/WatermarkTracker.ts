/**
 * The query's event-time watermark: max event time seen minus the delay, per withWatermark input,
 * combined over inputs by the min (default) or max policy. It is computed at the end of a batch
 * for the next one, never decreases, and is 0 before any data.
 */
/** The latest time a Date can hold: an ended input's event time (its watermark passes every window). */
export const END_OF_EVENT_TIME_MS = 8.64e15;

export class WatermarkTracker {
  private readonly perInput: number[];
  private value = 0;

  constructor(
    private readonly delaysMs: number[],
    readonly policy: 'min' | 'max',
  ) {
    this.perInput = delaysMs.map(() => Number.NEGATIVE_INFINITY);
  }

  get enabled(): boolean {
    return this.delaysMs.length > 0;
  }

  get current(): number {
    return this.value;
  }

  restore(watermarkMs: number): void {
    this.value = watermarkMs;
  }

  /** Max event time seen in the batch, per input (an empty array: no data). */
  observe(maxEventTimes: Array<number | undefined>): void {
    maxEventTimes.forEach((max, i) => {
      const delay = this.delaysMs[i];
      if (max === undefined || delay === undefined) return;
      this.perInput[i] = Math.max(this.perInput[i] as number, max - delay);
    });
    const seen = this.perInput.filter((w) => w > Number.NEGATIVE_INFINITY);
    if (seen.length === 0) return;
    // With the min policy an input that has seen no data yet holds the watermark back (Spark).
    const candidate = this.policy === 'min' ? (seen.length < this.perInput.length ? undefined : Math.min(...seen)) : Math.max(...seen);
    if (candidate !== undefined && candidate > this.value) this.value = candidate;
  }
}
