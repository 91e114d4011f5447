/**
 * The driver's clock for batch timestamps and progress timings. A test may replace `now` to see
 * which phases of a batch are timed; nothing else does.
 */
export const clock = {
  now: (): number => Date.now(),
};

/**
 * A clock that tests move by hand (Spark's StreamManualClock): the batch timestamps and trigger
 * waits of the queries started with it (`writeStream.trigger(Trigger.ProcessingTime(...), { clock })`)
 * follow it, so processing-time timers, timeouts and time to live are tested without sleeping.
 *
 * `advance` first waits until every query on the clock is waiting for it (its trigger done), moves
 * the time, and resolves once each query it woke has run its triggers and waits again (or ended).
 */
export class ManualClock {
  private time: number;
  /** The queries on this clock; `waiting` while they sleep on it. */
  private readonly loops = new Map<object, { waiting: boolean; at: number; wake: () => void }>();
  private readonly idle: Array<() => void> = [];

  constructor(startMs = 0) {
    if (!Number.isFinite(startMs)) throw new RangeError(`a manual clock starts at a number of milliseconds, got ${String(startMs)}`);
    this.time = startMs;
  }

  /** The clock's time, in epoch milliseconds. */
  now(): number {
    return this.time;
  }

  /** Spark's name. */
  getTimeMillis(): number {
    return this.time;
  }

  /** Moves the clock on by `ms` (waiting first for every query on it to wait for it, then for the ones it woke). */
  async advance(ms: number): Promise<void> {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`a manual clock advances by a number of milliseconds >= 0, got ${String(ms)}`);
    await this.allWaiting();
    this.time += ms;
    for (const loop of this.loops.values()) {
      if (loop.waiting && loop.at <= this.time) {
        loop.waiting = false;
        loop.wake();
      }
    }
    await this.allWaiting();
  }

  /** Resolves once every query on the clock waits for it (its trigger done). */
  allWaiting(): Promise<void> {
    if ([...this.loops.values()].every((l) => l.waiting)) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** @internal A query starts on the clock (running until it first sleeps). */
  attach(owner: object): void {
    this.loops.set(owner, { waiting: false, at: Infinity, wake: () => {} });
  }

  /** @internal A query ended: it no longer holds `advance` back. */
  detach(owner: object): void {
    this.loops.delete(owner);
    this.settle();
  }

  /** @internal `owner` sleeps `ms` by this clock: `wake` runs once the clock reaches it. Returns a cancel (a stop wakes the query). */
  sleep(owner: object, ms: number, wake: () => void): () => void {
    const loop = { waiting: true, at: this.time + ms, wake };
    this.loops.set(owner, loop);
    this.settle();
    return () => {
      if (this.loops.get(owner) === loop) this.loops.set(owner, { ...loop, waiting: false });
    };
  }

  private settle(): void {
    if (![...this.loops.values()].every((l) => l.waiting)) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
