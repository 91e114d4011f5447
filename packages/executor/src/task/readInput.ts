/** Turns one input split into engine rows, inside the worker. */
import { readFileRecords } from '../formats/readers.js';
import type { ReadFormat } from '../formats/options.js';
import type { InputSplit } from './messages.js';
import { decodeRows } from './rowCodec.js';
import { NexmarkGenerator } from '../formats/nexmark.js';
import { partitionValue } from '../formats/partitions.js';
import { isParquetSplit, parquetBatches } from '../formats/parquetInput.js';
import { rowsFromBatch } from '../columns/vectors.js';
import type { Row } from '../schema/types.js';

/**
 * Calls `fn` for each row of the split and returns the count. Generated sources make each row on
 * the way, so a task that combines rows (a map task) never holds all of them at once.
 */
export function forEachInputRow(split: InputSplit, fn: (row: Row) => void): number {
  switch (split.type) {
    case 'rate':
      for (let v = split.startValue; v < split.endValue; v++) {
        fn({ timestamp: split.startTimeMs + Math.floor((v * 1000) / split.rowsPerSecond), value: v });
      }
      return Math.max(0, split.endValue - split.startValue);
    case 'rateMicroBatch':
      for (let v = split.startValue; v < split.endValue; v++) fn({ timestamp: split.timestampMs, value: v });
      return Math.max(0, split.endValue - split.startValue);
    default: {
      const rows = readInput(split);
      for (let i = 0; i < rows.length; i++) fn(rows[i] as Row);
      return rows.length;
    }
  }
}

export function readInput(split: InputSplit): Row[] {
  switch (split.type) {
    case 'files': {
      if (isParquetSplit(split)) return parquetBatches(split).flatMap((b) => rowsFromBatch(b, split.schema));
      const rows: Row[] = [];
      split.files.forEach((file, f) => {
        const part = readFileRecords(split.format as ReadFormat, file, split.schema, split.options);
        const values = split.partitions?.[f];
        // A partition directory's values fill the columns it names.
        const fill = values ? split.schema.filter((c) => c.name in values).map((c) => [c.name, partitionValue(values[c.name] ?? null, c.type)] as const) : [];
        for (let i = 0; i < part.length; i++) {
          const row = part[i] as Row;
          for (const [name, v] of fill) row[name] = v;
          rows.push(row);
        }
      });
      return rows;
    }
    case 'rate': {
      const rows: Row[] = new Array(Math.max(0, split.endValue - split.startValue));
      for (let v = split.startValue, i = 0; v < split.endValue; v++, i++) {
        rows[i] = { timestamp: split.startTimeMs + Math.floor((v * 1000) / split.rowsPerSecond), value: v };
      }
      return rows;
    }
    case 'rateMicroBatch': {
      const rows: Row[] = new Array(Math.max(0, split.endValue - split.startValue));
      for (let v = split.startValue, i = 0; v < split.endValue; v++, i++) {
        rows[i] = { timestamp: split.timestampMs, value: v };
      }
      return rows;
    }
    case 'nexmark':
      return new NexmarkGenerator(split.config).rows(split.startEvent, split.endEvent);
    case 'rows':
      return decodeRows(split.data);
    case 'blocks':
      return split.blocks.flatMap((b) => decodeRows(b));
  }
}
