/**
 * Input splits as column batches of at most BATCH_ROWS rows, so that a task holds one chunk of its
 * input at a time. Generated sources (rate, rate-micro-batch) fill typed arrays directly, JSON
 * files go through the column scanner (formats/jsonColumns.ts), Parquet files are read as columns
 * before the task runs (formats/parquetInput.ts), and rows that arrive as rows
 * (memory source, CSV and text files) are turned into columns chunk by chunk.
 */
import type { InputSplit } from '../task/messages.js';
import { readInput } from '../task/readInput.js';
import { readJsonFileColumns } from '../formats/readers.js';
import { NexmarkGenerator } from '../formats/nexmark.js';
import { isParquetSplit, parquetBatches } from '../formats/parquetInput.js';
import type { Schema } from '../schema/types.js';
import { batchFromRows, type ColumnBatch } from './vectors.js';

export const BATCH_ROWS = 1 << 16;

/**
 * Values [start, end) with their timestamps: `startTimeMs` plus, with `rowsPerSecond`, a second per
 * that many values (rate), or `startTimeMs` for every row (rate-micro-batch, rowsPerSecond null).
 * Numbers, not a function of the split: no closure made per task in a hot loop
 * (docs/internals/operators.md).
 */
function generated(start: number, end: number, startTimeMs: number, rowsPerSecond: number | null, fn: (batch: ColumnBatch) => void): void {
  // One pair of arrays for every chunk: a batch lives only during its call of fn.
  const size = Math.min(BATCH_ROWS, Math.max(0, end - start));
  const timestamps = new Float64Array(size);
  const values = new Float64Array(size);
  for (let lo = start; lo < end; lo += BATCH_ROWS) {
    const n = Math.min(BATCH_ROWS, end - lo);
    const timestamp = timestamps.subarray(0, n);
    const value = values.subarray(0, n);
    for (let i = 0; i < n; i++) {
      value[i] = lo + i;
      timestamp[i] = rowsPerSecond === null ? startTimeMs : startTimeMs + Math.floor(((lo + i) * 1000) / rowsPerSecond);
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

/** Whether the split is read into columns directly (else its rows are turned into columns). */
export function readsAsColumns(split: InputSplit): boolean {
  if (split.type === 'files') return split.format === 'parquet' || (split.format === 'json' && split.partitions === undefined);
  return split.type === 'nexmark' || split.type === 'rate' || split.type === 'rateMicroBatch';
}

/**
 * Calls `fn` for each chunk of the split (rows of `schema`) and returns the number of rows. A
 * batch and its vectors are valid only during the call: the next chunk may reuse their arrays.
 */
export function forEachInputBatch(split: InputSplit, schema: Schema, fn: (batch: ColumnBatch) => void): number {
  switch (split.type) {
    case 'rate':
      generated(split.startValue, split.endValue, split.startTimeMs, split.rowsPerSecond, fn);
      return Math.max(0, split.endValue - split.startValue);
    case 'rateMicroBatch':
      generated(split.startValue, split.endValue, split.timestampMs, null, fn);
      return Math.max(0, split.endValue - split.startValue);
    case 'nexmark':
      return new NexmarkGenerator(split.config).forEachBatch(split.startEvent, split.endEvent, BATCH_ROWS, fn);
    case 'files':
      if (isParquetSplit(split)) {
        let total = 0;
        for (const batch of parquetBatches(split)) {
          fn(batch);
          total += batch.length;
        }
        return total;
      }
      if (readsAsColumns(split)) {
        let total = 0;
        for (const file of split.files) total += readJsonFileColumns(file, split.schema, split.options, BATCH_ROWS, fn);
        return total;
      }
      // CSV and text arrive as rows.
      return rowBatches(split, schema, fn);
    default:
      return rowBatches(split, schema, fn);
  }
}

/** The split read as rows, passed to `fn` in batches of columns. */
function rowBatches(split: InputSplit, schema: Schema, fn: (batch: ColumnBatch) => void): number {
  const rows = readInput(split);
  for (let lo = 0; lo < rows.length; lo += BATCH_ROWS) fn(batchFromRows(rows, schema, lo, Math.min(rows.length, lo + BATCH_ROWS)));
  return rows.length;
}
