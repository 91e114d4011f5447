/** Delivering a task's rows: one durable part file of a file sink (JSON, CSV or Parquet), the rows back to the driver, or nothing (noop). */
import { join } from 'node:path';
import { writeFileSynced } from '@sluice/state';
import { formatRecords } from '../formats/writers.js';
import { prepareParquetWrite, writeParquet } from '../formats/parquet/index.js';
import { partitionDirOf } from '../formats/partitions.js';
import type { DeliveredRows, TaskOutput } from './messages.js';
import { encodeRows } from './rowCodec.js';
import type { Row, Schema } from '../schema/types.js';

/** `base` with the rows delivered as `out` says: a part file (unless skipped or empty), or rows. */
export async function deliver<T extends DeliveredRows>(base: T, out: TaskOutput, rows: Row[], schema: Schema): Promise<T> {
  if (out.type === 'collect') return { ...base, rows: encodeRows(rows) };
  if (out.type === 'discard') return base;
  if (out.skip || rows.length === 0) return base;
  if (out.format === 'parquet') await prepareParquetWrite(out.options.compression ?? 'snappy');
  const partitionBy = out.partitionBy ?? [];
  if (partitionBy.length === 0) return { ...base, files: [writePart(out, out.fileName, rows, schema)] };
  // One file per partition directory, holding the other columns (Spark's layout).
  const groups = new Map<string, Row[]>();
  const dirOf = partitionDirOf(partitionBy, schema);
  for (const row of rows) {
    const dir = dirOf(row);
    const group = groups.get(dir);
    if (group) group.push(row);
    else groups.set(dir, [row]);
  }
  const data = schema.filter((f) => !partitionBy.includes(f.name));
  return { ...base, files: [...groups].map(([dir, group]) => writePart(out, `${dir}/${out.fileName}`, group, data)) };
}

function writePart(out: Extract<TaskOutput, { type: 'file' }>, name: string, rows: Row[], schema: Schema): { name: string; size: number; rows: number } {
  const path = join(out.dir, name);
  const data =
    out.format === 'parquet' ? writeParquet(rows, schema, out.options.compression ?? 'snappy') : formatRecords(out.format, rows, schema, out.options);
  // Written in place: no reader trusts a part file before the driver's commit names it. A full disk
  // or a forbidden directory would fail every retry the same way: coded (DISK_FULL), at once.
  return { name, size: writeFileSynced(path, data, 'write the sink file'), rows: rows.length };
}
