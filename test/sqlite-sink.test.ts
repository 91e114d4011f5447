/**
 * The SQLite upsert sink (format('sqlite'), the MERGE INTO case): each batch is one transaction
 * of upserts and deletes by merge keys, with the batch id stored in the same transaction, so a
 * replayed batch is skipped. Checked on real databases: the rows, the coded errors at start(),
 * the helper foreachBatch users call, and SIGKILLs at 10 moments with triggers that count every
 * row write, which a batch applied twice would change.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { col, count, SqliteUpsert, sum } from '@sluice/driver';
import { jsonLines, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';
import { calibrate, expectCompleted, killAndRestart, planKills, runChild } from './killHarness.js';

afterAll(removeTempDirs);

/** A new database file with `ddl` run in it. */
function database(ddl: string): string {
  const path = join(tempDir('sluice-sqlite-'), 'app.db');
  const db = new Database(path);
  db.exec(ddl);
  db.close();
  return path;
}

/**
 * The rows `sql` reads. Opened read-write: after a SIGKILL of the writer its WAL may need
 * recovery, which a read-only connection cannot do ("attempt to write a readonly database").
 */
function rows(path: string, sql: string): unknown[] {
  const db = new Database(path, { fileMustExist: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const TOTALS = 'CREATE TABLE totals (id TEXT PRIMARY KEY, n INTEGER NOT NULL, total INTEGER)';

describe('sqlite upsert sink', () => {
  it('upserts each batch by its merge keys, deletes flagged rows, and skips a batch it already holds', async () => {
    const path = database(TOTALS);
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const input = s.memoryStream('orders', 'id STRING, v LONG');
      const ckpt = tempDir();
      const start = () =>
        s.readStream
          .format('memory')
          .load('orders')
          .groupBy('id')
          .agg(count('*').alias('n'), sum('v').alias('total'))
          .writeStream.format('sqlite')
          .option('path', path)
          .option('table', 'totals')
          .option('mergeKeys', 'id')
          .outputMode('update')
          .option('checkpointLocation', ckpt)
          .start();
      const query = await start();
      input.addData([
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
        { id: 'a', v: 3 },
      ]);
      await query.processAllAvailable();
      input.addData([
        { id: 'b', v: 4 },
        { id: 'c', v: 5 },
      ]);
      await query.processAllAvailable();
      // Batch 1 updated b and inserted c; a kept its row from batch 0.
      expect(rows(path, 'SELECT id, n, total FROM totals ORDER BY id')).toEqual([
        { id: 'a', n: 2, total: 4 },
        { id: 'b', n: 2, total: 6 },
        { id: 'c', n: 1, total: 5 },
      ]);
      expect(rows(path, 'SELECT table_name, writer, batch_id FROM _sluice_commits')).toEqual([{ table_name: 'totals', writer: query.id, batch_id: 1 }]);
      await query.stop();
      // A restart on the same checkpoint and table goes on from batch 2.
      const again = await start();
      input.addData([{ id: 'c', v: 1 }]);
      await again.processAllAvailable();
      expect(rows(path, "SELECT n, total FROM totals WHERE id = 'c'")).toEqual([{ n: 2, total: 6 }]);
      expect(again.lastProgress?.batchId).toBe(2);
      await again.stop();
    });

    // The helper foreachBatch users call: the same transaction, under a writer id of their own.
    const upsert = new SqliteUpsert({ path: database(TOTALS), table: 'totals', mergeKeys: ['id'], deleteColumn: 'gone', writerId: 'nightly' }, [
      'id',
      'n',
      'gone',
    ]);
    try {
      expect(
        upsert.write(
          [
            { id: 'a', n: 1, gone: false },
            { id: 'b', n: 1, gone: false },
          ],
          0,
        ),
      ).toBe(true);
      expect(
        upsert.write(
          [
            { id: 'a', n: 5, gone: false },
            { id: 'b', n: 0, gone: true },
          ],
          1,
        ),
      ).toBe(true);
      // Batch 1 again (a replay): skipped whole, even with other rows.
      expect(upsert.write([{ id: 'z', n: 9, gone: false }], 1)).toBe(false);
      expect(upsert.lastBatchId()).toBe(1);
      expect(rows(upsert.options.path, 'SELECT id, n FROM totals ORDER BY id')).toEqual([{ id: 'a', n: 5 }]);
    } finally {
      upsert.close();
    }
  });

  it('refuses at start(), with a code naming the file, table, column or option: no database, no table, a column it lacks, an unwritten NOT NULL column, no unique key, a locked database, another writer', async () => {
    await withSession({}, async (s) => {
      s.memoryStream('in', 'id STRING, n LONG, extra STRING');
      const start = (path: string, opts: Record<string, string | number> = {}, select = ['id', 'n']) =>
        s.readStream
          .format('memory')
          .load('in')
          .select(...select.map((c) => col(c)))
          .writeStream.format('sqlite')
          .options({ path, table: 'totals', mergeKeys: 'id', ...opts })
          .option('checkpointLocation', tempDir())
          .start()
          .then(
            async (q) => {
              await q.stop();
              return 'started';
            },
            (e: { code: string; column?: string; option?: string }) => ({
              code: e.code,
              ...(e.column && { column: e.column }),
              ...(e.option && { option: e.option }),
            }),
          );
      const good = database(TOTALS);
      expect(await start(join(tempDir(), 'missing.db'))).toEqual({ code: 'SQLITE_DATABASE_NOT_FOUND', option: 'path' });
      expect(await start(database('CREATE TABLE other (id TEXT)'))).toEqual({ code: 'SQLITE_TABLE_NOT_FOUND', option: 'table' });
      expect(await start(good, {}, ['id', 'n', 'extra'])).toEqual({ code: 'SQLITE_COLUMN_MISMATCH', column: 'extra' });
      expect(await start(database('CREATE TABLE totals (id TEXT PRIMARY KEY, n INTEGER, owner TEXT NOT NULL)'))).toEqual({
        code: 'SQLITE_COLUMN_MISMATCH',
        column: 'owner',
      });
      expect(await start(database('CREATE TABLE totals (id TEXT, n INTEGER)'))).toEqual({ code: 'SQLITE_NO_UNIQUE_KEY', option: 'mergeKeys' });
      expect(await start(good, { mergeKeys: 'n' })).toEqual({ code: 'SQLITE_NO_UNIQUE_KEY', option: 'mergeKeys' });
      expect(await start(good, { mergeKeys: '' })).toEqual({ code: 'INVALID_OPTION', option: 'mergeKeys' });
      expect(await start(good, { deleteColumn: 'gone' })).toEqual({ code: 'SQLITE_COLUMN_MISMATCH', column: 'gone', option: 'deleteColumn' });
      // A unique index on the keys serves as well as a primary key.
      expect(await start(database('CREATE TABLE totals (id TEXT, n INTEGER); CREATE UNIQUE INDEX by_id ON totals (id)'))).toBe('started');

      const holder = new Database(good);
      holder.exec('BEGIN IMMEDIATE');
      try {
        expect(await start(good, { busyTimeoutMs: 100 })).toEqual({ code: 'SQLITE_LOCKED' });
      } finally {
        holder.exec('ROLLBACK');
        holder.close();
      }
      // The table belongs to the first query that wrote it; another query is refused.
      expect(await start(good)).toBe('started');
      expect(await start(good)).toEqual({ code: 'SINK_OWNED_BY_ANOTHER_QUERY', option: 'table' });
    });
  });

  it('a death right after the sink commit, then 10 SIGKILLs at random moments: the totals are exact and no batch was applied twice', async () => {
    const CHILD = fileURLToPath(new URL('./fixtures/sqlite-kill-child.mjs', import.meta.url));
    const FILES = 210;
    const IDS = 13;
    const input = tempDir('sluice-sqlite-in-');
    const base = 1_700_000_000;
    const fileRows = (f: number) => Array.from({ length: 10 }, (_, r) => ({ id: `k${(f * 7 + r * 3) % IDS}`, v: f * 10 + r }));
    for (let f = 0; f < FILES; f++) writeInput(input, `f${String(f).padStart(3, '0')}.json`, jsonLines(fileRows(f)), base + f);
    // The expected totals, and the row writes the sink makes: each batch of 7 files upserts each id it saw once.
    const totals = new Map<string, { n: number; total: number }>();
    let writes = 0;
    for (let b = 0; b < FILES / 7; b++) {
      const ids = new Set<string>();
      for (let f = b * 7; f < b * 7 + 7; f++) {
        for (const r of fileRows(f)) {
          const t = totals.get(r.id) ?? { n: 0, total: 0 };
          totals.set(r.id, { n: t.n + 1, total: t.total + r.v });
          ids.add(r.id);
        }
      }
      writes += ids.size;
    }
    const expected = [...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, t]) => ({ id, ...t }));

    const dirs = () => {
      const out = tempDir('sluice-sqlite-db-');
      const db = new Database(join(out, 'totals.db'));
      db.exec(`${TOTALS}; CREATE TABLE writes (n INTEGER NOT NULL); INSERT INTO writes VALUES (0);
        CREATE TRIGGER on_insert AFTER INSERT ON totals BEGIN UPDATE writes SET n = n + 1; END;
        CREATE TRIGGER on_update AFTER UPDATE ON totals BEGIN UPDATE writes SET n = n + 1; END;`);
      db.close();
      return { input, out, ckpt: tempDir('sluice-sqlite-ckpt-') };
    };
    const check = (out: string) => {
      const db = join(out, 'totals.db');
      expect(rows(db, 'SELECT id, n, total FROM totals ORDER BY id')).toEqual(expected);
      expect(rows(db, 'SELECT n FROM writes')).toEqual([{ n: writes }]);
    };

    // Dead right after the sink's transaction of batch 2, before commits/2: the restart replays
    // batch 2, which the table already holds and must skip.
    const faulted = dirs();
    const crashed = await runChild(CHILD, faulted, { fault: 'after-sink-commit:3' });
    expect(crashed.signal).toBe('SIGKILL');
    expect(rows(join(faulted.out, 'totals.db'), 'SELECT batch_id FROM _sluice_commits')).toEqual([{ batch_id: 2 }]);
    expectCompleted(await runChild(CHILD, faulted));
    check(faulted.out);

    const calDirs = dirs();
    const cal = await runChild(CHILD, calDirs);
    expectCompleted(cal);
    check(calDirs.out);
    const d = dirs();
    const kills = await killAndRestart(CHILD, d, planKills(0x5417e, 10, calibrate(cal), { startupShare: 0.3, batchPhases: 4 }), () => ({
      writes: (rows(join(d.out, 'totals.db'), 'SELECT n FROM writes')[0] as { n: number }).n,
    }));
    expectCompleted(await runChild(CHILD, d));
    check(d.out);
    // Worth something only if some kills landed mid-stream, with part of the batches in the table.
    expect(kills.filter((k) => k.ended === 'SIGKILL' && k.writes > 0 && k.writes < writes).length, 'kills that landed mid-stream').toBeGreaterThanOrEqual(3);
  }, 180_000);
});
