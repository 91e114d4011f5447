/**
 * A task's Parquet files, read before its operators run (loadParquetInput), with the filters the
 * task starts with pushed down to the row groups; the input readers take the batches from here.
 * The batches live as long as the split object does.
 */
import type { ColumnBatch, Vector } from '../columns/vectors.js';
import type { Op } from '../operators/types.js';
import type { InputSplit } from '../task/messages.js';
import { partitionValue } from './partitions.js';
import { parquetPredicates, readParquetFile, type ParquetPredicate } from './parquet/index.js';

const loaded = new WeakMap<InputSplit, ColumnBatch[]>();

export const isParquetSplit = (split: InputSplit): boolean => split.type === 'files' && split.format === 'parquet';

/**
 * The comparisons of the filters a task starts with: a row group they rule out holds no row the
 * task would keep. (Filters after another operator are left alone: it may change the columns.)
 */
function leadingPredicates(ops: readonly Op[]): ParquetPredicate[] {
  const out: ParquetPredicate[] = [];
  for (const op of ops) {
    if (op.kind !== 'filter') break;
    out.push(...parquetPredicates(op.cond));
  }
  return out;
}

/** Reads a Parquet split's files into batches of at most `maxRows` rows; other splits need nothing. */
export function loadParquetInput(split: InputSplit, ops: readonly Op[], maxRows: number): void {
  if (split.type !== 'files' || split.format !== 'parquet' || loaded.has(split)) return;
  const predicates = leadingPredicates(ops);
  const batches: ColumnBatch[] = [];
  for (let f = 0; f < split.files.length; f++) {
    const values = split.partitions?.[f] ?? null;
    // A partition directory's columns are not in its files: they come from the directory's name.
    const inFile = values === null ? split.schema : split.schema.filter((c) => !(c.name in values));
    const filePredicates = values === null ? predicates : predicates.filter((p) => !(p.column in values));
    const { batches: read } = readParquetFile(split.files[f] as string, inFile, filePredicates, maxRows, split.rowGroups?.[f] ?? undefined);
    for (const batch of read) {
      if (values !== null) {
        for (const c of split.schema) {
          if (c.name in values) batch.columns.set(c.name, constant(partitionValue(values[c.name] ?? null, c.type), batch.length));
        }
      }
      batches.push(batch);
    }
  }
  loaded.set(split, batches);
}

/** A vector holding one value `length` times. */
function constant(v: unknown, length: number): Vector {
  if (v === null) return { kind: 'any', length, values: new Array<unknown>(length).fill(null) };
  if (typeof v === 'number') return { kind: 'num', length, values: new Float64Array(length).fill(v), nulls: null };
  if (typeof v === 'boolean') return { kind: 'bool', length, values: new Uint8Array(length).fill(v ? 1 : 0), nulls: null };
  if (typeof v === 'string') return { kind: 'str', length, dict: [v], codes: new Int32Array(length), nulls: null };
  return { kind: 'any', length, values: new Array<unknown>(length).fill(v) };
}

/** The batches loadParquetInput read for `split`. */
export function parquetBatches(split: InputSplit): ColumnBatch[] {
  const batches = loaded.get(split);
  if (batches === undefined) throw new Error('internal: a Parquet split was read before loadParquetInput');
  return batches;
}
