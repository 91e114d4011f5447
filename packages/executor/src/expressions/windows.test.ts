import { describe, expect, it } from 'vitest';
import { lastWindowStart, windowsOf } from './windows.js';

const MIN = 60_000;

describe('windowsOf', () => {
  it('gives a tumbling window exactly one window, a time on a boundary opening the next', () => {
    expect(windowsOf(7 * MIN, 5 * MIN, 5 * MIN, 0)).toEqual([{ start: 5 * MIN, end: 10 * MIN }]);
    expect(windowsOf(10 * MIN, 5 * MIN, 5 * MIN, 0)).toEqual([{ start: 10 * MIN, end: 15 * MIN }]);
    expect(windowsOf(10 * MIN - 1, 5 * MIN, 5 * MIN, 0)).toEqual([{ start: 5 * MIN, end: 10 * MIN }]);
  });

  it('gives a sliding window every window containing the time, ordered by start', () => {
    expect(windowsOf(7 * MIN, 10 * MIN, 5 * MIN, 0)).toEqual([
      { start: 0, end: 10 * MIN },
      { start: 5 * MIN, end: 15 * MIN },
    ]);
    // On a boundary the window ending there does not hold the time; the one starting there does.
    expect(windowsOf(10 * MIN, 10 * MIN, 5 * MIN, 0)).toEqual([
      { start: 5 * MIN, end: 15 * MIN },
      { start: 10 * MIN, end: 20 * MIN },
    ]);
    // A size that is not a multiple of the slide: 3 or 4 windows depending on the time.
    expect(windowsOf(10, 10, 3, 0).map((w) => w.start)).toEqual([3, 6, 9]);
    expect(windowsOf(9, 10, 3, 0).map((w) => w.start)).toEqual([0, 3, 6, 9]);
  });

  it('puts times before the epoch in the window that contains them (a true modulo)', () => {
    expect(windowsOf(-1, 5 * MIN, 5 * MIN, 0)).toEqual([{ start: -5 * MIN, end: 0 }]);
    expect(windowsOf(-5 * MIN, 5 * MIN, 5 * MIN, 0)).toEqual([{ start: -5 * MIN, end: 0 }]);
    expect(windowsOf(-7 * MIN, 10 * MIN, 5 * MIN, 0)).toEqual([
      { start: -15 * MIN, end: -5 * MIN },
      { start: -10 * MIN, end: 0 },
    ]);
  });

  it('shifts windows by the start time, either sign', () => {
    expect(windowsOf(7 * MIN, 5 * MIN, 5 * MIN, 2 * MIN)).toEqual([{ start: 7 * MIN, end: 12 * MIN }]);
    expect(windowsOf(6 * MIN, 5 * MIN, 5 * MIN, 2 * MIN)).toEqual([{ start: 2 * MIN, end: 7 * MIN }]);
    expect(windowsOf(6 * MIN, 5 * MIN, 5 * MIN, -3 * MIN)).toEqual([{ start: 2 * MIN, end: 7 * MIN }]);
  });

  it('holds every time in size/slide windows when the slide divides the size', () => {
    for (const t of [-123_457, -1, 0, 1, 999, 1_700_000_000_123]) {
      const ws = windowsOf(t, 1000, 250, 100);
      expect(ws).toHaveLength(4);
      for (const w of ws) {
        expect(w.start).toBeLessThanOrEqual(t);
        expect(t).toBeLessThan(w.end);
        expect((((w.start - 100) % 250) + 250) % 250).toBe(0);
      }
      expect(lastWindowStart(t, 250, 100)).toBe(ws[3]!.start);
    }
  });
});
