/** DuckDB (the benchmark package's development dependency) for the tests that check Sluice's files with an engine no one here wrote. */
import { createRequire } from 'node:module';

export interface Duck {
  /** The rows of `sql`, values as DuckDB's JSON form gives them (BIGINT as text, DATE as yyyy-MM-dd). */
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  run(sql: string): Promise<void>;
}

interface Connection {
  run(sql: string): Promise<unknown>;
  runAndReadAll(sql: string): Promise<{ getRowObjectsJson(): Array<Record<string, unknown>> }>;
}

export async function openDuck(): Promise<Duck> {
  const path = createRequire(new URL('../bench/package.json', import.meta.url)).resolve('@duckdb/node-api');
  const { DuckDBInstance } = (await import(path)) as { DuckDBInstance: { create(path: string): Promise<{ connect(): Promise<Connection> }> } };
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  return {
    rows: async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson(),
    run: async (sql) => void (await con.run(sql)),
  };
}
