/**
 * Delta Lake through its own golden tables and real clients: every golden table written by Delta
 * (test/fixtures/delta-golden, with the rows Delta's own suites expect) read at its latest version
 * and at the versions time travel reaches; tables Sluice's sink writes, read back through their log
 * by Sluice and their data files by DuckDB, their commits and checkpoints as the protocol says;
 * the streaming source's admission, starting version and its errors for commits that remove data.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { col, Trigger, type DataFrame, type StreamingQuery } from '@sluice/driver';
import { fillDisk } from '@sluice/state/testing';
import { openDuck, type Duck } from './duckdb.js';
import { actionOf, actionsOf, addedRows, commits, liveFiles, txnVersion } from './deltaLog.js';
import { hasRoot, mountTmpfs, plain, tempDir, thrown, unmount, useSession } from './helpers.js';

const GOLDEN = fileURLToPath(new URL('./fixtures/delta-golden/', import.meta.url));

interface Golden {
  latestVersion: number;
  schema: string;
  partitionColumns: string[];
  rows: Array<Record<string, unknown>>;
  versions?: Record<string, Array<Record<string, unknown>> | null>;
}
const EXPECTED = JSON.parse(readFileSync(join(GOLDEN, 'EXPECTED.json'), 'utf8')) as Record<string, Golden>;

/**
 * EXPECTED gives BINARY values as base64; Sluice reads BINARY as its bytes' UTF-8 text (it has no
 * BINARY type, as docs/guides/parquet-and-delta.md says), so the golden bytes are compared as that text.
 */
const BINARY_COLUMNS: Record<string, string[]> = { 'data-reader-primitives': ['as_binary'], 'data-reader-array-primitives': ['as_array_binary'] };
const utf8 = (b64: unknown): unknown => (typeof b64 === 'string' ? Buffer.from(b64, 'base64').toString('utf8') : b64);

/** EXPECTED gives DATE values as yyyy-MM-dd; Sluice collects them as a Date at midnight UTC. */
const midnight = (d: unknown): unknown => (typeof d === 'string' ? `${d}T00:00:00.000Z` : d);

function expectedRows(table: string, rows: Array<Record<string, unknown>>): string[] {
  const binary = BINARY_COLUMNS[table] ?? [];
  const dates = ddlColumns(EXPECTED[table]?.schema ?? '')
    .filter(([, type]) => type === 'DATE')
    .map(([name]) => name);
  const value = (k: string, v: unknown): unknown => (binary.includes(k) ? (Array.isArray(v) ? v.map(utf8) : utf8(v)) : dates.includes(k) ? midnight(v) : v);
  return rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, value(k, v)])))).sort();
}

/** Rows as sorted JSON text, columns in the order Sluice gives them. */
async function rowsOf(df: DataFrame): Promise<string[]> {
  return (await df.collect()).map((r) => JSON.stringify(plain(r))).sort();
}

/** The top-level columns of a Spark DDL string: name and type. */
function ddlColumns(ddl: string): Array<[string, string]> {
  const names: Array<[string, string]> = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= ddl.length; i++) {
    const c = ddl[i];
    if (c === '<' || c === '(') depth++;
    else if (c === '>' || c === ')') depth--;
    else if ((c === ',' && depth === 0) || i === ddl.length) {
      const [name, ...type] = ddl.slice(start, i).trim().split(/\s+/);
      names.push([name!, type.join(' ')]);
      start = i + 1;
    }
  }
  return names;
}

/** A copy of a golden table to change. */
function goldenCopy(table: string): string {
  const dir = join(tempDir('sluice-delta-golden-'), table);
  cpSync(join(GOLDEN, table), dir, { recursive: true });
  return dir;
}

const session = useSession();
let duck: Duck;

beforeAll(async () => {
  duck = await openDuck();
}, 60_000);

describe("Delta's golden tables", () => {
  for (const [table, g] of Object.entries(EXPECTED)) {
    it(`${table}: the latest version (${g.latestVersion}) holds the expected rows, with the table's columns`, async () => {
      const df = session().read.format('delta').load(join(GOLDEN, table));
      expect(df.schema.map((f) => f.name)).toEqual(ddlColumns(g.schema).map(([name]) => name));
      expect(await rowsOf(df)).toEqual(expectedRows(table, g.rows));
    });
    const older = Object.entries(g.versions ?? {}).filter(([v, rows]) => Number(v) !== g.latestVersion && rows !== null);
    if (older.length > 0) {
      it(`${table}: versionAsOf reads each earlier version (${older.map(([v]) => v).join(', ')}) to its rows`, async () => {
        for (const [v, rows] of older) {
          const got = await rowsOf(session().read.format('delta').option('versionAsOf', Number(v)).load(join(GOLDEN, table)));
          expect(got, `version ${v}`).toEqual(expectedRows(table, rows!));
        }
      });
    }
  }

  it('a table whose files VACUUM removed: the latest version reads, an older one fails naming a missing file', async () => {
    const table = join(GOLDEN, 'snapshot-vacuumed');
    expect(await rowsOf(session().read.format('delta').load(table))).toHaveLength(20);
    const e = await session()
      .read.format('delta')
      .option('versionAsOf', 0)
      .load(table)
      .collect()
      .then(
        () => ({}) as Record<string, unknown>,
        (err: unknown) => err as Record<string, unknown>,
      );
    expect(e.code).toBe('PATH_NOT_FOUND');
    expect(String(e.message)).toContain(table);
  });

  it('reads the state from the checkpoint: with the commits before it deleted, the latest version is whole and older ones are gone', async () => {
    const table = goldenCopy('basic-with-inserts-deletes-checkpoint');
    for (let v = 0; v < 10; v++) rmSync(join(table, '_delta_log', `${String(v).padStart(20, '0')}.json`));
    const g = EXPECTED['basic-with-inserts-deletes-checkpoint']!;
    expect(await rowsOf(session().read.format('delta').load(table))).toEqual(expectedRows('', g.rows));
    expect(await rowsOf(session().read.format('delta').option('versionAsOf', 10).load(table))).toEqual(expectedRows('', g.versions!['10']!));
    expect(thrown(() => session().read.format('delta').option('versionAsOf', 5).load(table))).toMatchObject({ code: 'DELTA_VERSION_NOT_FOUND' });
  });

  it("timestampAsOf reads the latest version committed at or before that time (the commits' timestamps)", async () => {
    const table = join(GOLDEN, 'basic-with-inserts-deletes-checkpoint');
    const g = EXPECTED['basic-with-inserts-deletes-checkpoint']!;
    const at = (v: number): number => actionOf(commits(table)[v], 'commitInfo').timestamp as number;
    const read = (t: number | string): Promise<string[]> => rowsOf(session().read.format('delta').option('timestampAsOf', t).load(table));
    expect(await read(at(3))).toEqual(expectedRows('', g.versions!['3']!));
    expect(await read(new Date(at(4) + 1).toISOString())).toEqual(expectedRows('', g.versions!['4']!));
    expect(
      thrown(() =>
        session()
          .read.format('delta')
          .option('timestampAsOf', at(0) - 1)
          .load(table),
      ),
    ).toMatchObject({ code: 'DELTA_VERSION_NOT_FOUND', option: 'timestampAsOf' });
  });

  it('refuses what it cannot read with coded errors naming the table, option or file', async () => {
    const load = (path: string, opts: Record<string, string | number> = {}): unknown => session().read.format('delta').options(opts).load(path);
    expect(thrown(() => load(join(GOLDEN, 'data-reader-map'), { versionAsOf: 1 }))).toMatchObject({ code: 'DELTA_VERSION_NOT_FOUND', option: 'versionAsOf' });
    expect(thrown(() => load(tempDir()))).toMatchObject({ code: 'DELTA_TABLE_NOT_FOUND' });
    expect(thrown(() => session().read.format('delta').schema('id LONG').load(join(GOLDEN, 'data-reader-map')))).toMatchObject({
      code: 'INVALID_SCHEMA',
      option: 'schema',
    });

    // A newer protocol: deletion vectors need reader version 3.
    const dv = goldenCopy('multi-part-checkpoint');
    writeFileSync(
      join(dv, '_delta_log', `${'2'.padStart(20, '0')}.json`),
      JSON.stringify({ protocol: { minReaderVersion: 3, minWriterVersion: 7, readerFeatures: ['deletionVectors'], writerFeatures: ['deletionVectors'] } }) +
        '\n',
    );
    const e = thrown(() => load(dv));
    expect(e).toMatchObject({ code: 'DELTA_UNSUPPORTED_FEATURE', file: dv });
    expect(String(e.message)).toContain('deletionVectors');
    expect(await rowsOf(session().read.format('delta').option('versionAsOf', 1).load(dv))).toHaveLength(31);

    // A commit that is not JSON lines of actions.
    const bad = goldenCopy('data-reader-escaped-chars');
    const commit1 = join(bad, '_delta_log', `${'1'.padStart(20, '0')}.json`);
    writeFileSync(commit1, `${readFileSync(commit1, 'utf8')}{"add": {"path": \n`);
    expect(thrown(() => load(bad))).toMatchObject({ code: 'DELTA_LOG_CORRUPT', file: commit1 });
  });
});

// ---- the sink -----------------------------------------------------------------------------------

const EVENTS = 'id LONG, name STRING, score DOUBLE, day STRING';
const event = (i: number): Record<string, unknown> => ({ id: i, name: i % 5 === 0 ? null : `n-${i}`, score: i / 4, day: `d${i % 3}` });
const eventText = (r: Record<string, unknown>): string => JSON.stringify(r);

let streams = 0;
/** A memory stream and a query writing it to a Delta table; each call of `add` is one batch. */
async function deltaWriter(table: string, ckpt: string, opts: { partitionBy?: string[]; compression?: string } = {}) {
  const name = `delta_in_${streams++}`;
  const stream = session().memoryStream(name, EVENTS);
  let writer = session().readStream.format('memory').load(name).writeStream.format('delta').option('checkpointLocation', ckpt);
  if (opts.partitionBy) writer = writer.partitionBy(...opts.partitionBy);
  if (opts.compression) writer = writer.option('compression', opts.compression);
  const q = await writer.start(table);
  return {
    q,
    stream,
    async add(from: number, to: number): Promise<void> {
      stream.addData(Array.from({ length: to - from }, (_, k) => event(from + k)));
      await q.processAllAvailable();
    },
  };
}

const range = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, k) => eventText(event(from + k))).sort();

describe('the Delta sink', () => {
  it('writes one commit per batch: protocol (1, 2) and metaData first, a txn of the query id and batch id in each', async () => {
    const table = join(tempDir('sluice-delta-sink-'), 'events');
    const w = await deltaWriter(table, tempDir());
    await w.add(0, 40);
    await w.add(40, 90);
    await w.add(90, 100);
    await w.q.stop();

    const log = commits(table);
    expect(log).toHaveLength(3);
    const [first] = log;
    expect(actionOf(first, 'protocol')).toEqual({ minReaderVersion: 1, minWriterVersion: 2 });
    const meta = actionOf(first, 'metaData');
    expect(meta).toMatchObject({ format: { provider: 'parquet' }, partitionColumns: [] });
    expect(JSON.parse(meta.schemaString as string)).toEqual({
      type: 'struct',
      fields: [
        { name: 'id', type: 'long', nullable: true, metadata: {} },
        { name: 'name', type: 'string', nullable: true, metadata: {} },
        { name: 'score', type: 'double', nullable: true, metadata: {} },
        { name: 'day', type: 'string', nullable: true, metadata: {} },
      ],
    });
    expect(log.slice(1).flatMap((c) => [...actionsOf(c, 'protocol'), ...actionsOf(c, 'metaData')])).toEqual([]);
    expect(log.map((c) => actionOf(c, 'txn'))).toEqual([0, 1, 2].map((version) => expect.objectContaining({ appId: w.q.id, version })));
    expect(log.map(addedRows)).toEqual([40, 50, 10]);
    expect(log.map((c) => actionOf(c, 'commitInfo').operation)).toEqual(['STREAMING UPDATE', 'STREAMING UPDATE', 'STREAMING UPDATE']);

    // Sluice reads it through its log; DuckDB reads its data files.
    expect(await rowsOf(session().read.format('delta').load(table))).toEqual(range(0, 100));
    const duckRows = await duck.rows(
      `SELECT id::DOUBLE AS id, name, score, day FROM read_parquet([${liveFiles(table)
        .map((f) => `'${f}'`)
        .join(', ')}])`,
    );
    expect(duckRows.map((r) => eventText(r)).sort()).toEqual(range(0, 100));
  });

  it('partitionBy: Hive directories, partitionValues in the log, and the column read back by Sluice and DuckDB', async () => {
    const table = join(tempDir('sluice-delta-part-'), 'by day');
    const w = await deltaWriter(table, tempDir(), { partitionBy: ['day'], compression: 'zstd' });
    await w.add(0, 30);
    await w.q.stop();
    const adds = commits(table).flatMap((c) => actionsOf(c, 'add'));
    for (const a of adds) {
      const m = /^day=(d\d)\/part-.*\.zstd\.parquet$/.exec(a.path as string);
      expect(a.partitionValues).toEqual({ day: m?.[1] });
    }
    expect(new Set(adds.map((a) => (a.partitionValues as { day: string }).day))).toEqual(new Set(['d0', 'd1', 'd2']));
    expect(actionOf(commits(table)[0], 'metaData').partitionColumns).toEqual(['day']);
    expect(await rowsOf(session().read.format('delta').load(table))).toEqual(range(0, 30));
    const duckRows = await duck.rows(
      `SELECT id::DOUBLE AS id, name, score, day FROM read_parquet([${liveFiles(table)
        .map((f) => `'${f}'`)
        .join(', ')}], hive_partitioning = true)`,
    );
    expect(duckRows.map((r) => eventText(r)).sort()).toEqual(range(0, 30));
  });

  it('every 10th commit gets a Parquet checkpoint and _last_checkpoint; the checkpoint alone rebuilds the table', async () => {
    const table = join(tempDir('sluice-delta-ckpt-'), 't');
    const w = await deltaWriter(table, tempDir());
    for (let b = 0; b < 12; b++) await w.add(b * 10, b * 10 + 10);
    await w.q.stop();
    const log = join(table, '_delta_log');
    expect(readdirSync(log).filter((n) => n.includes('checkpoint'))).toEqual(['00000000000000000010.checkpoint.parquet', '_last_checkpoint']);
    expect(JSON.parse(readFileSync(join(log, '_last_checkpoint'), 'utf8'))).toMatchObject({ version: 10 });

    // DuckDB reads the checkpoint: protocol, metaData, the query's txn and the 11 commits' files.
    const cp = join(log, '00000000000000000010.checkpoint.parquet');
    const [counts] = await duck.rows(
      `SELECT count(protocol) AS p, count(metaData) AS m, count("add") AS a, max(txn.version)::INT AS v, max(txn.appId) AS app FROM read_parquet('${cp}')`,
    );
    const filesAt10 = commits(table)
      .slice(0, 11)
      .flatMap((c) => actionsOf(c, 'add')).length;
    expect(counts).toEqual({ p: '1', m: '1', a: String(filesAt10), v: 10, app: w.q.id });

    // With commits 0-10 gone, the checkpoint and commit 11 give the whole table.
    const copy = join(tempDir('sluice-delta-ckpt-copy-'), 't');
    cpSync(table, copy, { recursive: true });
    for (let v = 0; v <= 10; v++) rmSync(join(copy, '_delta_log', `${String(v).padStart(20, '0')}.json`));
    expect(await rowsOf(session().read.format('delta').load(copy))).toEqual(range(0, 120));
  });

  it('a replayed batch is skipped by its txn: the table gains no commit and no row', async () => {
    const table = join(tempDir('sluice-delta-replay-'), 't');
    const ckpt = tempDir();
    const w = await deltaWriter(table, ckpt);
    await w.add(0, 10);
    await w.add(10, 25);
    await w.q.stop();
    // As if the process died after the table's commit of batch 1 but before the checkpoint's.
    rmSync(join(ckpt, 'commits', '1'));
    const q = await session()
      .readStream.format('memory')
      .load(`delta_in_${streams - 1}`)
      .writeStream.format('delta')
      .option('checkpointLocation', ckpt)
      .start(table);
    await q.processAllAvailable();
    await q.stop();
    expect(q.id).toBe(w.q.id);
    expect(commits(table)).toHaveLength(2);
    expect(txnVersion(table, q.id)).toBe(1);
    expect(existsSync(join(ckpt, 'commits', '1'))).toBe(true);
    expect(await rowsOf(session().read.format('delta').load(table))).toEqual(range(0, 25));
  });

  it('a commit another writer took first is retried at the next version', async () => {
    const table = join(tempDir('sluice-delta-race-'), 't');
    const w = await deltaWriter(table, tempDir());
    await w.add(0, 10);
    // Another writer commits version 1 between this query's batches.
    writeFileSync(
      join(table, '_delta_log', `${'1'.padStart(20, '0')}.json`),
      `${JSON.stringify({ commitInfo: { timestamp: Date.now(), operation: 'WRITE' } })}\n`,
    );
    await w.add(10, 20);
    await w.q.stop();
    const log = commits(table);
    expect(log.map((c) => actionsOf(c, 'txn')[0]?.version ?? null)).toEqual([0, null, 1]);
    expect(await rowsOf(session().read.format('delta').load(table))).toEqual(range(0, 20));
  });

  it('complete mode replaces the table each batch (removes and adds in one commit); update mode is refused, as Delta does', async () => {
    const table = join(tempDir('sluice-delta-complete-'), 't');
    const stream = session().memoryStream(`delta_in_${streams++}`, EVENTS);
    const counts = session().readStream.format('memory').load(stream.name).groupBy('day').count();
    await expect(counts.writeStream.format('delta').outputMode('update').option('checkpointLocation', tempDir()).start(table)).rejects.toMatchObject({
      code: 'UNSUPPORTED_OUTPUT_MODE',
      option: 'outputMode',
    });
    const q = await counts.writeStream.format('delta').outputMode('complete').option('checkpointLocation', tempDir()).start(table);
    for (const [from, to] of [
      [0, 6],
      [6, 10],
    ] as const) {
      stream.addData(Array.from({ length: to - from }, (_, k) => event(from + k)));
      await q.processAllAvailable();
    }
    await q.stop();
    expect(await rowsOf(session().read.format('delta').load(table))).toEqual(['{"day":"d0","count":4}', '{"day":"d1","count":3}', '{"day":"d2","count":3}']);
    const [, second] = commits(table);
    expect(actionsOf(second, 'remove').map((r) => r.path)).toEqual(actionsOf(commits(table)[0], 'add').map((a) => a.path));
    expect(actionOf(second, 'commitInfo')).toMatchObject({ isBlindAppend: false, operationParameters: { outputMode: 'Complete' } });
  });

  it('a table missing a batch the checkpoint committed is SINK_CORRUPT; a table of another schema is TABLE_SCHEMA_MISMATCH', async () => {
    const table = join(tempDir('sluice-delta-lost-'), 't');
    const ckpt = tempDir();
    const w = await deltaWriter(table, ckpt);
    await w.add(0, 10);
    await w.add(10, 20);
    await w.q.stop();
    const copy = join(tempDir(), 't');
    cpSync(table, copy, { recursive: true });
    rmSync(join(copy, '_delta_log', `${'1'.padStart(20, '0')}.json`));
    const input = session()
      .readStream.format('memory')
      .load(`delta_in_${streams - 1}`);
    await expect(input.writeStream.format('delta').option('checkpointLocation', ckpt).start(copy)).rejects.toMatchObject({ code: 'SINK_CORRUPT' });

    const other = session().memoryStream(`delta_other_${streams++}`, 'id LONG, note STRING');
    await expect(
      session().readStream.format('memory').load(other.name).writeStream.format('delta').option('checkpointLocation', tempDir()).start(table),
    ).rejects.toMatchObject({ code: 'TABLE_SCHEMA_MISMATCH', file: table });
    expect(commits(table)).toHaveLength(2);
  });

  it.skipIf(!hasRoot())('a commit on a full disk is DISK_FULL naming the commit file; once space is freed a restart commits the batch once', async () => {
    const disk = mountTmpfs(512);
    try {
      const table = join(disk, 't');
      const ckpt = tempDir();
      const name = `delta_in_${streams++}`;
      const stream = session().memoryStream(name, EVENTS);
      // Rows of id 100 on are dropped: such a batch writes no part file, only its commit.
      const start = () =>
        session().readStream.format('memory').load(name).where(col('id').lt(100)).writeStream.format('delta').option('checkpointLocation', ckpt).start(table);
      const q = await start();
      stream.addData(Array.from({ length: 10 }, (_, k) => event(k)));
      await q.processAllAvailable();
      // Every page of the file system taken: the next commit's temp file cannot be written.
      const filler = fillDisk(disk);
      stream.addData(Array.from({ length: 10 }, (_, k) => event(100 + k)));
      const commit = join(table, '_delta_log', `${'1'.padStart(20, '0')}.json`);
      await expect(q.processAllAvailable()).rejects.toMatchObject({ code: 'DISK_FULL', file: commit });
      expect(q.exception).toMatchObject({ code: 'DISK_FULL', file: commit });
      // Neither the commit nor its temp file is left behind.
      expect(readdirSync(join(table, '_delta_log'))).toEqual([`${'0'.padStart(20, '0')}.json`]);

      rmSync(filler);
      const again = await start();
      await again.processAllAvailable();
      await again.stop();
      expect(commits(table)).toHaveLength(2);
      expect(txnVersion(table, again.id)).toBe(1);
      expect(await rowsOf(session().read.format('delta').load(table))).toEqual(range(0, 10));
    } finally {
      unmount(disk);
    }
  });
});

// ---- the source ---------------------------------------------------------------------------------

async function streamAll(df: DataFrame, name: string, ckpt = tempDir()): Promise<{ q: StreamingQuery; rows: string[] }> {
  const q = await df.writeStream.format('memory').queryName(name).option('checkpointLocation', ckpt).trigger(Trigger.AvailableNow()).start();
  await q.awaitTermination().catch(() => undefined); // a failed query: the caller reads q.exception
  return { q, rows: (await session().memoryTable(name)).map((r) => JSON.stringify(plain(r))).sort() };
}

const ids = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, k) => JSON.stringify({ id: from + k })).sort();

describe('the Delta source', () => {
  it('reads the snapshot first, then each new commit; maxFilesPerTrigger and maxBytesPerTrigger cap a batch; a restart goes on', async () => {
    const table = join(tempDir('sluice-delta-src-'), 't');
    const w = await deltaWriter(table, tempDir());
    for (let b = 0; b < 3; b++) await w.add(b * 10, b * 10 + 10);
    const files = (n: number): number =>
      commits(table)
        .slice(0, n)
        .flatMap((c) => actionsOf(c, 'add')).length;

    const ckpt = tempDir();
    const source = (): DataFrame => session().readStream.format('delta').option('maxFilesPerTrigger', 1).load(table);
    const first = await streamAll(source(), 'delta_src_a', ckpt);
    expect(first.rows).toEqual(range(0, 30));
    expect(first.q.recentProgress).toHaveLength(files(3));
    expect(first.q.recentProgress.every((p) => p.numInputRows > 0)).toBe(true);
    expect(first.q.lastProgress?.sources[0]?.endOffset).toMatchObject({ sourceVersion: 1, reservoirVersion: 2, isStartingVersion: true });

    await w.add(30, 45);
    await w.q.stop();
    const second = await streamAll(source(), 'delta_src_b', ckpt);
    expect(second.rows).toEqual(range(30, 45));
    expect(second.q.lastProgress?.sources[0]?.endOffset).toMatchObject({ reservoirVersion: 3, isStartingVersion: false });

    // A byte cap of one byte still takes one file a batch; a large one takes them all.
    const small = await streamAll(session().readStream.format('delta').option('maxBytesPerTrigger', 1).load(table), 'delta_src_c');
    expect(small.q.recentProgress).toHaveLength(files(4));
    const big = await streamAll(session().readStream.format('delta').option('maxBytesPerTrigger', '1g').load(table), 'delta_src_d');
    expect(big.q.recentProgress.map((p) => p.numInputRows)).toEqual([45]);
    expect(big.rows).toEqual(range(0, 45));
  });

  it('startingVersion reads the commits from it on; a commit that rewrites files is DELTA_SOURCE_TABLE_IGNORE_CHANGES unless skipChangeCommits', async () => {
    const table = join(GOLDEN, 'basic-with-inserts-deletes-checkpoint');
    // v10-v12 append 50..79 (10 rows each); v13 deletes id >= 66 by rewriting a file.
    const from10 = (opts: Record<string, boolean> = {}): DataFrame =>
      session().readStream.format('delta').option('startingVersion', 10).option('maxFilesPerTrigger', 1).options(opts).load(table);
    const failed = await streamAll(from10(), 'delta_src_e');
    expect(failed.q.exception).toMatchObject({ code: 'DELTA_SOURCE_TABLE_IGNORE_CHANGES', option: 'skipChangeCommits' });
    expect(failed.rows).toEqual(ids(50, 80));
    const skipped = await streamAll(from10({ skipChangeCommits: true }), 'delta_src_f');
    expect(skipped.rows).toEqual(ids(50, 80));
    expect(skipped.q.recentProgress.map((p) => p.numInputRows)).toEqual([10, 10, 10]);
    const changes = await streamAll(from10({ ignoreChanges: true }), 'delta_src_g');
    expect(changes.rows).toEqual([...ids(50, 80), ...ids(60, 66)].sort());
    // A version the log does not have.
    const past = await streamAll(session().readStream.format('delta').option('startingVersion', 99).load(table), 'delta_src_g2');
    expect(past.q.exception).toMatchObject({ code: 'DELTA_VERSION_NOT_FOUND' });
  });

  it('a commit that only deletes is DELTA_SOURCE_IGNORE_DELETE unless ignoreDeletes', async () => {
    // only-checkpoint-files: v0 ten one-row files (0..9), v1 removes five of them, v2 appends 0..19.
    const table = join(GOLDEN, 'only-checkpoint-files');
    const source = (ignoreDeletes = false): DataFrame =>
      session().readStream.format('delta').option('startingVersion', 0).option('ignoreDeletes', ignoreDeletes).load(table);
    const failed = await streamAll(source(), 'delta_src_h');
    expect(failed.q.exception).toMatchObject({ code: 'DELTA_SOURCE_IGNORE_DELETE', option: 'ignoreDeletes' });
    expect(String(failed.q.exception?.message)).toContain('version 1');
    const ignored = await streamAll(source(true), 'delta_src_i');
    expect(ignored.rows).toEqual([...ids(0, 10), ...ids(0, 20)].sort());
  });

  it('a commit that changes the schema stops the running query with DELTA_SCHEMA_CHANGED; a restart reads the new schema', async () => {
    // time-travel-schema-changes-b: v0 is 0..9 as (id), v1 adds a column: 10..19 as (id, part).
    const golden = join(GOLDEN, 'time-travel-schema-changes-b');
    const table = join(tempDir('sluice-delta-schema-'), 't');
    mkdirSync(join(table, '_delta_log'), { recursive: true });
    for (const f of readdirSync(golden)) if (f.endsWith('.parquet')) cpSync(join(golden, f), join(table, f));
    const commit = (v: number): void =>
      cpSync(join(golden, '_delta_log', `${String(v).padStart(20, '0')}.json`), join(table, '_delta_log', `${String(v).padStart(20, '0')}.json`));
    commit(0);
    const ckpt = tempDir();
    const q = await session()
      .readStream.format('delta')
      .load(table)
      .writeStream.format('memory')
      .queryName('delta_src_j')
      .option('checkpointLocation', ckpt)
      .start();
    await q.processAllAvailable();
    expect((await session().memoryTable('delta_src_j')).map((r) => JSON.stringify(r)).sort()).toEqual(ids(0, 10));
    commit(1);
    await expect(q.awaitTermination(30_000)).rejects.toMatchObject({ code: 'DELTA_SCHEMA_CHANGED', file: table });
    const after = await streamAll(session().readStream.format('delta').load(table), 'delta_src_k', ckpt);
    expect(after.q.exception).toBeNull();
    expect(after.rows).toEqual(Array.from({ length: 10 }, (_, k) => JSON.stringify({ id: 10 + k, part: 10 + k })).sort());
  });
});
