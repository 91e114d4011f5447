// Runs the Nexmark queries (queries.mjs) on Sluice and on DuckDB over the same events, and
// compares their final results. Used by test/nexmark.test.ts (small scale) and by
// bench/nexmark.bench.mjs (bench scale).
import { mkdirSync, openSync, closeSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Trigger } from '@sluice/driver';
import { NexmarkGenerator } from '@sluice/executor';

/** Flink's DDL: WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND. */
export const WATERMARK_DELAY = '4 seconds';
/** q13's side input, as Flink's SideInputGenerator writes it: rows (i, 'i') for i < 10,000. */
export const SIDE_INPUT_ROWS = 10_000;

/**
 * What a run reads: `events` events of the stream seeded `seed`, `eventsPerSecond` of event time
 * apart, from `startTimestamp`, at most `eventsPerBatch` a batch.
 */
export function eventOptions({ events, seed = 0, eventsPerSecond = 10_000, startTimestamp = Date.UTC(2026, 0, 1), eventsPerBatch = events }) {
  return { events, seed, eventsPerSecond, startTimestamp, eventsPerBatch };
}

function stream(session, table, ev) {
  return session.readStream
    .format('nexmark')
    .option('table', table)
    .option('seed', ev.seed)
    .option('eventsPerSecond', ev.eventsPerSecond)
    .option('startTimestamp', ev.startTimestamp)
    .option('maxEvents', ev.events)
    .option('maxOffsetsPerTrigger', ev.eventsPerBatch)
    .load()
    .withWatermark('dateTime', WATERMARK_DELAY);
}

/** The static side input of q13. */
export function sideInput(session) {
  const rows = Array.from({ length: SIDE_INPUT_ROWS }, (_, i) => ({ key: i, value: String(i) }));
  return session.createDataFrame(rows, 'key LONG, value STRING');
}

/** The streams a query reads (each table a source of its own), and `another(table)` for a second reading of one. */
export function nexmarkStreams(session, ev) {
  const t = { person: stream(session, 'person', ev), auction: stream(session, 'auction', ev), bid: stream(session, 'bid', ev), side: sideInput(session) };
  return { t, ctx: { session, another: (table) => stream(session, table, ev) } };
}

/** The query's streaming DataFrame, through the DataFrame API or SQL over views. */
export function queryFrame(session, q, ev, api) {
  const { t, ctx } = nexmarkStreams(session, ev);
  if (api === 'dataframe') return q.dataframe(t, ctx);
  t.person.createOrReplaceTempView('person');
  t.auction.createOrReplaceTempView('auction');
  t.bid.createOrReplaceTempView('bid');
  t.side.createOrReplaceTempView('side_input');
  const df = session.sql(q.sql);
  return q.afterSql ? q.afterSql(df) : df;
}

/**
 * Starts query q and runs it to the stream's end (Trigger.AvailableNow: every batch, then the
 * batch the ended event time closes every window in). A query with a file sink of its own (q10)
 * writes under `dir`; others write to `sink` (memory, or noop for timing). Returns the query.
 */
export async function runQuery(session, q, ev, { api = 'dataframe', sink = 'memory', name = `${q.id}_${api}`, dir }) {
  const df = queryFrame(session, q, ev, api);
  let writer = df.writeStream.outputMode(q.mode).trigger(Trigger.AvailableNow());
  if (q.sink) {
    if (dir === undefined) throw new Error(`${q.id} writes files: give runQuery a dir`);
    writer = writer
      .format(q.sink.format)
      .partitionBy(...q.sink.partitionBy)
      .option('checkpointLocation', join(dir, 'checkpoint'));
  } else {
    writer = writer.format(sink);
    if (sink === 'memory') writer = writer.queryName(name);
  }
  const query = await writer.start(q.sink ? join(dir, 'out') : undefined);
  await query.awaitTermination();
  return query;
}

/** The rows query q wrote: its memory table, or its files read back (with their partition columns). */
export async function outputRows(session, q, { api = 'dataframe', name = `${q.id}_${api}`, dir }) {
  if (!q.sink) return session.memoryTable(name);
  return session.read.format(q.sink.format).schema(q.sink.schema).load(join(dir, 'out')).collect();
}

/** The rows of q10's files as DuckDB reads them (Hive partitioning), named as q's columns. */
export async function duckReadsOutput(con, q, dir) {
  const types = Object.fromEntries(q.sink.schema.split(', ').map((c) => c.split(' ')));
  const data = Object.entries(types).filter(([c]) => !q.sink.partitionBy.includes(c));
  const spec = data.map(([c, t]) => `'${c}': '${t === 'LONG' ? 'BIGINT' : t === 'STRING' ? 'VARCHAR' : t}'`).join(', ');
  const select = q.columns.map((c) => (types[c] === 'TIMESTAMP' ? `epoch_ms(${c}) AS ${c}` : c)).join(', ');
  const reader = await con.runAndReadAll(
    `SELECT ${select} FROM read_csv('${join(dir, 'out')}/**/*.${q.sink.format}', header = false, hive_partitioning = true, hive_types_autocast = false, columns = {${spec}})`,
  );
  return reader.getRowObjects();
}

/** Sluice's final result: every row (append), or the last row of each key (update). */
export function finalRows(q, rows) {
  if (!q.key) return rows;
  const last = new Map();
  for (const row of rows) last.set(JSON.stringify(q.key.map((k) => normalizeValue(row[k]))), row);
  return [...last.values()];
}

function normalizeValue(v) {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && !Number.isInteger(v)) return Number(v.toPrecision(12));
  if (v !== null && typeof v === 'object' && 'width' in v && 'scale' in v) return Number(v.toString());
  return v ?? null;
}

/** A row as the list of its `columns`' values, timestamps in epoch ms, doubles to 12 digits. */
export function normalizeRow(row, columns) {
  return columns.map((c) => normalizeValue(row[c]));
}

/** Writes the events' three tables as CSV files (header; timestamps in epoch ms) for DuckDB. */
export function writeEventFiles(dir, ev) {
  mkdirSync(dir, { recursive: true });
  const files = {};
  for (const table of ['person', 'auction', 'bid']) {
    const gen = new NexmarkGenerator({ table, seed: ev.seed, eventsPerSecond: ev.eventsPerSecond, startTimestamp: ev.startTimestamp });
    const path = join(dir, `${table}.csv`);
    const fd = openSync(path, 'w');
    try {
      let header = null;
      for (let lo = 0; lo < ev.events; lo += 100_000) {
        const rows = gen.rows(lo, Math.min(ev.events, lo + 100_000));
        if (rows.length === 0) continue;
        header ??= Object.keys(rows[0]);
        if (lo === 0) writeSync(fd, `${header.join(',')}\n`);
        writeSync(fd, `${rows.map((r) => header.map((k) => (typeof r[k] === 'string' ? `"${r[k]}"` : r[k])).join(',')).join('\n')}\n`);
      }
    } finally {
      closeSync(fd);
    }
    files[table] = path;
  }
  const side = join(dir, 'side_input.csv');
  const fd = openSync(side, 'w');
  writeSync(fd, `key,value\n${Array.from({ length: SIDE_INPUT_ROWS }, (_, i) => `${i},"${i}"`).join('\n')}\n`);
  closeSync(fd);
  files.side_input = side;
  return files;
}

const TABLE_COLUMNS = {
  person: 'id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, dateTime BIGINT, extra VARCHAR',
  auction:
    'id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime BIGINT, expires BIGINT, seller BIGINT, category BIGINT, extra VARCHAR',
  bid: 'auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime BIGINT, extra VARCHAR',
  side_input: 'key BIGINT, value VARCHAR',
};

/** Loads the CSV files into DuckDB tables person, auction, bid and side_input (timestamps as TIMESTAMP; "" stays an empty string). */
export async function loadDuckTables(con, files) {
  for (const [table, columns] of Object.entries(TABLE_COLUMNS)) {
    const types = Object.fromEntries(columns.split(', ').map((c) => c.split(' ')));
    const select = Object.keys(types)
      .map((c) => (types[c] === 'BIGINT' && (c === 'dateTime' || c === 'expires') ? `epoch_ms(${c}) AS ${c}` : c))
      .join(', ');
    const spec = Object.entries(types)
      .map(([c, t]) => `'${c}': '${t}'`)
      .join(', ');
    await con.run(
      `CREATE OR REPLACE TABLE ${table} AS SELECT ${select} FROM read_csv('${files[table]}', header = true, quote = '"', allow_quoted_nulls = false, columns = {${spec}})`,
    );
  }
}

/** DuckDB's result of q as rows (objects by column name). */
export async function duckRows(con, q) {
  const reader = await con.runAndReadAll(q.duckdb);
  return reader.getRowObjects();
}

/**
 * Compares two results as multisets of normalized rows over `columns`; returns null when equal,
 * else a description of the first differences.
 */
export function compareResults(columns, actual, expected) {
  const count = (rows) => {
    const m = new Map();
    for (const r of rows) {
      const k = JSON.stringify(normalizeRow(r, columns));
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    return m;
  };
  const a = count(actual);
  const e = count(expected);
  const missing = [];
  const extra = [];
  for (const [k, n] of e) if ((a.get(k) ?? 0) < n) missing.push(k);
  for (const [k, n] of a) if ((e.get(k) ?? 0) < n) extra.push(k);
  if (missing.length === 0 && extra.length === 0) return null;
  return `${actual.length} rows vs ${expected.length} expected; ${missing.length} missing (${missing.slice(0, 3).join(' ')}), ${extra.length} unexpected (${extra.slice(0, 3).join(' ')})`;
}

/** q12's invariants: windows aligned to 10 s and 10 s long, and each bidder's counts add up to its bids. */
export function checkInvariants(actual, expected) {
  const problems = [];
  const perBidder = new Map();
  for (const row of actual) {
    const start = normalizeValue(row.starttime);
    const end = normalizeValue(row.endtime);
    if (start % 10_000 !== 0 || end - start !== 10_000) problems.push(`window ${start}-${end} of bidder ${row.bidder}`);
    perBidder.set(Number(row.bidder), (perBidder.get(Number(row.bidder)) ?? 0) + Number(row.bid_count));
  }
  const want = new Map(expected.map((r) => [Number(r.bidder), Number(r.bid_count)]));
  for (const [bidder, n] of want) if (perBidder.get(bidder) !== n) problems.push(`bidder ${bidder}: ${perBidder.get(bidder)} bids counted, ${n} made`);
  for (const bidder of perBidder.keys()) if (!want.has(bidder)) problems.push(`bidder ${bidder} counted but made no bid`);
  return problems.length === 0 ? null : `${problems.length} problems: ${problems.slice(0, 3).join('; ')}`;
}

/** Checks Sluice's rows of q against DuckDB's; null when they agree. */
export function checkResult(q, sluiceRows, duckdbRows) {
  const final = finalRows(q, sluiceRows);
  return q.check === 'invariants' ? checkInvariants(final, duckdbRows) : compareResults(q.columns, final, duckdbRows);
}
