/**
 * Named tables (`writeStream.toTable(name)`, `session.read.table(name)`): a table is a JSON file
 * sink or a Delta table in `<sluice.sql.warehouse.dir>/<name>`, exactly once like any file sink,
 * plus a small file naming its format (and a JSON table's schema, so that reading it back needs no
 * inference; a Delta table's is in its log). The first query that writes a table fixes its format
 * and schema; a query with another schema is refused.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONF_KEYS, SluiceError } from '@sluice/state';
import { schemaToDDL, type Schema } from '@sluice/executor';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import { readVersioned, writeVersioned } from '../checkpoint/versionedFile.js';

const TABLE_FILE = '_sluice_table';

export type TableFormat = 'json' | 'delta';

interface TableMeta {
  name: string;
  format: TableFormat;
  /** A JSON table's schema (a Delta table's is in its log). */
  schema?: Schema;
}

/** Spark's unquoted identifiers: letters, digits and underscores, not starting with a digit. */
export function checkTableName(name: unknown): string {
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new SluiceError('INVALID_OPTION', `a table name is letters, digits and underscores, not starting with a digit; got ${JSON.stringify(name)}`, {
      option: 'tableName',
    });
  }
  return name;
}

export function warehouseDir(conf: RuntimeConf): string {
  return resolve(conf.get(CONF_KEYS.warehouseDir));
}

export function tableDir(conf: RuntimeConf, name: string): string {
  return join(warehouseDir(conf), checkTableName(name));
}

/**
 * The checkpoint of a query without checkpointLocation: `<root>/<queryName>`, the root being
 * sluice.sql.streaming.checkpointLocation, else `<warehouse>/_checkpoints` where `useDefault`
 * (file sinks and tables: their output must be exactly once). Undefined without a name, or
 * without a root for the other sinks (they keep a temporary checkpoint).
 */
export function defaultCheckpoint(conf: RuntimeConf, queryName: string | null, useDefault: boolean): string | undefined {
  if (queryName === null) return undefined;
  const root = conf.get(CONF_KEYS.checkpointRoot);
  if (root !== undefined) return join(resolve(root), queryName);
  return useDefault ? join(warehouseDir(conf), '_checkpoints', queryName) : undefined;
}

const isMeta = (v: unknown): v is TableMeta =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as TableMeta).name === 'string' &&
  ((v as TableMeta).format === 'delta' || Array.isArray((v as TableMeta).schema));

/** The format of the table in `dir`, or undefined when there is none yet. */
export function existingTableFormat(dir: string): TableFormat | undefined {
  const path = join(dir, TABLE_FILE);
  return existsSync(path) ? readVersioned(path, isMeta).format : undefined;
}

/** Creates the table, or checks that an existing JSON table has `schema` (the Delta sink checks a Delta table's against its log). */
export function prepareTable(dir: string, name: string, format: TableFormat, schema: Schema): void {
  const path = join(dir, TABLE_FILE);
  if (existsSync(path)) {
    const meta = readVersioned(path, isMeta);
    if (meta.schema !== undefined && schemaToDDL(meta.schema) !== schemaToDDL(schema)) {
      throw new SluiceError('TABLE_SCHEMA_MISMATCH', `table ${name} has schema '${schemaToDDL(meta.schema)}'; this query writes '${schemaToDDL(schema)}'`, {
        file: path,
      });
    }
    return;
  }
  mkdirSync(dir, { recursive: true });
  writeVersioned(path, { name, format, ...(format === 'json' && { schema }) } satisfies TableMeta);
}

/** Table `name`: its directory, format and (a JSON table's) schema, or UNKNOWN_TABLE. */
export function tableSchema(conf: RuntimeConf, name: string): { dir: string } & ({ format: 'json'; schema: Schema } | { format: 'delta' }) {
  const dir = tableDir(conf, name);
  const path = join(dir, TABLE_FILE);
  if (!existsSync(path)) {
    throw new SluiceError(
      'UNKNOWN_TABLE',
      `no table ${name} in ${warehouseDir(conf)} (${CONF_KEYS.warehouseDir}); write it with writeStream.toTable('${name}')`,
      {
        file: dir,
      },
    );
  }
  const meta = readVersioned(path, isMeta);
  return meta.format === 'delta' ? { dir, format: 'delta' } : { dir, format: 'json', schema: meta.schema! };
}
