/**
 * Reading line-oriented files (JSON lines, CSV, text) into engine rows.
 *
 * Reading follows Spark's parse modes. A record is malformed when its line is not a JSON object,
 * has unbalanced CSV quoting, has a CSV field count other than the header's (or the schema's), or
 * holds a value that cannot become its column's type. In PERMISSIVE mode such a line still gives a
 * row: the columns that parsed keep their values, the others are null (Spark 3's behaviour), and
 * the corrupt-record column, when the schema declares it, holds the raw line. Nullability is not
 * enforced on read (Spark reads files with `schema.asNullable`).
 */
import type { ReadOptions } from '../task/messages.js';
import type { Row, Schema } from '../schema/types.js';
import { compiled } from './compileCache.js';
import { compileCsvReader } from './csvReader.js';
import { compileJsonReader } from './jsonReader.js';
import { compileJsonColumnReader } from './jsonColumns.js';
import type { ColumnBatch } from '../columns/vectors.js';
import { corruptName, type ReadFormat, validateReadSchema } from './options.js';
import { readSourceFile } from './sourceLines.js';
import { compileTextReader } from './textReader.js';

export type Reader = (text: string, file: string) => Row[];

/** Parses the lines of one file's text; `file` is for error messages. */
export function parseRecords(format: ReadFormat, text: string, schema: Schema, options: ReadOptions, file: string): Row[] {
  return compiled(`r\0${format}\0${options.mode}\0${corruptName(options)}\0${options.header}\0${options.sep}\0${formatsKey(options)}`, schema, () =>
    compileReader(format, schema, options),
  )(text, file);
}

export function readFileRecords(format: ReadFormat, path: string, schema: Schema, options: ReadOptions): Row[] {
  return parseRecords(format, readSourceFile(path), schema, options, path);
}

/** A JSON-lines file as column batches of at most `maxRows` rows (jsonColumns.ts); returns the rows. */
export function readJsonFileColumns(path: string, schema: Schema, options: ReadOptions, maxRows: number, fn: (batch: ColumnBatch) => void): number {
  const reader = compiled(`c\0json\0${options.mode}\0${corruptName(options)}\0${formatsKey(options)}`, schema, () => {
    validateReadSchema('json', schema, options);
    return compileJsonColumnReader(schema, options);
  });
  return reader(readSourceFile(path), path, maxRows, fn);
}

function compileReader(format: ReadFormat, schema: Schema, options: ReadOptions): Reader {
  validateReadSchema(format, schema, options);
  if (format === 'text') return compileTextReader(schema);
  return format === 'json' ? compileJsonReader(schema, options) : compileCsvReader(schema, options);
}

/** The datetime patterns of a read, as part of its readers' cache key. */
function formatsKey(options: ReadOptions): string {
  return `${options.timestampFormat ?? ''}\0${options.dateFormat ?? ''}`;
}
