/**
 * The Nexmark suite at small scale: every query of bench/nexmark/queries.mjs, through the DataFrame
 * API and through SQL, runs to the end of a bounded nexmark stream (100,000 events, two batches
 * and the batch the ended event time closes every window in), and its final result must equal
 * DuckDB's batch SQL over the same events, written to CSV files. q12 (processing time) is checked
 * by its invariants.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StreamingQuery } from '@sluice/driver';
// @ts-expect-error: the benchmark's plain JavaScript module, without types
import { QUERIES } from '../bench/nexmark/queries.mjs';
// @ts-expect-error: the benchmark's plain JavaScript module, without types
import { checkResult, duckReadsOutput, duckRows, eventOptions, loadDuckTables, outputRows, runQuery, writeEventFiles } from '../bench/nexmark/harness.mjs';
import { tempDir, useSession } from './helpers.js';

// DuckDB is the benchmark package's development dependency.
const duckdb = createRequire(new URL('../bench/package.json', import.meta.url)).resolve('@duckdb/node-api');

const EVENTS = eventOptions({ events: 100_000, eventsPerSecond: 1000, eventsPerBatch: 50_000 });

interface Query {
  id: string;
  mode: string;
  sql?: string;
  cannot?: string;
  key?: string[];
  columns: string[];
  sink?: unknown;
}

const session = useSession();
let con: { runAndReadAll(sql: string): Promise<unknown> };
const expected = new Map<string, unknown[]>();

beforeAll(async () => {
  const { DuckDBInstance } = (await import(duckdb)) as { DuckDBInstance: { create(path: string): Promise<{ connect(): Promise<typeof con> }> } };
  con = await (await DuckDBInstance.create(':memory:')).connect();
  await loadDuckTables(con, writeEventFiles(join(tempDir('sluice-nexmark-'), 'events'), EVENTS));
}, 120_000);

async function expectedOf(q: Query): Promise<unknown[]> {
  if (!expected.has(q.id)) expected.set(q.id, await duckRows(con, q));
  return expected.get(q.id)!;
}

describe('Nexmark q0-q22 against DuckDB', () => {
  for (const q of (QUERIES as Query[]).filter((x) => x.cannot === undefined)) {
    for (const api of ['dataframe', 'sql'] as const) {
      it(`${q.id} (${api}) equals DuckDB's result`, async () => {
        const dir = tempDir(`sluice-nexmark-${q.id}-`);
        const query: StreamingQuery = await runQuery(session(), q, EVENTS, { api, dir });
        expect(query.exception).toBeNull();
        const rows = await outputRows(session(), q, { api, dir });
        const want = await expectedOf(q);
        expect(want.length).toBeGreaterThan(0);
        expect(checkResult(q, rows, want)).toBeNull();
        // q10's files as another reader sees them: DuckDB, with Hive partitioning.
        if (q.sink) expect(checkResult(q, await duckReadsOutput(con, q, dir), want)).toBeNull();
        // Every event was read: the bounded stream's offsets end at maxEvents.
        expect(query.lastProgress?.sources.every((s) => (s.endOffset as { events?: number } | null)?.events === EVENTS.events)).toBe(true);
      });
    }
  }

  it('lists every query of the suite, q0 to q22, and says why one cannot run', () => {
    expect((QUERIES as Query[]).map((q) => q.id)).toEqual(Array.from({ length: 23 }, (_, i) => `q${i}`));
    for (const q of QUERIES as Query[]) if (q.cannot !== undefined) expect(q.cannot.length).toBeGreaterThan(20);
  });
});
