/**
 * `session.read.format('sqlite')`: a SQLite table (`table`) or query (`query`) as a static
 * DataFrame, the static side of a stream-static join. Column types follow SQLite's affinity rules
 * for the declared types (INT → BIGINT, CHAR/CLOB/TEXT → STRING, REAL/FLOA/DOUB → DOUBLE, anything
 * else numeric → DOUBLE); a column with no declared type (an expression of a query) needs
 * `.schema(...)`. The rows are read when the query that joins them starts (once per run).
 */
import { existsSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';

/** Loaded on first use: most sessions never open SQLite, and every module loaded at start costs. */
const sqlite = (): typeof BetterSqlite3 => requireOptional<typeof BetterSqlite3>('better-sqlite3', "format('sqlite')", 'format');
import { rowToInternal, type DataType, type Row, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { requireOptional } from '../optionalDependency.js';

export interface SqliteTableConfig {
  path: string;
  sql: string;
}

function open(path: string): BetterSqlite3.Database {
  const Database = sqlite();
  if (!existsSync(path)) {
    throw new SluiceError('SQLITE_DATABASE_NOT_FOUND', `SQLite database ${path} does not exist`, { file: path, option: 'path' });
  }
  try {
    return new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new SluiceError('SQLITE_OPEN_FAILED', `cannot open SQLite database ${path}: ${(e as Error).message}`, { file: path, cause: e });
  }
}

/** SQLite's type affinity of a declared column type (https://sqlite.org/datatype3.html §3.1). */
function affinityType(declared: string): DataType {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'long';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'string';
  return 'double';
}

/** The SQL the read runs, and the schema of its rows (`userSchema`, else the declared types). */
export function sqliteTableSpec(
  path: string,
  table: string | undefined,
  query: string | undefined,
  userSchema: Schema | undefined,
): SqliteTableConfig & { schema: Schema } {
  if ((table === undefined) === (query === undefined)) {
    throw new SluiceError('INVALID_OPTION', 'a sqlite read needs option table or option query (one of them)', {
      option: table === undefined ? 'table' : 'query',
    });
  }
  const db = open(path);
  try {
    if (table !== undefined) {
      const exists = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?`).get(table);
      if (!exists) throw new SluiceError('SQLITE_TABLE_NOT_FOUND', `SQLite database ${path} has no table ${table}`, { file: path, option: 'table' });
    }
    const sql = query ?? `SELECT * FROM "${(table as string).replaceAll('"', '""')}"`;
    let columns: Array<{ name: string; type: string | null }>;
    try {
      columns = db.prepare(sql).columns();
    } catch (e) {
      throw new SluiceError('INVALID_OPTION', `option query of the sqlite read of ${path} does not run: ${(e as Error).message}`, {
        option: 'query',
        cause: e,
      });
    }
    if (userSchema !== undefined) return { path, sql, schema: userSchema };
    const schema = columns.map((c) => {
      if (c.type === null) {
        throw new SluiceError('SCHEMA_REQUIRED', `column ${c.name} of the sqlite read of ${path} has no declared type: give .schema(...)`, { column: c.name });
      }
      return { name: c.name, type: affinityType(c.type), nullable: true };
    });
    return { path, sql, schema };
  } finally {
    db.close();
  }
}

/** The rows as they are now, in engine form. */
export function readSqliteRows(config: SqliteTableConfig, schema: Schema): Row[] {
  const db = open(config.path);
  try {
    return (db.prepare(config.sql).all() as Row[]).map((r) => rowToInternal(r, schema));
  } finally {
    db.close();
  }
}
