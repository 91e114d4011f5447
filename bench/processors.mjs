// The transformWithState benchmark's processors (bench/transform-with-state.bench.mjs), imported by every worker.

/** A running count per id: what groupBy('id').count() computes in update mode. */
export class RunningCount {
  init(handle) {
    this.count = handle.getValueState('count', 'LONG');
  }
  *handleInputRows(key, rows) {
    let n = this.count.get() ?? 0;
    for (const _ of rows) n++;
    this.count.update(n);
    yield { id: key.id, count: n };
  }
}

/**
 * One processing-time timer per key, set at its first row: key k's fires at BASE + floor(k / 10000)
 * seconds, so a second of the clock fires 10,000 timers whatever the number of keys.
 */
export class TimerPerKey {
  init(handle) {
    this.seen = handle.getValueState('seen', 'BOOLEAN');
  }
  // biome-ignore lint/correctness/useYield: the API takes a generator; this one emits no rows, and its body runs when the engine iterates it
  *handleInputRows(key, _rows, timers) {
    if (!this.seen.exists()) {
      this.seen.update(true);
      timers.registerTimer(1_000_000_000 + Math.floor(key.id / 10_000) * 1000);
    }
  }
  *handleExpiredTimer(key) {
    this.seen.clear();
    yield { id: key.id };
  }
}
