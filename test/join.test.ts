/**
 * Stream-static joins: every join type against a plain computation over the same rows, with null
 * keys, keys missing on either side and duplicate keys on the static side; the static side is read
 * once per run (a change on disk shows only after a restart); and the joined stream feeds an
 * aggregation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { col, lit, Session, Trigger, udf } from '@sluice/driver';
import { jsonLines, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';

afterAll(removeTempDirs);

const UDFS = new URL('./fixtures/udfs.mjs', import.meta.url);

type R = Record<string, unknown>;

const stream: R[] = [
  { id: 1, region: 'eu', v: 10 },
  { id: 2, region: 'eu', v: 20 },
  { id: 3, region: 'us', v: 30 }, // no match on the static side
  { id: null, region: 'us', v: 40 }, // a null key matches nothing
  { id: 1, region: 'us', v: 50 },
];
const table: R[] = [
  { id: 1, name: 'one' },
  { id: 1, name: 'uno' }, // two rows for key 1
  { id: 2, name: 'two' },
  { id: 4, name: 'four' }, // no stream row
  { id: null, name: 'nobody' },
];

/** The join computed plainly: Spark's semantics over the two arrays, with `keys` compared by value. */
function expected(how: string, keys: string[], left: R[], right: R[]): R[] {
  const same = (a: R, b: R) => keys.every((k) => a[k] !== null && b[k] !== null && a[k] === b[k]);
  const out: R[] = [];
  for (const l of left) {
    const m = right.filter((r) => same(l, r));
    if (how === 'left_semi') {
      if (m.length > 0) out.push(l);
    } else if (how === 'left_anti') {
      if (m.length === 0) out.push(l);
    } else if (m.length > 0) {
      for (const r of m) out.push({ ...l, ...r });
    } else if (how === 'left_outer') {
      out.push({
        ...l,
        ...Object.fromEntries(
          Object.keys(right[0] as R)
            .filter((k) => !keys.includes(k))
            .map((k) => [k, null]),
        ),
      });
    }
  }
  return out;
}

const sorted = (rows: R[]) => rows.map((r) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))).sort();

describe('stream-static join', () => {
  it.each(['inner', 'left_outer', 'left_semi', 'left_anti'])('%s matches a plain computation, nulls and duplicate keys included', async (how) => {
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const dir = tempDir();
      writeInput(dir, 'names.json', jsonLines(table));
      const names = s.read.format('json').schema('id LONG, name STRING').load(dir);
      const input = s.memoryStream(`orders_${how}`, 'id LONG, region STRING, v LONG');
      const q = await s.readStream
        .format('memory')
        .load(`orders_${how}`)
        .join(names, 'id', how)
        .writeStream.format('memory')
        .queryName(`joined_${how}`)
        .start();
      try {
        input.addData(stream.slice(0, 3));
        await q.processAllAvailable();
        input.addData(stream.slice(3));
        await q.processAllAvailable();
        const got = await s.memoryTable(`joined_${how}`);
        expect(sorted(got)).toEqual(sorted(expected(how, ['id'], stream, table)));
        // Keys first, then the stream's columns, then the static side's.
        expect(Object.keys(got[0] ?? {})).toEqual(how === 'left_semi' || how === 'left_anti' ? ['id', 'region', 'v'] : ['id', 'region', 'v', 'name']);
      } finally {
        await q.stop();
      }
    });
  });

  it.each([
    ['1', 'shuffled: over a 1-byte threshold'],
    ['-1', 'shuffled: broadcasting off'],
    [undefined, 'broadcast: under the default 10 MB'],
  ])('autoBroadcastJoinThreshold %s: %s, with the same rows', async (threshold, _what) => {
    const conf = {
      'sluice.executor.cores': 2,
      'sluice.sql.shuffle.partitions': 4,
      ...(threshold !== undefined && { 'sluice.sql.autoBroadcastJoinThreshold': threshold }),
    };
    await withSession(conf, async (s) => {
      const dir = tempDir();
      writeInput(dir, 'names.json', jsonLines(table));
      const names = s.read.format('json').schema('id LONG, name STRING').load(dir);
      for (const how of ['inner', 'left_outer']) {
        const input = s.memoryStream(`sized_${how}`, 'id LONG, region STRING, v LONG');
        input.addData(stream);
        const q = await s.readStream
          .format('memory')
          .load(`sized_${how}`)
          .join(names, 'id', how)
          .writeStream.format('memory')
          .queryName(`sized_out_${how}`)
          .start();
        try {
          await q.processAllAvailable();
          expect(sorted(await s.memoryTable(`sized_out_${how}`))).toEqual(sorted(expected(how, ['id'], stream, table)));
          expect(q.lastProgress?.shuffle).toEqual(threshold === undefined ? undefined : { numShufflePartitions: 4, numCoalescedPartitions: 4 });
        } finally {
          await q.stop();
        }
      }
    });
  });

  it('joins on several columns, and feeds an aggregation', async () => {
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const dir = tempDir();
      const rates = [
        { region: 'eu', tier: 1, rate: 2 },
        { region: 'eu', tier: 2, rate: 3 },
        { region: 'us', tier: 1, rate: 5 },
      ];
      writeInput(dir, 'rates.json', jsonLines(rates));
      const input = s.memoryStream('sales', 'region STRING, tier LONG, v LONG');
      const q = await s.readStream
        .format('memory')
        .load('sales')
        .join(s.read.format('json').schema('region STRING, tier LONG, rate LONG').load(dir), ['region', 'tier'])
        .groupBy('region')
        .count()
        .writeStream.format('memory')
        .queryName('sales_by_region')
        .outputMode('complete')
        .start();
      try {
        input.addData([
          { region: 'eu', tier: 1, v: 1 },
          { region: 'eu', tier: 2, v: 1 },
          { region: 'eu', tier: 3, v: 1 }, // no rate
          { region: 'us', tier: 1, v: 1 },
          { region: 'us', tier: 2, v: 1 }, // no rate
        ]);
        await q.processAllAvailable();
        const got = Object.fromEntries((await s.memoryTable('sales_by_region')).map((r) => [r.region as string, Number(r.count)]));
        expect(got).toEqual({ eu: 2, us: 1 });
      } finally {
        await q.stop();
      }
    });
  });

  it('reads the static side once per run: a change on disk shows after a restart, not at the next batch', async () => {
    const dir = tempDir();
    writeInput(dir, 'a.json', jsonLines([{ id: 1, name: 'one' }]));
    const input = tempDir();
    const ckpt = tempDir();
    let file = 0;
    const addInput = (ids: number[]) => writeInput(input, `in${file++}.json`, jsonLines(ids.map((id) => ({ id }))), 1_700_000_000 + file);
    const run = async (before: () => void): Promise<R[]> => {
      const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
      try {
        const q = await s.readStream
          .format('json')
          .schema('id LONG')
          .option('maxFilesPerTrigger', 1)
          .load(input)
          .join(s.read.format('json').schema('id LONG, name STRING').load(dir), 'id', 'left')
          .writeStream.format('memory')
          .queryName('names')
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.ProcessingTime(0))
          .start();
        await q.processAllAvailable();
        before();
        addInput([1, 2]);
        await q.processAllAvailable();
        const rows = await s.memoryTable('names');
        await q.stop();
        return rows;
      } finally {
        await s.close();
      }
    };
    addInput([1]);
    // The static side gains id 2 while the query runs: this run still joins against what it read.
    const first = await run(() => writeInput(dir, 'b.json', jsonLines([{ id: 2, name: 'two' }])));
    expect(sorted(first)).toEqual(
      sorted([
        { id: 1, name: 'one' },
        { id: 1, name: 'one' },
        { id: 2, name: null },
      ]),
    );
    // The restart reads it again.
    const second = await run(() => {});
    expect(sorted(second)).toEqual(
      sorted([
        { id: 1, name: 'one' },
        { id: 2, name: 'two' },
      ]),
    );
  });

  it('joins with a SQLite table or query, typed by the declared column types', async () => {
    const path = join(tempDir(), 'ref.db');
    const db = new Database(path);
    db.exec(`CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT, weight REAL);
      INSERT INTO names VALUES (1, 'one', 1.5), (2, 'two', 2.5), (3, 'three', NULL);`);
    db.close();
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const table = s.read.format('sqlite').option('path', path).option('table', 'names').load();
      expect(table.schema.map((f) => `${f.name} ${f.type}`)).toEqual(['id long', 'name string', 'weight double']);
      expect(await table.collect()).toEqual([
        { id: 1, name: 'one', weight: 1.5 },
        { id: 2, name: 'two', weight: 2.5 },
        { id: 3, name: 'three', weight: null },
      ]);
      const heavy = s.read.format('sqlite').option('path', path).option('query', 'SELECT id, name FROM names WHERE weight > 2').load();
      const input = s.memoryStream('lookups', 'id LONG');
      const q = await s.readStream
        .format('memory')
        .load('lookups')
        .join(table, 'id')
        .join(heavy.select(col('id'), col('name').alias('heavy')), 'id', 'left')
        .writeStream.format('memory')
        .queryName('looked_up')
        .start();
      try {
        input.addData([{ id: 1 }, { id: 2 }, { id: 9 }]);
        await q.processAllAvailable();
        expect(sorted(await s.memoryTable('looked_up'))).toEqual(
          sorted([
            { id: 1, name: 'one', weight: 1.5, heavy: null },
            { id: 2, name: 'two', weight: 2.5, heavy: 'two' },
          ]),
        );
      } finally {
        await q.stop();
      }
      const read = (o: Record<string, string>) => () =>
        s.read
          .format('sqlite')
          .options({ path, ...o })
          .load();
      expect(read({ query: 'SELECT id * 2 AS twice FROM names' })).toThrow(expect.objectContaining({ code: 'SCHEMA_REQUIRED', column: 'twice' }));
      expect(read({ table: 'nope' })).toThrow(expect.objectContaining({ code: 'SQLITE_TABLE_NOT_FOUND', option: 'table' }));
      expect(read({ query: 'SELEC nothing' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', option: 'query' }));
      expect(read({})).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
      expect(() =>
        s.read
          .format('sqlite')
          .options({ path: join(tempDir(), 'none.db'), table: 'names' })
          .load(),
      ).toThrow(expect.objectContaining({ code: 'SQLITE_DATABASE_NOT_FOUND' }));
    });
  });

  it('joins on a condition of equal columns, keeping every column of both sides as Spark does', async () => {
    await withSession({ 'sluice.executor.cores': 2 }, async (s) => {
      const dir = tempDir();
      writeInput(
        dir,
        'users.json',
        jsonLines([
          { id: 1, team: 'a', name: 'ann' },
          { id: 2, team: 'b', name: 'bob' },
          { id: 2, team: 'a', name: 'bea' },
        ]),
      );
      const users = s.read.format('json').schema('id LONG, team STRING, name STRING').load(dir);
      const input = s.memoryStream('clicks', 'user_id LONG, user_team STRING, page STRING');
      const on = col('user_id')
        .equalTo(col('id'))
        .and(col('team').equalTo(col('user_team')));
      const q = await s.readStream
        .format('memory')
        .load('clicks')
        .join(users, on, 'left_outer')
        .writeStream.format('memory')
        .queryName('clicks_by_user')
        .start();
      try {
        input.addData([
          { user_id: 1, user_team: 'a', page: 'p1' },
          { user_id: 2, user_team: 'a', page: 'p2' },
          { user_id: 2, user_team: 'c', page: 'p3' }, // no such team
        ]);
        await q.processAllAvailable();
        const got = await s.memoryTable('clicks_by_user');
        expect(Object.keys(got[0] ?? {})).toEqual(['user_id', 'user_team', 'page', 'id', 'team', 'name']);
        expect(sorted(got)).toEqual(
          sorted([
            { user_id: 1, user_team: 'a', page: 'p1', id: 1, team: 'a', name: 'ann' },
            { user_id: 2, user_team: 'a', page: 'p2', id: 2, team: 'a', name: 'bea' },
            { user_id: 2, user_team: 'c', page: 'p3', id: null, team: null, name: null },
          ]),
        );
      } finally {
        await q.stop();
      }
      const clicks = s.readStream.format('memory').load('clicks');
      // Other parts of the condition hold on the pair of rows: p2's only match fails them, so the outer join gives it nulls.
      const rest = col('user_id')
        .equalTo(col('id'))
        .and(col('page').notEqual(lit('p2')))
        .and(col('name').notEqual(col('page')));
      const q2 = await clicks.join(users, rest, 'left_outer').writeStream.format('memory').queryName('clicks_rest').start();
      try {
        await q2.processAllAvailable();
        expect(sorted((await s.memoryTable('clicks_rest')).map((r) => ({ page: r.page, name: r.name })))).toEqual(
          sorted([
            { page: 'p1', name: 'ann' },
            { page: 'p2', name: null },
            { page: 'p3', name: 'bob' },
            { page: 'p3', name: 'bea' },
          ]),
        );
      } finally {
        await q2.stop();
      }
      // Without an equality of the two sides it would be a cross join.
      expect(() => clicks.join(users, col('user_id').gt(col('id')))).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', option: 'on' }));
      expect(() => clicks.join(users, col('user_id').equalTo(col('nope')))).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN', column: 'nope' }));
      s.memoryStream('clicks2', 'id LONG, page STRING');
      expect(() =>
        s.readStream
          .format('memory')
          .load('clicks2')
          .join(users, col('id').equalTo(col('id'))),
      ).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', column: 'id' }));
    });
  });

  it('reads and broadcasts the static side once per run, whatever the number of batches and tasks', async () => {
    const calls = join(tempDir(), 'calls');
    const dir = tempDir();
    writeInput(dir, 'names.json', jsonLines(table));
    const counted = udf(UDFS, 'countCall', 'long');
    const input = tempDir();
    const ckpt = tempDir();
    let file = 0;
    const run = async () => {
      const s = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
      try {
        for (let b = 0; b < 3; b++) writeInput(input, `in${file++}.json`, jsonLines([{ id: 1, region: 'eu', v: file }]), 1_700_000_000 + file);
        // Every static row goes through the udf each time the static side is read.
        const names = s.read
          .format('json')
          .schema('id LONG, name STRING')
          .load(dir)
          .select(counted(col('id'), lit(calls)).alias('id'), col('name'));
        const q = await s.readStream
          .format('json')
          .schema('id LONG, region STRING, v LONG')
          .option('maxFilesPerTrigger', 1)
          .load(input)
          .join(names, 'id')
          .writeStream.format('memory')
          .queryName('counted')
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.AvailableNow())
          .start();
        await q.awaitTermination();
        expect(q.recentProgress.length).toBe(3);
        expect((await s.memoryTable('counted')).length).toBe(3 * 2); // id 1 has two names
      } finally {
        await s.close();
      }
    };
    await run();
    expect(readFileSync(calls, 'utf8').length).toBe(table.length);
    await run();
    expect(readFileSync(calls, 'utf8').length).toBe(2 * table.length);
  });

  it('refuses what it cannot join, with a code naming the column or option', async () => {
    await withSession({}, async (s) => {
      const dir = tempDir();
      writeInput(dir, 'a.json', jsonLines([{ id: 1, name: 'x' }]));
      s.memoryStream('j', 'id STRING, name STRING');
      const stream = s.readStream.format('memory').load('j');
      const staticSide = s.read.format('json').schema('id LONG, name STRING').load(dir);
      expect(() => stream.join(staticSide, 'id')).toThrow(expect.objectContaining({ code: 'DATATYPE_MISMATCH', column: 'id' }));
      expect(() => stream.join(staticSide, 'missing')).toThrow(expect.objectContaining({ code: 'UNRESOLVED_COLUMN', column: 'missing' }));
      s.memoryStream('k', 'id LONG, name STRING');
      const other = s.readStream.format('memory').load('k');
      expect(() => other.join(staticSide, 'id')).toThrow(expect.objectContaining({ code: 'COLUMN_ALREADY_EXISTS', column: 'name' }));
      expect(() => other.join(staticSide, 'id', 'full_outer')).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', option: 'how' }));
      // Two streams join too (stream-join.test.ts); here both sides' `name` would collide.
      expect(() => other.join(other, 'id')).toThrow(expect.objectContaining({ code: 'COLUMN_ALREADY_EXISTS', column: 'name' }));
    });
  });
});
