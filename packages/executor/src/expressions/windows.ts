/**
 * Time windows as Spark assigns them: windows of `sizeMs` start every `slideMs`, at the instants
 * congruent to `startMs` modulo `slideMs`, and a window [start, start + size) holds the times t with
 * start <= t < end. A tumbling window (slide = size) holds each time in exactly one window.
 */

export interface TimeWindow {
  start: number;
  end: number;
}

/**
 * The latest window start at or before `t`. The modulo is a true (non-negative) one, so times
 * before the epoch fall into the window that contains them and not into the next one (Spark
 * before 3.4 used Java's %, which put them one window late).
 */
export function lastWindowStart(t: number, slideMs: number, startMs: number): number {
  const r = (t - startMs) % slideMs;
  return t - (r < 0 ? r + slideMs : r);
}

/** Every window that contains `t`, ordered by start; exactly one for a tumbling window. */
export function windowsOf(t: number, sizeMs: number, slideMs: number, startMs: number): TimeWindow[] {
  const out: TimeWindow[] = [];
  // Starts in (t - size, last], walked down from the latest one, then put in ascending order.
  for (let start = lastWindowStart(t, slideMs, startMs); start > t - sizeMs; start -= slideMs) {
    out.push({ start, end: start + sizeMs });
  }
  return out.reverse();
}
