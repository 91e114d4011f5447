/**
 * Named tables: writeStream.toTable(name) into the warehouse, session.read.table(name), and the
 * checkpoint root for queries without checkpointLocation (the Databricks many-queries snippet).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, Trigger } from '@sluice/driver';
import { jsonLines, removeTempDirs, tempDir, writeInput } from './helpers.js';

afterAll(removeTempDirs);

const SCHEMA = 'id STRING, v BIGINT, ts TIMESTAMP';
const rows = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ id: `k${from + i}`, v: from + i, ts: new Date(Date.UTC(2024, 0, 1, 0, from + i)).toISOString() }));

async function withWarehouse<T>(fn: (s: Session, warehouse: string) => Promise<T>, conf: Record<string, unknown> = {}): Promise<T> {
  const warehouse = tempDir();
  const s = await Session.create({ conf: { 'sluice.executor.cores': 2, 'spark.sql.warehouse.dir': warehouse, ...conf } });
  try {
    return await fn(s, warehouse);
  } finally {
    await s.close();
  }
}

describe('toTable and read.table', () => {
  it('runs the snippet as written: named queries into tables, checkpoints under the warehouse, read back exactly once across a restart', async () => {
    await withWarehouse(async (s, warehouse) => {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines(rows(0, 5)));
      const df = () => s.readStream.format('json').schema(SCHEMA).load(input);
      const run = async (name: string, table: string) => {
        const q = await df().writeStream.queryName(name).trigger(Trigger.AvailableNow()).toTable(table);
        await q.awaitTermination();
      };
      await run('query1', 'table1');
      await run('query2', 'table2');
      expect(existsSync(join(warehouse, '_checkpoints', 'query1', 'offsets'))).toBe(true);
      expect(existsSync(join(warehouse, '_checkpoints', 'query2', 'offsets'))).toBe(true);

      // A restart of query1 reads only the new file; the table holds each row once.
      writeInput(input, 'b.json', jsonLines(rows(5, 8)));
      await run('query1', 'table1');
      const table1 = (await s.read.table('table1').collect()).map((r) => r.v).sort((a, b) => (a as number) - (b as number));
      expect(table1).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const t2 = await s.read.table('table2').collect();
      expect(t2).toHaveLength(5);
      // The schema is the one written: a TIMESTAMP comes back as a Date.
      expect(t2[0]!.ts).toBeInstanceOf(Date);
      expect(s.read.table('table2').schema.map((f) => `${f.name} ${String(f.type)}`)).toEqual(['id string', 'v long', 'ts timestamp']);
    });
  });

  it('refuses an unknown table, a bad name, another schema and a second query into the same table, each with its code', async () => {
    await withWarehouse(async (s) => {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines(rows(0, 3)));
      const df = s.readStream.format('json').schema(SCHEMA).load(input);
      expect(() => s.read.table('nope')).toThrow(expect.objectContaining({ code: 'UNKNOWN_TABLE' }));
      await expect(df.writeStream.queryName('q_bad').toTable('1bad')).rejects.toMatchObject({ code: 'INVALID_OPTION', option: 'tableName' });
      await expect(df.writeStream.format('csv').queryName('q_csv').toTable('t')).rejects.toMatchObject({ code: 'INVALID_OPTION', option: 'format' });

      const q = await df.writeStream.queryName('writer').trigger(Trigger.AvailableNow()).toTable('t');
      await q.awaitTermination();
      await expect(df.select(col('id')).writeStream.queryName('narrow').toTable('t')).rejects.toMatchObject({ code: 'TABLE_SCHEMA_MISMATCH' });
      // Refused at start(): the table's manifest names the query that owns it.
      await expect(df.writeStream.queryName('intruder').trigger(Trigger.AvailableNow()).toTable('t')).rejects.toMatchObject({
        code: 'SINK_OWNED_BY_ANOTHER_QUERY',
      });
      expect(await s.read.table('t').collect()).toHaveLength(3);
    });
  });

  it('with sluice.sql.sources.default = delta, toTable creates Delta tables: read back by read.table, exactly once across a restart', async () => {
    await withWarehouse(
      async (s, warehouse) => {
        const input = tempDir();
        writeInput(input, 'a.json', jsonLines(rows(0, 5)));
        const run = async (name: string, table: string) => {
          const q = await s.readStream.format('json').schema(SCHEMA).load(input).writeStream.queryName(name).trigger(Trigger.AvailableNow()).toTable(table);
          await q.awaitTermination();
        };
        await run('query1', 'table1');
        writeInput(input, 'b.json', jsonLines(rows(5, 8)));
        await run('query1', 'table1');
        const log = readdirSync(join(warehouse, 'table1', '_delta_log')).filter((n) => n.endsWith('.json'));
        expect(log).toEqual(['00000000000000000000.json', '00000000000000000001.json']);
        const table1 = await s.read.table('table1').collect();
        expect(table1.map((r) => r.v).sort((a, b) => (a as number) - (b as number))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
        expect(table1[0]!.ts).toBeInstanceOf(Date);
        // The table keeps its format: writing it as JSON is refused, and so is another schema.
        const df = s.readStream.format('json').schema(SCHEMA).load(input);
        await expect(df.writeStream.format('json').queryName('as_json').toTable('table1')).rejects.toMatchObject({ code: 'INVALID_OPTION', option: 'format' });
        await expect(df.select(col('id')).writeStream.queryName('narrow').toTable('table1')).rejects.toMatchObject({ code: 'TABLE_SCHEMA_MISMATCH' });
      },
      { 'spark.sql.sources.default': 'delta' },
    );
  });

  it('a query with neither a name nor a checkpointLocation keeps CHECKPOINT_LOCATION_REQUIRED', async () => {
    await withWarehouse(async (s) => {
      const input = tempDir();
      writeInput(input, 'a.json', jsonLines(rows(0, 1)));
      const df = s.readStream.format('json').schema(SCHEMA).load(input);
      await expect(df.writeStream.toTable('t')).rejects.toMatchObject({ code: 'CHECKPOINT_LOCATION_REQUIRED' });
    });
  });

  it('sluice.sql.streaming.checkpointLocation is the root of named queries without a location, file sinks included', async () => {
    const root = tempDir();
    await withWarehouse(
      async (s) => {
        const input = tempDir();
        const out = tempDir();
        writeInput(input, 'a.json', jsonLines(rows(0, 2)));
        const q = await s.readStream.format('json').schema(SCHEMA).load(input).writeStream.queryName('to_files').trigger(Trigger.AvailableNow()).start(out);
        await q.awaitTermination();
        expect(existsSync(join(root, 'to_files', 'commits', '0'))).toBe(true);
      },
      { 'spark.sql.streaming.checkpointLocation': root },
    );
  });
});
