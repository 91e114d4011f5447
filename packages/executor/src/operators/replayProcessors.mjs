// Processors of the replay test (stateTask.replay.test.ts): each uses every kind of state a
// processor can keep, so a retried or replayed batch is checked over values, lists, maps, timers
// and TTL. Rows are {ts, id, n}; the key is {id}.

/**
 * Processing-time timers and TTL: a count (value), the n's seen (list, with a 20 s TTL) and the
 * last n per minute of ts (map). The first row of a key registers a timer 5 s on, which emits the
 * key's total and clears the count.
 */
export class CountWithTimers {
  init(handle) {
    this.handle = handle;
    this.count = handle.getValueState('count', 'LONG');
    this.seen = handle.getListState('seen', 'LONG', { ttlMs: 20_000 });
    this.last = handle.getMapState('last', 'LONG', 'LONG');
  }
  *handleInputRows(key, rows, timerValues) {
    let count = this.count.get() ?? 0;
    if (count === 0) this.handle.registerTimer(timerValues.getCurrentProcessingTimeInMs() + 5000);
    for (const row of rows) {
      count += 1;
      this.seen.appendValue(row.n);
      this.last.updateValue(Math.floor(row.ts.getTime() / 60_000), row.n);
    }
    this.count.update(count);
    yield { id: key.id, value: count, seen: [...this.seen.get()].length };
  }
  *handleExpiredTimer(key) {
    yield { id: key.id, value: -(this.count.get() ?? 0), seen: [...this.seen.get()].length };
    this.count.clear();
  }
}

/** Event-time timers: the greatest ts of a key (value); a timer at it plus 5 s emits it and clears the key. */
export class MaxEventTime {
  init(handle) {
    this.handle = handle;
    this.max = handle.getValueState('max', 'LONG');
  }
  *handleInputRows(key, rows) {
    const before = this.max.get();
    let max = before ?? 0;
    for (const row of rows) max = Math.max(max, row.ts.getTime());
    if (before !== null && before !== max) this.handle.deleteTimer(before + 5000);
    if (before !== max) this.handle.registerTimer(max + 5000);
    this.max.update(max);
    yield { id: key.id, value: max, seen: 0 };
  }
  *handleExpiredTimer(key, timerValues) {
    yield { id: key.id, value: -(this.max.get() ?? 0), seen: timerValues.getCurrentWatermarkInMs() };
    this.max.clear();
  }
}

/** flatMapGroupsWithState with ProcessingTimeTimeout: a running sum that times out 5 s after its last rows. */
export function sumWithTimeout(key, rows, state) {
  if (state.hasTimedOut()) {
    const sum = state.get().sum;
    state.remove();
    return [{ id: key.id, value: -sum, seen: 0 }];
  }
  let sum = state.getOption()?.sum ?? 0;
  let seen = 0;
  for (const row of rows) {
    sum += row.n;
    seen += 1;
  }
  state.update({ sum });
  state.setTimeoutDuration(5000);
  return [{ id: key.id, value: sum, seen }];
}
