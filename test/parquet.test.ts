/**
 * Parquet through real clients: files DuckDB writes (every type Sluice reads, nulls, each
 * compression) read by Sluice to the exact values, and files Sluice's sink writes read by DuckDB
 * to the exact values Sluice was given; declared schemas, column pruning, row groups skipped by
 * their statistics, damaged files, partitioned output and the sink's options.
 */
import { openSync, readFileSync, writeFileSync, writeSync, closeSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Trigger, type StreamingQuery } from '@sluice/driver';
import { schemaToDDL } from '@sluice/executor';
import { openDuck, type Duck } from './duckdb.js';
import { plain, tempDir, useSession } from './helpers.js';

const N = 300;
/** The codecs both DuckDB and Sluice write; Sluice also reads lz4 (READ_ONLY_CODECS). */
const CODECS = ['snappy', 'gzip', 'zstd', 'brotli', 'uncompressed'] as const;
const READ_ONLY_CODECS = ['lz4'] as const;

/** The table DuckDB writes: every Parquet type Sluice reads, with nulls at every level. */
const DUCK_TABLE = `SELECT
  i::INT AS i,
  (i - 150)::BIGINT * 1000000007 AS l,
  (i * 0.25 - 10)::DOUBLE AS d,
  (i / 4)::FLOAT AS f,
  CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
  CASE WHEN i % 7 = 0 THEN NULL ELSE 'é-' || i END AS s,
  (DATE '1969-12-01' + (i * 3)::INT) AS dt,
  make_timestamp((i - 150)::BIGINT * 86400123000) AS ts,
  CASE WHEN i % 5 = 0 THEN NULL ELSE {'a': i, 'b': 'x' || i} END AS st,
  CASE WHEN i % 6 = 0 THEN NULL ELSE [i, NULL, i + 1] END AS arr,
  map(['k' || i], [i]) AS m,
  [{'k': i}, {'k': NULL}] AS ls,
  (i::DECIMAL(10, 2) / 4)::DECIMAL(10, 2) AS dec,
  i::SMALLINT AS sm,
  (i % 256)::UTINYINT AS ut,
  (i * 10000000)::UINTEGER AS ui,
  make_timestamp((i - 150)::BIGINT * 86400123000)::TIMESTAMP_NS AS tsn
FROM range(${N}) t(i)`;

// range() gives BIGINT, so the nested values are LONG.
const DUCK_SCHEMA =
  'i INT, l LONG, d DOUBLE, f DOUBLE, b BOOLEAN, s STRING, dt DATE, ts TIMESTAMP, st STRUCT<a: LONG, b: STRING>, arr ARRAY<LONG>, ' +
  'm MAP<STRING, LONG>, ls ARRAY<STRUCT<k: LONG>>, dec DOUBLE, sm INT, ut INT, ui LONG, tsn TIMESTAMP';

const DAY = 86_400_000;
const dateText = (days: number): string => new Date(days * DAY).toISOString().slice(0, 10);

/** Row i of DUCK_TABLE as Sluice hands it to the user (collect), made plain: dates and timestamps as ISO text, maps as entries. */
function expectedRow(i: number): Record<string, unknown> {
  const ts = new Date((i - 150) * 86_400_123).toISOString();
  return {
    i,
    l: (i - 150) * 1_000_000_007,
    d: i * 0.25 - 10,
    f: i / 4,
    b: i % 11 === 0 ? null : i % 3 === 0,
    s: i % 7 === 0 ? null : `é-${i}`,
    dt: `${dateText(Date.UTC(1969, 11, 1) / DAY + i * 3)}T00:00:00.000Z`,
    ts,
    st: i % 5 === 0 ? null : { a: i, b: `x${i}` },
    arr: i % 6 === 0 ? null : [i, null, i + 1],
    m: [[`k${i}`, i]],
    ls: [{ k: i }, { k: null }],
    dec: i / 4,
    sm: i,
    ut: i % 256,
    ui: i * 10_000_000,
    tsn: ts,
  };
}

const byI = (a: Record<string, unknown>, b: Record<string, unknown>): number => (a.i as number) - (b.i as number);

let duck: Duck;
const session = useSession();
/** DUCK_TABLE as one file per codec. */
let duckDir: string;
/** DUCK_TABLE as an lz4 file, elsewhere. */
let lz4File: string;

beforeAll(async () => {
  duck = await openDuck();
  duckDir = tempDir('sluice-parquet-duck-');
  for (const codec of CODECS) await duck.run(`COPY (${DUCK_TABLE}) TO '${duckDir}/${codec}.parquet' (FORMAT parquet, COMPRESSION ${codec})`);
  lz4File = join(tempDir('sluice-parquet-lz4-'), 'lz4.parquet');
  await duck.run(`COPY (${DUCK_TABLE}) TO '${lz4File}' (FORMAT parquet, COMPRESSION lz4)`);
}, 60_000);

async function runToEnd(q: StreamingQuery): Promise<void> {
  await q.awaitTermination();
}

describe('Parquet written by DuckDB, read by Sluice', () => {
  it('takes the schema from the footer: every type as its Sluice type', () => {
    expect(schemaToDDL(session().read.parquet(duckDir).schema)).toBe(DUCK_SCHEMA);
  });

  for (const codec of [...CODECS, ...READ_ONLY_CODECS]) {
    it(`reads a ${codec} file to the exact values, nulls included`, async () => {
      const dir = tempDir('sluice-parquet-one-');
      writeFileSync(join(dir, 'data.parquet'), readFileSync(codec === 'lz4' ? lz4File : join(duckDir, `${codec}.parquet`)));
      const rows = (await session().read.parquet(dir).collect()).map((r) => plain(r) as Record<string, unknown>).sort(byI);
      expect(rows).toEqual(Array.from({ length: N }, (_, i) => expectedRow(i)));
    });
  }

  it('streams a directory of Parquet files with maxFilesPerTrigger, every row once', async () => {
    const out = tempDir('sluice-parquet-stream-');
    const q = await session()
      .readStream.format('parquet')
      .schema(DUCK_SCHEMA)
      .option('maxFilesPerTrigger', 2)
      .load(duckDir)
      .writeStream.format('memory')
      .queryName('parquet_stream')
      .option('checkpointLocation', join(out, 'ckpt'))
      .trigger(Trigger.AvailableNow())
      .start();
    await runToEnd(q);
    expect(q.recentProgress.map((p) => p.numInputRows)).toEqual([2 * N, 2 * N, N]);
    const rows = (await session().memoryTable('parquet_stream')).map((r) => plain(r) as Record<string, unknown>).sort(byI);
    expect(rows).toEqual(Array.from({ length: N }, (_, i) => expectedRow(i)).flatMap((r) => Array.from({ length: CODECS.length }, () => r)));
  });

  it('a streaming Parquet source needs a schema (SCHEMA_REQUIRED), as in Spark', () => {
    expect(() => session().readStream.format('parquet').load(duckDir)).toThrow(expect.objectContaining({ code: 'SCHEMA_REQUIRED' }));
  });
});

describe('a declared schema against the footer', () => {
  it('widens INT to BIGINT and DOUBLE, and reads a column the file lacks as null', async () => {
    const rows = await session().read.schema('i BIGINT, sm DOUBLE, nope STRING').parquet(duckDir).filter('i < 2').collect();
    expect(rows.sort((a, b) => (a.i as number) - (b.i as number))).toEqual(
      [0, 1].flatMap((i) => Array.from({ length: CODECS.length }, () => ({ i, sm: i, nope: null }))),
    );
  });

  it('a column of another type is INVALID_SCHEMA naming the column and the file', async () => {
    const err = await session()
      .read.schema('i INT, s INT')
      .parquet(duckDir)
      .collect()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_SCHEMA', column: 's' });
    expect(String((err as Error).message)).toMatch(/column 's' is STRING in the file, which cannot be read as the schema's INT/);
    expect(String((err as { file?: string }).file)).toMatch(/\.parquet$/);
  });

  it('reads only the wanted columns: a column of a type Sluice lacks is no obstacle until it is read', async () => {
    const dir = tempDir('sluice-parquet-time-');
    await duck.run(`COPY (SELECT i::INT AS i, TIME '12:34:56' AS t FROM range(3) t(i)) TO '${dir}/time.parquet' (FORMAT parquet)`);
    expect(() => session().read.parquet(dir)).toThrow(expect.objectContaining({ code: 'PARQUET_UNSUPPORTED_TYPE', column: 't' }));
    expect(await session().read.schema('i INT').parquet(dir).collect()).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    await expect(session().read.schema('i INT, t STRING').parquet(dir).collect()).rejects.toMatchObject({ code: 'PARQUET_UNSUPPORTED_TYPE', column: 't' });
  });
});

describe('row groups and damage', () => {
  // DuckDB's least row group: its vector size.
  const GROUP = 2048;

  /** A file of 3 row groups (i 0-2047, 2048-4095, 4096-6143) whose middle one has its column chunk of i overwritten with garbage. */
  async function damagedMiddleGroup(): Promise<{ dir: string; file: string }> {
    const dir = tempDir('sluice-parquet-groups-');
    const file = join(dir, 'groups.parquet');
    await duck.run(`COPY (SELECT i::BIGINT AS i, 'v' || i AS v FROM range(${3 * GROUP}) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${GROUP})`);
    const [chunk] = await duck.rows(
      `SELECT data_page_offset::BIGINT AS offset, total_compressed_size::BIGINT AS size FROM parquet_metadata('${file}') WHERE row_group_id = 1 AND path_in_schema = 'i'`,
    );
    const fd = openSync(file, 'r+');
    try {
      writeSync(fd, Buffer.alloc(Number(chunk!.size), 0xee), 0, Number(chunk!.size), Number(chunk!.offset));
    } finally {
      closeSync(fd);
    }
    return { dir, file };
  }

  it('a filter on a column compared with a literal skips the row groups its statistics rule out', async () => {
    const { dir, file } = await damagedMiddleGroup();
    // The damaged group is never read: both filters rule it out by its min and max.
    const high = await session()
      .read.parquet(dir)
      .filter(`i >= ${2 * GROUP}`)
      .collect();
    expect(high.map((r) => r.i)).toEqual(Array.from({ length: GROUP }, (_, k) => 2 * GROUP + k));
    const low = await session().read.parquet(dir).filter('50 > i AND v IS NOT NULL').collect();
    expect(low.map((r) => r.i)).toEqual(Array.from({ length: 50 }, (_, k) => k));
    expect(
      await session()
        .read.parquet(dir)
        .filter(`i = ${GROUP + 5}`)
        .collect()
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'PARQUET_CORRUPT', file });
  });

  it('a damaged file is PARQUET_CORRUPT naming it, and the session goes on', async () => {
    const dir = tempDir('sluice-parquet-bad-');
    const file = join(dir, 'bad.parquet');
    writeFileSync(file, 'this is not parquet, though its name says so');
    expect(() => session().read.parquet(dir)).toThrow(expect.objectContaining({ code: 'PARQUET_CORRUPT', file }));
    await expect(session().read.schema('i INT').parquet(dir).collect()).rejects.toMatchObject({ code: 'PARQUET_CORRUPT', file });
    // A truncated file: the footer's length no longer fits.
    const good = readFileSync(join(duckDir, 'snappy.parquet'));
    writeFileSync(file, good.subarray(0, 20));
    await expect(session().read.schema('i INT').parquet(dir).collect()).rejects.toMatchObject({ code: 'PARQUET_CORRUPT', file });
    expect(await session().read.parquet(duckDir).filter('i = 1').collect()).toHaveLength(CODECS.length);
  });
});

describe('the Parquet sink, read by DuckDB', () => {
  /** DuckDB's view of a Parquet directory, in the same plain form as expectedRow (BIGINT and UINTEGER as numbers). */
  const duckView = (glob: string, extra = ''): string => `SELECT i, l::DOUBLE AS l, d, f, b, s, strftime(dt, '%Y-%m-%d') || 'T00:00:00.000Z' AS dt,
      strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%g') || 'Z' AS ts, to_json(st)::VARCHAR AS st, to_json(arr)::VARCHAR AS arr,
      to_json(map_entries(m))::VARCHAR AS m, to_json(ls)::VARCHAR AS ls, dec, sm, ut, ui::DOUBLE AS ui${extra}
    FROM read_parquet('${glob}'${extra ? ', hive_partitioning = true' : ''}) ORDER BY i`;

  const asDuckSees = (r: Record<string, unknown>): Record<string, unknown> => {
    const { tsn: _, m, ...rest } = r;
    const json = (v: unknown): string | null => (v === null ? null : JSON.stringify(v));
    return {
      ...rest,
      st: json(rest.st),
      arr: json(rest.arr),
      m: json((m as Array<[string, number]>).map(([key, value]) => ({ key, value }))),
      ls: json(rest.ls),
    };
  };

  for (const codec of CODECS) {
    it(`writes ${codec} files that DuckDB reads to the values Sluice was given`, async () => {
      const dir = tempDir('sluice-parquet-sink-');
      const out = join(dir, 'out');
      const q = await session()
        .readStream.schema(DUCK_SCHEMA)
        .parquet(duckDir)
        .writeStream.format('parquet')
        .option('compression', codec)
        .option('checkpointLocation', join(dir, 'ckpt'))
        .trigger(Trigger.AvailableNow())
        .start(out);
      await runToEnd(q);
      const files = readdirSync(out).filter((f) => f.endsWith('.parquet'));
      expect(files.length).toBeGreaterThan(0);
      expect(files.every((f) => f.endsWith(codec === 'uncompressed' ? '.parquet' : `.${codec}.parquet`))).toBe(true);
      const codecs = await duck.rows(`SELECT DISTINCT compression FROM parquet_metadata('${out}/*.parquet')`);
      expect(codecs.map((c) => String(c.compression).toLowerCase())).toEqual([codec]);
      const seen = await duck.rows(duckView(`${out}/*.parquet`));
      const wanted = Array.from({ length: N }, (_, i) => asDuckSees(expectedRow(i))).flatMap((r) => Array.from({ length: CODECS.length }, () => r));
      expect(seen).toEqual(wanted);
      // And through Sluice's own reader, by the sink's manifest.
      expect((await session().read.parquet(out).collect()).map((r) => plain(r) as Record<string, unknown>).sort(byI)).toEqual(
        Array.from({ length: N }, (_, i) => expectedRow(i)).flatMap((r) => Array.from({ length: CODECS.length }, () => r)),
      );
    });
  }

  it('partitionBy writes Hive directories that Sluice and DuckDB read the partition column back from', async () => {
    const dir = tempDir('sluice-parquet-parts-');
    const out = join(dir, 'out');
    const q = await session()
      .readStream.schema(DUCK_SCHEMA)
      .parquet(duckDir)
      .filter('s IS NOT NULL AND i < 30')
      .selectExpr('i', 's', 'CAST(i % 3 AS INT) AS part')
      .writeStream.format('parquet')
      .partitionBy('part')
      .option('checkpointLocation', join(dir, 'ckpt'))
      .trigger(Trigger.AvailableNow())
      .start(out);
    await runToEnd(q);
    expect(
      readdirSync(out)
        .filter((f) => f.startsWith('part='))
        .sort(),
    ).toEqual(['part=0', 'part=1', 'part=2']);
    const want = Array.from({ length: 30 }, (_, i) => i)
      .filter((i) => i % 7 !== 0)
      .flatMap((i) => Array.from({ length: CODECS.length }, () => ({ i, s: `é-${i}`, part: i % 3 })));
    const back = session().read.parquet(out);
    expect(schemaToDDL(back.schema)).toBe('i INT, s STRING, part INT');
    expect((await back.collect()).sort(byI)).toEqual(want);
    const seen = await duck.rows(`SELECT i, s, part::INT AS part FROM read_parquet('${out}/*/*.parquet', hive_partitioning = true) ORDER BY i`);
    expect(seen).toEqual(want);
  });

  it('refuses what Parquet cannot hold and an unknown codec, before the query starts', async () => {
    const df = session().readStream.format('rate').load().selectExpr('value', "INTERVAL '1' DAY AS span");
    await expect(df.writeStream.format('parquet').option('checkpointLocation', tempDir()).start(tempDir())).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
      column: 'span',
    });
    const ok = session().readStream.format('rate').load();
    await expect(ok.writeStream.format('parquet').option('compression', 'lzo').option('checkpointLocation', tempDir()).start(tempDir())).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'compression',
    });
    expect(session().streams.active).toEqual([]);
  });
});
