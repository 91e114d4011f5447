/** Delivering a task's rows: one durable part file of a file sink, the rows back to the driver, or nothing (noop). */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { asEnvironmentError } from '@sluice/state';
import { formatRecords } from '../formats/writers.js';
import type { DeliveredRows, TaskOutput } from './messages.js';
import { encodeRows } from './rowCodec.js';
import type { Row, Schema } from '../schema/types.js';

function writeDurable(path: string, text: string): number {
  const buf = Buffer.from(text);
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
export function deliver<T extends DeliveredRows>(base: T, out: TaskOutput, rows: Row[], schema: Schema): T {
  if (out.type === 'collect') return { ...base, rows: encodeRows(rows) };
  if (out.type === 'discard') return base;
  if (out.skip || rows.length === 0) return base;
  const path = join(out.dir, out.fileName);
  let size: number;
  try {
    mkdirSync(out.dir, { recursive: true });
    size = writeDurable(path, formatRecords(out.format, rows, schema, out.options));
  } catch (e) {
    // A full disk or a forbidden directory would fail every retry the same way: coded, at once.
    throw asEnvironmentError(e, path, 'write the sink file');
  }
  return { ...base, file: { name: out.fileName, size, rows: rows.length } };
}
