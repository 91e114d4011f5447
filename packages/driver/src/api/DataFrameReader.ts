/** `session.read`: a static DataFrame over files, or over a Sluice file sink's committed output. */
import { resolve } from 'node:path';
import { parquetFileSchema, schemaToDDL, type ReadOptions, type Schema } from '@sluice/executor';
import { partitionColumns, staticFiles } from '../execution/staticRows.js';
import { checkInputDir } from '../checkpoint/directories.js';
import { checkFormat, fileReadSpec, fileSourceSpec } from '../sources/resolveSource.js';
import { DataFrame } from './DataFrame.js';
import { Reader } from './Reader.js';
import { tableSchema } from '../sinks/tables.js';
import { sqliteTableSpec } from '../sources/sqliteTable.js';
import { SluiceError } from '@sluice/state';
import { parseBoolean, parseNonNegativeInt } from '../conf/parsers.js';
import { commitsAfter, commitTimestamp } from '../delta/log.js';
import { deltaSourceTable, rejectDeclaredSchema } from '../delta/DeltaSource.js';
import type { Options } from '../conf/Options.js';
import type { SourceSpec } from '../sources/resolveSource.js';
import { parseTimestamp } from '@sluice/executor';

export const STATIC_FORMATS = ['json', 'csv', 'text', 'parquet', 'delta', 'sqlite'] as const;
/**
 * The formats `session.read` reads: files (json, csv, text, parquet), Delta tables, and SQLite tables or queries.
 * @useDeclaredType
 */
export type StaticSourceFormat = (typeof STATIC_FORMATS)[number];

/**
 * `session.read` (Spark's DataFrameReader): a static DataFrame of files, of a Sluice sink's
 * committed output, of a table, of a Delta table's version, or of a SQLite table or query, to
 * `collect()` or to join a stream with.
 *
 * @example
 * ```ts
 * const users = session.read.format('csv').option('header', true).schema('id STRING, name STRING').load('users');
 * const rows = await users.collect();
 * ```
 */
export class DataFrameReader extends Reader<DataFrameReader, StaticSourceFormat> {
  /** A table written by writeStream.toTable(name): a JSON table with the schema it was written with, or a Delta table at its latest version. */
  table(name: string): DataFrame {
    const t = tableSchema(this.session.conf, name);
    const reader = new DataFrameReader(this.session).format(t.format);
    return (t.format === 'json' ? reader.schema(t.schema) : reader).load(t.dir);
  }

  /**
   * Reads a directory of files, or a Sluice file sink's output through its manifest; or, with
   * format('sqlite'), a SQLite table or query (options path, and table or query).
   */
  load(path?: string): DataFrame {
    const format = this.requireFormat();
    checkFormat(format, STATIC_FORMATS, 'static source');
    const o = this.opts.copy();
    if (format === 'sqlite') {
      const file = path ?? o.take('path');
      if (file === undefined || file === '') throw new SluiceError('INVALID_OPTION', 'a sqlite read needs option path (the database file)', { option: 'path' });
      const table = o.take('table');
      const query = o.take('query');
      o.rejectUnknown('sqlite static source');
      const { schema, ...sqlite } = sqliteTableSpec(
        resolve(String(file)),
        table === undefined ? undefined : String(table),
        query === undefined ? undefined : String(query),
        this.userSchema,
      );
      return new DataFrame(this.session, { source: { format: 'sqlite', schema, sqlite }, ops: [] }, false);
    }
    if (path === undefined) throw new SluiceError('INVALID_OPTION', `a ${format} read needs a path: load(path)`, { option: 'path' });
    if (format === 'delta') return new DataFrame(this.session, { source: deltaSnapshotSpec(resolve(path), o, this.userSchema), ops: [] }, false);
    const f = format as Exclude<(typeof STATIC_FORMATS)[number], 'sqlite' | 'delta'>;
    const dir = resolve(path);
    checkInputDir(dir);
    // An inferred schema gets the partition directories' columns after the files' (Spark's order).
    const withPartitions = (inferred: Schema): Schema => [...inferred, ...partitionColumns(dir).filter((p) => !inferred.some((c) => c.name === p.name))];
    const mergeSchema = f === 'parquet' && parseBoolean(o.take('mergeSchema') ?? false, 'mergeSchema');
    const infer =
      f === 'json'
        ? (read: ReadOptions): Schema => withPartitions(this.session.inferJsonSchema(dir, read))
        : f === 'parquet'
          ? (): Schema => withPartitions(parquetDirSchema(dir, mergeSchema))
          : undefined;
    const { read, schema } = fileReadSpec(f, o, this.userSchema, false, infer);
    o.rejectUnknown(`${f} static source`);
    const spec = fileSourceSpec({
      format: f,
      path: dir,
      schema,
      read,
      cleanSource: 'off',
      admission: { latestFirst: false, maxFileAgeMs: Number.POSITIVE_INFINITY },
    });
    return new DataFrame(this.session, { source: spec, ops: [] }, false);
  }
}

/**
 * The schema of a directory of Parquet files, from their footers: the first file's (Spark's
 * default), or with mergeSchema every file's columns in the order they first appear, a column
 * typed differently in two files being INVALID_SCHEMA.
 */
function parquetDirSchema(dir: string, merge: boolean): Schema {
  const files = staticFiles(dir);
  if (files.length === 0) {
    throw new SluiceError(
      'SCHEMA_REQUIRED',
      `Unable to infer schema for Parquet: ${dir} holds no files. It must be specified manually: .schema('col TYPE, ...')`,
      { option: 'schema' },
    );
  }
  const merged: Schema = [];
  for (const file of merge ? files : files.slice(0, 1)) {
    for (const field of parquetFileSchema(file)) {
      const known = merged.find((f) => f.name === field.name);
      if (known === undefined) merged.push(field);
      else if (schemaToDDL([known]) !== schemaToDDL([{ ...field, name: known.name }])) {
        throw new SluiceError(
          'INVALID_SCHEMA',
          `mergeSchema: column '${field.name}' is ${schemaToDDL([known])} in one file and ${schemaToDDL([field])} in ${file}`,
          { file, column: field.name },
        );
      }
    }
  }
  return merged;
}

/**
 * A Delta table at one version: its latest, `versionAsOf`, or with `timestampAsOf` the latest
 * version committed at or before that time (Delta's time travel). The DataFrame reads the files live
 * at that version; a schema may not be given (the table has its own, as in Delta).
 */
function deltaSnapshotSpec(table: string, o: Options, userSchema: Schema | undefined): SourceSpec {
  rejectDeclaredSchema(userSchema);
  const versionAsOf = o.take('versionAsOf');
  const timestampAsOf = o.take('timestampAsOf');
  o.rejectUnknown('delta static source');
  if (versionAsOf !== undefined && timestampAsOf !== undefined) {
    throw new SluiceError('INVALID_OPTION', 'give versionAsOf or timestampAsOf, not both', { option: 'timestampAsOf' });
  }
  let version = versionAsOf === undefined ? undefined : parseNonNegativeInt(versionAsOf, 'versionAsOf');
  if (timestampAsOf !== undefined) {
    const t = typeof timestampAsOf === 'number' ? timestampAsOf : parseTimestamp(String(timestampAsOf));
    if (t === null) throw new SluiceError('INVALID_OPTION', `timestampAsOf ${JSON.stringify(timestampAsOf)} is not a timestamp`, { option: 'timestampAsOf' });
    const before = commitsAfter(table, -1).filter((v) => commitTimestamp(table, v) <= t);
    if (before.length === 0) {
      throw new SluiceError('DELTA_VERSION_NOT_FOUND', `Delta table ${table} has no commit at or before ${new Date(t).toISOString()}`, {
        file: table,
        option: 'timestampAsOf',
      });
    }
    version = before.at(-1);
  }
  const { path, tableId, schemaString, schema, files, version: read } = deltaSourceTable(table, version);
  return { format: 'delta', schema, delta: { path, tableId, schemaString, version: read, files } };
}
