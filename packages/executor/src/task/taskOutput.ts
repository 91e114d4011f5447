/** Delivering a task's rows: one durable part file of a file sink (JSON, CSV or Parquet), the rows back to the driver, or nothing (noop). */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { asEnvironmentError } from '@sluice/state';
import { formatRecords } from '../formats/writers.js';
import { prepareParquetWrite, writeParquet } from '../formats/parquet.js';
import { partitionDirOf } from '../formats/partitions.js';
import type { DeliveredRows, TaskOutput } from './messages.js';
import { encodeRows } from './rowCodec.js';
import type { Row, Schema } from '../schema/types.js';

function writeDurable(path: string, data: string | Uint8Array): number {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, buf);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return buf.byteLength;
}

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
  try {
    mkdirSync(dirname(path), { recursive: true });
    const data =
      out.format === 'parquet' ? writeParquet(rows, schema, out.options.compression ?? 'snappy') : formatRecords(out.format, rows, schema, out.options);
    return { name, size: writeDurable(path, data), rows: rows.length };
  } catch (e) {
    // A full disk or a forbidden directory would fail every retry the same way: coded, at once.
    throw asEnvironmentError(e, path, 'write the sink file');
  }
}
