/**
 * Reading a Parquet file's wanted columns into batches of column vectors: each wanted column found
 * in the file (or null), checked against the schema, with row groups that the pushed-down
 * comparisons rule out skipped. A read is synchronous: the file's bytes are read in place.
 */
import { closeSync } from 'node:fs';
import { SluiceError } from '@sluice/state';
import { dataTypeToDDL } from '../../schema/schema.js';
import type { DataType, Row, Schema } from '../../schema/types.js';
import { rowsFromBatch, VectorBuilder, type ColumnBatch, type Vector } from '../../columns/vectors.js';
import { fileColumns, type FileColumn } from './fileSchema.js';
import { fileBuffer, footerOf, openParquet } from './footer.js';
import { engineValue, isFlat, readFlatColumn, readNestedColumn, sliceVector } from './columnChunks.js';
import type { ParquetPredicate } from './predicates.js';
import { mayMatch } from './statistics.js';

/** Whether a file column of type `found` can be read as `wanted`: the same, or widened (INT to LONG, a number to DOUBLE). */
function readsAs(found: DataType, wanted: DataType): boolean {
  if (typeof found === 'string' || typeof wanted === 'string') {
    if (found === wanted) return true;
    return (found === 'int' && wanted === 'long') || ((found === 'int' || found === 'long') && wanted === 'double');
  }
  if ('array' in found && 'array' in wanted) return readsAs(found.array, wanted.array);
  if ('map' in found && 'map' in wanted) return readsAs(found.map.key, wanted.map.key) && readsAs(found.map.value, wanted.map.value);
  if ('struct' in found && 'struct' in wanted) {
    return wanted.struct.every((w) => {
      const f = found.struct.find((x) => x.name === w.name) ?? found.struct.find((x) => x.name.toLowerCase() === w.name.toLowerCase());
      return f === undefined || readsAs(f.type, w.type);
    });
  }
  return false;
}

export interface ParquetRead {
  batches: ColumnBatch[];
  rows: number;
  /** Row groups the statistics ruled out. */
  skippedGroups: number;
}

/**
 * The columns of `schema` from one Parquet file, as batches of at most `maxRows` rows: a column the
 * file lacks reads as null (Spark's rule for a declared schema); one whose type differs, beyond
 * widening, is INVALID_SCHEMA naming the column and the file. Row groups whose statistics rule out
 * a predicate are not read.
 */
export function readParquetFile(
  path: string,
  schema: Schema,
  predicates: readonly ParquetPredicate[],
  maxRows: number,
  rowGroups?: readonly [number, number],
): ParquetRead {
  const fd = openParquet(path);
  try {
    const file = fileBuffer(fd);
    const metadata = footerOf(file, path);
    const columns = fileColumns(metadata);
    // Each wanted column's name in the file (case-insensitive, as Spark resolves Parquet columns), or none.
    const sources = schema.map((f) => {
      const c = columns.find((x) => x.name === f.name) ?? columns.find((x) => x.name.toLowerCase() === f.name.toLowerCase());
      if (c === undefined) return undefined;
      if (!('type' in c.mapped)) {
        throw new SluiceError('PARQUET_UNSUPPORTED_TYPE', `${path}: column '${c.name}' is Parquet ${c.mapped.unsupported}, which Sluice has no type for`, {
          file: path,
          column: f.name,
        });
      }
      if (!readsAs(c.mapped.type, f.type)) {
        throw new SluiceError(
          'INVALID_SCHEMA',
          `${path}: column '${f.name}' is ${dataTypeToDDL(c.mapped.type)} in the file, which cannot be read as the schema's ${dataTypeToDDL(f.type)}`,
          { file: path, column: f.name },
        );
      }
      return c.name;
    });
    const types = new Map<string, DataType>();
    schema.forEach((f, i) => {
      const source = sources[i];
      if (source !== undefined && typeof f.type === 'string') types.set(source, f.type);
    });
    const out: ParquetRead = { batches: [], rows: 0, skippedGroups: 0 };
    let groupStart = 0;
    const [first, end] = rowGroups ?? [0, metadata.row_groups.length];
    for (let g = 0; g < Math.min(end, metadata.row_groups.length); g++) {
      const groupRows = Number(metadata.row_groups[g]!.num_rows);
      const start = groupStart;
      groupStart += groupRows;
      if (groupRows === 0 || g < first) continue;
      if (!mayMatch(metadata, g, predicates, types)) {
        out.skippedGroups++;
        continue;
      }
      // Flat columns page by page into vectors; nested ones as hyparquet assembles them.
      const flat = new Map<string, Vector>();
      const nested = new Map<string, ArrayLike<unknown>>();
      schema.forEach((f, i) => {
        const source = sources[i];
        if (source === undefined) return;
        const column = columns.find((c) => c.name === source) as FileColumn;
        try {
          if (isFlat(column, f.type)) flat.set(f.name, readFlatColumn(file, metadata, g, column, f.type, groupRows));
          else nested.set(f.name, readNestedColumn(file, metadata, g, column, groupRows));
        } catch (e) {
          throw e instanceof SluiceError
            ? e
            : new SluiceError('PARQUET_CORRUPT', `${path}: row group ${g} does not decode: ${(e as Error).message}`, { file: path });
        }
      });
      for (let lo = start; lo < start + groupRows; lo += maxRows) {
        const hi = Math.min(start + groupRows, lo + maxRows);
        const batch: ColumnBatch = { length: hi - lo, columns: new Map() };
        schema.forEach((f) => {
          const whole = flat.get(f.name);
          if (whole !== undefined) {
            batch.columns.set(f.name, sliceVector(whole, lo - start, hi - start));
            return;
          }
          const b = new VectorBuilder(f.type, hi - lo);
          const values = nested.get(f.name);
          const conv = engineValue(f.type);
          for (let r = lo; r < hi; r++) b.push(values === undefined ? null : conv(values[r - start]));
          batch.columns.set(f.name, b.build());
        });
        out.batches.push(batch);
        out.rows += batch.length;
      }
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** A Parquet file's rows of `schema` in engine form (the driver reads Delta checkpoints so). */
export function readParquetRows(path: string, schema: Schema): Row[] {
  return readParquetFile(path, schema, [], 1 << 16).batches.flatMap((b) => rowsFromBatch(b, schema));
}
