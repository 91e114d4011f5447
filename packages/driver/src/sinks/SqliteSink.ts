/**
 * `writeStream.format('sqlite')`: upserts each batch into a SQLite table (the MERGE INTO case),
 * exactly once. A batch is one transaction: its rows are inserted or, when a row with the same
 * merge keys exists, update it (`INSERT … ON CONFLICT (keys) DO UPDATE`); rows whose delete
 * column is true are deleted by their keys; and the batch id goes into `_sluice_commits` in the
 * same transaction. A replayed batch finds its id there and is skipped.
 *
 * SqliteUpsert is the same transaction for `foreachBatch` users, under a writer id of their own.
 * better-sqlite3 is synchronous: a batch's transaction runs on the driver thread, whole, so a
 * stop can never cut it in two.
 */
import { existsSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';

/** Loaded on first use: most sessions never open SQLite, and every module loaded at start costs. */
const sqlite = (): typeof BetterSqlite3 => requireOptional<typeof BetterSqlite3>('better-sqlite3', "format('sqlite')", 'format');
import { rowToExternal, type Schema, type TaskOutput } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { BatchOutput, StreamSink } from './Sink.js';
import { requireOptional } from '../optionalDependency.js';

/** Where each writer's last batch id is kept, in the user's database. */
export const COMMITS_TABLE = '_sluice_commits';

/** The options of {@link SqliteUpsert}. */
export interface SqliteUpsertOptions {
  /** The database file; it must exist. */
  path: string;
  /** The table to upsert into; it must exist. */
  table: string;
  /** Columns of a PRIMARY KEY or UNIQUE index of `table`: a row with the same values is updated. */
  mergeKeys: string[];
  /** A column of the rows (not of the table): where it is true, the row with those keys is deleted. */
  deleteColumn?: string;
  /** Who writes `table`: the query id for the sink; a name of the user's for foreachBatch. */
  writerId: string;
  /** How long a write waits for another connection's lock before SQLITE_LOCKED (default 5000). */
  busyTimeoutMs?: number;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function locked(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY'));
}

/** A SQLite value for a row value: booleans as 0/1, timestamps as ISO-8601 text, structs as JSON. */
function sqlValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

/**
 * The SQLite sink's exactly-once upsert, for `foreachBatch` (the MERGE INTO case): each batch is
 * one transaction that upserts its rows by the merge keys, deletes the rows whose delete column
 * is true, and records the batch id under the writer's id, so a replayed batch is skipped. Needs
 * the optional dependency better-sqlite3.
 *
 * @example
 * ```ts
 * const upsert = new SqliteUpsert({ path: 'app.db', table: 'totals', mergeKeys: ['id'], writerId: 'totals-job' }, ['id', 'total']);
 * await df.writeStream.foreachBatch((rows, batchId) => upsert.write(rows, batchId)).start();
 * ```
 */
export class SqliteUpsert {
  private readonly db: BetterSqlite3.Database;
  private readonly columns: string[];
  private readonly upsert: BetterSqlite3.Statement;
  private readonly remove: BetterSqlite3.Statement;
  private readonly lastCommitted: BetterSqlite3.Statement;
  private readonly record: BetterSqlite3.Statement;
  private readonly writeBatch: (rows: Array<Record<string, unknown>>, batchId: number) => boolean;

  /**
   * Opens the database and checks, before any batch: the table exists; every column the rows
   * carry (`columns`, the delete column aside) is one of its columns; the merge keys are among
   * them and are the columns of a PRIMARY KEY or UNIQUE index; and no other writer owns the
   * table. Each failure is a coded error naming the file, table or column.
   */
  constructor(
    /** The options it was opened with. */
    readonly options: SqliteUpsertOptions,
    columns: string[],
  ) {
    const { path, table, mergeKeys, deleteColumn } = options;
    const Database = sqlite();
    if (!existsSync(path)) {
      throw new SluiceError('SQLITE_DATABASE_NOT_FOUND', `SQLite database ${path} does not exist; create it and table ${table} first`, {
        file: path,
        option: 'path',
      });
    }
    try {
      this.db = new Database(path, { fileMustExist: true, timeout: options.busyTimeoutMs ?? 5000 });
    } catch (e) {
      throw new SluiceError('SQLITE_OPEN_FAILED', `cannot open SQLite database ${path}: ${(e as Error).message}`, { file: path, cause: e });
    }
    try {
      this.columns = columns.filter((c) => c !== deleteColumn);
      this.check(columns);
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${COMMITS_TABLE} (table_name TEXT PRIMARY KEY, writer TEXT NOT NULL, batch_id INTEGER NOT NULL)`);
      this.claim();
      const cols = this.columns.map(quote);
      const updates = this.columns.filter((c) => !mergeKeys.includes(c)).map((c) => `${quote(c)} = excluded.${quote(c)}`);
      this.upsert = this.db.prepare(
        `INSERT INTO ${quote(table)} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) ` +
          `ON CONFLICT (${mergeKeys.map(quote).join(', ')}) DO ${updates.length > 0 ? `UPDATE SET ${updates.join(', ')}` : 'NOTHING'}`,
      );
      this.remove = this.db.prepare(`DELETE FROM ${quote(table)} WHERE ${mergeKeys.map((k) => `${quote(k)} IS ?`).join(' AND ')}`);
      this.lastCommitted = this.db.prepare(`SELECT batch_id FROM ${COMMITS_TABLE} WHERE table_name = ?`).pluck();
      this.record = this.db.prepare(
        `INSERT INTO ${COMMITS_TABLE} (table_name, writer, batch_id) VALUES (?, ?, ?) ON CONFLICT (table_name) DO UPDATE SET batch_id = excluded.batch_id`,
      );
      this.writeBatch = this.db.transaction((rows: Array<Record<string, unknown>>, batchId: number): boolean => {
        if (this.lastBatchId() >= batchId) return false;
        for (const row of rows) {
          if (deleteColumn !== undefined && (row[deleteColumn] === true || row[deleteColumn] === 1)) {
            this.remove.run(mergeKeys.map((k) => sqlValue(row[k])));
          } else {
            this.upsert.run(this.columns.map((c) => sqlValue(row[c])));
          }
        }
        this.record.run(table, options.writerId, batchId);
        return true;
      }).immediate;
    } catch (e) {
      this.db.close();
      if (locked(e)) throw this.lockedError(e);
      throw e;
    }
  }

  private check(rowColumns: string[]): void {
    const { path, table, mergeKeys, deleteColumn } = this.options;
    const info = this.db.prepare(`SELECT name, "notnull" AS "notNull", dflt_value AS dflt, pk FROM pragma_table_info(?)`).all(table) as Array<{
      name: string;
      notNull: number;
      dflt: unknown;
      pk: number;
    }>;
    if (info.length === 0) {
      throw new SluiceError('SQLITE_TABLE_NOT_FOUND', `SQLite database ${path} has no table ${table}`, { file: path, option: 'table' });
    }
    const tableColumns = new Set(info.map((c) => c.name));
    if (deleteColumn !== undefined && !rowColumns.includes(deleteColumn)) {
      throw new SluiceError(
        'SQLITE_COLUMN_MISMATCH',
        `option deleteColumn names ${deleteColumn}, which the query's rows lack (they have ${rowColumns.join(', ')})`,
        {
          option: 'deleteColumn',
          column: deleteColumn,
        },
      );
    }
    for (const c of this.columns) {
      if (!tableColumns.has(c)) {
        throw new SluiceError(
          'SQLITE_COLUMN_MISMATCH',
          `table ${table} of ${path} has no column ${c}, which the query writes (it has ${[...tableColumns].join(', ')})`,
          {
            file: path,
            column: c,
          },
        );
      }
    }
    for (const c of info) {
      if (c.notNull && c.dflt === null && c.pk === 0 && !this.columns.includes(c.name)) {
        throw new SluiceError('SQLITE_COLUMN_MISMATCH', `column ${c.name} of table ${table} is NOT NULL without a default, and the query does not write it`, {
          file: path,
          column: c.name,
        });
      }
    }
    for (const k of mergeKeys) {
      if (!this.columns.includes(k)) {
        throw new SluiceError('SQLITE_COLUMN_MISMATCH', `merge key ${k} is not a column the query writes (it writes ${this.columns.join(', ')})`, {
          option: 'mergeKeys',
          column: k,
        });
      }
    }
    const pk = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const unique = (this.db.prepare(`SELECT name FROM pragma_index_list(?) WHERE "unique" = 1`).pluck().all(table) as string[]).map(
      (index) => this.db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).pluck().all(index) as string[],
    );
    const sameSet = (cols: string[]) => cols.length === mergeKeys.length && cols.every((c) => mergeKeys.includes(c));
    if (!sameSet(pk) && !unique.some(sameSet)) {
      throw new SluiceError(
        'SQLITE_NO_UNIQUE_KEY',
        `table ${table} of ${path} has no PRIMARY KEY or UNIQUE index on exactly (${mergeKeys.join(', ')}), which an upsert needs to find the row to update`,
        { file: path, option: 'mergeKeys' },
      );
    }
  }

  /** Makes this writer the table's, refusing a table another writer owns; checks the lock is free. */
  private claim(): void {
    const { path, table, writerId } = this.options;
    this.db
      .transaction(() => {
        const owner = this.db.prepare(`SELECT writer FROM ${COMMITS_TABLE} WHERE table_name = ?`).pluck().get(table) as string | undefined;
        if (owner !== undefined && owner !== writerId) {
          throw new SluiceError(
            'SINK_OWNED_BY_ANOTHER_QUERY',
            `table ${table} of ${path} is written by ${owner} (${COMMITS_TABLE}); each query needs a table of its own`,
            { file: path, option: 'table' },
          );
        }
        if (owner === undefined) this.db.prepare(`INSERT INTO ${COMMITS_TABLE} (table_name, writer, batch_id) VALUES (?, ?, -1)`).run(table, writerId);
      })
      .immediate();
  }

  private lockedError(e: unknown): SluiceError {
    const { path, busyTimeoutMs } = this.options;
    return new SluiceError(
      'SQLITE_LOCKED',
      `SQLite database ${path} stayed locked by another connection for ${busyTimeoutMs ?? 5000} ms: ${(e as Error).message}`,
      {
        file: path,
        cause: e,
      },
    );
  }

  /** The last batch this writer committed to the table (-1: none). */
  lastBatchId(): number {
    return (this.lastCommitted.get(this.options.table) as number | undefined) ?? -1;
  }

  /**
   * Upserts `rows` (JavaScript values, as foreachBatch gets them) as batch `batchId` in one
   * transaction; false when the table already holds that batch (a replay), which is then skipped.
   */
  write(rows: Array<Record<string, unknown>>, batchId: number): boolean {
    try {
      return this.writeBatch(rows, batchId);
    } catch (e) {
      if (locked(e)) throw this.lockedError(e);
      const { path, table } = this.options;
      throw new SluiceError('SQLITE_WRITE_FAILED', `could not upsert batch ${batchId} into table ${table} of ${path}: ${(e as Error).message}`, {
        file: path,
        cause: e,
      });
    }
  }

  /** Closes the database connection. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The options of format('sqlite'), checked when the query is defined. */
export type SqliteSinkOptions = Omit<SqliteUpsertOptions, 'writerId'>;

export class SqliteSink implements StreamSink {
  readonly description: string;
  private upsert: SqliteUpsert | undefined;

  constructor(
    private readonly options: SqliteSinkOptions,
    private readonly schema: Schema,
  ) {
    this.description = `SqliteSink[${options.path}, ${options.table}]`;
  }

  taskOutput(): TaskOutput {
    return { type: 'collect' };
  }

  /** Opens and checks the table (SqliteUpsert), and that it holds every batch the checkpoint committed. */
  prepare(query: { queryId: string; lastCommittedBatchId: number; isControlBatch(batchId: number): boolean }): void {
    const upsert = new SqliteUpsert(
      { ...this.options, writerId: query.queryId },
      this.schema.map((f) => f.name),
    );
    let last = query.lastCommittedBatchId;
    while (last >= 0 && query.isControlBatch(last)) last--;
    if (upsert.lastBatchId() < last) {
      const has = upsert.lastBatchId();
      upsert.close();
      throw new SluiceError(
        'SINK_CORRUPT',
        `table ${this.options.table} of ${this.options.path} holds batches up to ${has}, but the checkpoint committed batch ${last}: the database was replaced or restored from an older copy`,
        { file: this.options.path },
      );
    }
    this.upsert = upsert;
  }

  isCommitted(batchId: number): boolean {
    return (this.upsert?.lastBatchId() ?? -1) >= batchId;
  }

  async addBatch(out: BatchOutput): Promise<void> {
    const upsert = this.upsert as SqliteUpsert;
    upsert.write(
      out.rows.map((r) => rowToExternal(r, out.schema)),
      out.batchId,
    );
  }

  close(): void {
    this.upsert?.close();
    this.upsert = undefined;
  }
}
