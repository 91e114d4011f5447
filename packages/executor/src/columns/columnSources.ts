/**
 * Input splits as column batches of at most BATCH_ROWS rows, so that a task holds one chunk of its
 * input at a time. Generated sources (rate, rate-micro-batch) fill typed arrays directly; rows
 * that arrive as rows (memory source, files) are turned into columns chunk by chunk.
 */
import type { InputSplit } from '../task/messages.js';
import { readInput } from '../task/readInput.js';
import type { Schema } from '../schema/types.js';
import { batchFromRows, type ColumnBatch } from './vectors.js';

export const BATCH_ROWS = 1 << 16;

function generated(start: number, end: number, timeOf: (v: number) => number, fn: (batch: ColumnBatch) => void): void {
  for (let lo = start; lo < end; lo += BATCH_ROWS) {
    const n = Math.min(BATCH_ROWS, end - lo);
    const timestamp = new Float64Array(n);
    const value = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      value[i] = lo + i;
      timestamp[i] = timeOf(lo + i);
    }
    fn({
      length: n,
      columns: new Map([
        ['timestamp', { kind: 'num', length: n, values: timestamp, nulls: null }],
        ['value', { kind: 'num', length: n, values: value, nulls: null }],
      ]),
    });
  }
}

/** Calls `fn` for each chunk of the split (rows of `schema`) and returns the number of rows. */
export function forEachInputBatch(split: InputSplit, schema: Schema, fn: (batch: ColumnBatch) => void): number {
  switch (split.type) {
    case 'rate':
      generated(split.startValue, split.endValue, (v) => split.startTimeMs + Math.floor((v * 1000) / split.rowsPerSecond), fn);
      return Math.max(0, split.endValue - split.startValue);
    case 'rateMicroBatch':
      generated(split.startValue, split.endValue, () => split.timestampMs, fn);
      return Math.max(0, split.endValue - split.startValue);
    default: {
      const rows = readInput(split);
      for (let lo = 0; lo < rows.length; lo += BATCH_ROWS) fn(batchFromRows(rows, schema, lo, Math.min(rows.length, lo + BATCH_ROWS)));
      return rows.length;
    }
  }
}
