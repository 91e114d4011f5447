// The Nexmark suite (bench/nexmark/queries.mjs): for each query, events/s of Sluice on 1 and 2
// slots (the DataFrame form, noop sink; q10 writes its CSV files) against a hand-written
// single-thread loop over the same generated events (bench/nexmark/hand.mjs), in the same run,
// with DuckDB's time on the same events (tables loaded beforehand, its own thread count; the
// query into a temporary table) for context. Each query's result is also checked at this scale: a run into the memory sink (q10:
// its files) must equal DuckDB's (q12: its invariants).
//
//   node bench/nexmark.bench.mjs [q…] [--events N] [--slots S[,S…]] [--no-check]
//
// Events: N events of seed 0 (default 1,000,000), 10,000 a second of event time, one batch per
// 250,000 events; every table is read from its own nexmark source over the same events. The time
// of a Sluice run is start() to awaitTermination() (Trigger.AvailableNow, the final batch
// included), of a hand loop its call (generation included, as the engine's is), of DuckDB its
// query; each is timed after a warm-up run (Sluice: a run of one batch). SLUICE_BENCH_REPS (1)
// repeats each; medians. Prints one table, and records per query
// `nexmark-<q>` (2 slots / hand loop) and per group the geometric mean of its queries' ratios.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, median, record, removeDir, round } from './lib.mjs';
import { QUERIES, queryById } from './nexmark/queries.mjs';
import { HAND } from './nexmark/hand.mjs';
import { checkResult, duckReadsOutput, duckRows, eventOptions, loadDuckTables, outputRows, runQuery, writeEventFiles } from './nexmark/harness.mjs';
import { loadavg } from 'node:os';

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const EVENTS = Number(flag('--events') ?? 1_000_000);
const SLOTS = (flag('--slots') ?? '1,2').split(',').map(Number);
const CHECK = !args.includes('--no-check');
const REPS = envInt('SLUICE_BENCH_REPS', 1);
const ids = args.filter((a) => /^q\d+$/.test(a));
const selected = ids.length > 0 ? ids.map(queryById) : QUERIES;
const ev = eventOptions({ events: EVENTS, eventsPerBatch: 250_000 });

/** The queries of each aim of the Nexmark issue. */
const GROUPS = {
  stateless: ['q0', 'q1', 'q2', 'q14', 'q21', 'q22'],
  windowed: ['q5', 'q7', 'q11', 'q15', 'q16', 'q17'],
  joins: ['q3', 'q4', 'q8', 'q9', 'q20'],
};

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function main() {
  if (!Number.isInteger(EVENTS) || EVENTS <= 0) throw new Error(`--events must be a positive integer`);
  const load = loadavg()[0];
  const driver = await loadDriver();
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const work = makeTempDir('nexmark');
  cleanupOnExit(work);
  console.log(`nexmark: ${EVENTS} events, slots ${SLOTS.join(', ')}; writing them for DuckDB under ${work} ...`);
  const files = writeEventFiles(join(work, 'events'), ev);
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  await loadDuckTables(duck, files);
  const sessions = new Map();
  for (const slots of SLOTS) sessions.set(slots, await driver.Session.create({ conf: { 'sluice.executor.cores': slots } }));
  const table = [];
  let run = 0;
  try {
    for (const q of selected) {
      if (q.cannot) {
        table.push({ query: q.id, kind: q.kind, note: q.cannot });
        continue;
      }
      const expected = { value: await duckRows(duck, q) };
      // DuckDB's time: the query into a table of its own (its rows made into JavaScript objects would cost more than the query).
      const duckMs = [];
      for (let rep = 0; rep < REPS; rep++) duckMs.push((await timed(() => duck.run(`CREATE OR REPLACE TEMP TABLE result AS ${q.duckdb}`))).ms);
      let check = 'not checked';
      if (CHECK) {
        const dir = join(work, `check-${q.id}`);
        mkdirSync(dir, { recursive: true });
        // A session of its own, so that the memory sink's rows go with it.
        const session = await driver.Session.create({ conf: { 'sluice.executor.cores': SLOTS.at(-1) } });
        let problem;
        try {
          await runQuery(session, q, ev, { name: `check_${q.id}`, dir });
          problem = checkResult(q, await outputRows(session, q, { name: `check_${q.id}`, dir }), expected.value);
        } finally {
          await session.close();
        }
        const filesProblem = q.sink ? checkResult(q, await duckReadsOutput(duck, q, dir), expected.value) : null;
        check = problem ?? filesProblem ?? (q.check === 'invariants' ? 'invariants hold' : 'equals DuckDB');
        removeDir(dir);
        if (problem ?? filesProblem) console.error(`${q.id}: ${problem ?? filesProblem}`);
      }
      const hand = [];
      HAND[q.id](ev); // warm-up: the first call compiles
      for (let rep = 0; rep < REPS; rep++) hand.push((await timed(() => HAND[q.id](ev))).ms);
      const perSlots = {};
      for (const [slots, session] of sessions) {
        // Warm-up: a run of one batch, so that the workers have compiled the query's code.
        const warm = join(work, `warm-${run++}`);
        await runQuery(session, q, { ...ev, events: Math.min(EVENTS, ev.eventsPerBatch) }, { sink: 'noop', dir: warm });
        removeDir(warm);
        const ms = [];
        for (let rep = 0; rep < REPS; rep++) {
          const dir = join(work, `run-${run++}`);
          mkdirSync(dir, { recursive: true });
          const { ms: t, value: query } = await timed(() => runQuery(session, q, ev, { sink: 'noop', dir }));
          if (query.exception) throw query.exception;
          ms.push(t);
          removeDir(dir);
        }
        perSlots[slots] = median(ms);
      }
      const rate = (ms) => round((EVENTS * 1000) / ms, 0);
      const row = {
        query: q.id,
        kind: q.kind,
        hand: rate(median(hand)),
        ...Object.fromEntries(SLOTS.map((s) => [`slots${s}`, rate(perSlots[s])])),
        duckdbMs: round(median(duckMs), 0),
        check,
      };
      row.ratio = round(row[`slots${SLOTS.at(-1)}`] / row.hand, 3);
      table.push(row);
      console.log(
        `  ${q.id}: hand ${row.hand} ev/s, ${SLOTS.map((s) => `${s} slot${s > 1 ? 's' : ''} ${row[`slots${s}`]}`).join(', ')} ev/s, ratio ${row.ratio}; DuckDB ${row.duckdbMs} ms; ${check}`,
      );
    }
  } finally {
    for (const s of sessions.values()) await s.close();
    removeDir(work);
  }
  printTable(table);
  recordResults(table, load);
}

function printTable(table) {
  const last = SLOTS.at(-1);
  const head = [
    'query',
    'kind',
    'hand loop ev/s',
    ...SLOTS.map((s) => `Sluice ${s} slot${s > 1 ? 's' : ''} ev/s`),
    `${last} slots / hand`,
    `ev/s per core (${last} slots)`,
    'DuckDB ms',
    'result',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of table) {
    if (r.note)
      lines.push(
        `| ${r.query} | ${r.kind} | ${head
          .slice(2, -1)
          .map(() => '')
          .join(' | ')} | ${r.note} |`,
      );
    else
      lines.push(
        `| ${[r.query, r.kind, r.hand, ...SLOTS.map((s) => r[`slots${s}`]), r.ratio, round(r[`slots${last}`] / last, 0), r.duckdbMs, r.check].join(' | ')} |`,
      );
  }
  console.log(`\nNexmark, ${EVENTS} events (${machineFacts(loadavg()[0]).cpu}):\n\n${lines.join('\n')}\n`);
}

function recordResults(table, load) {
  const last = SLOTS.at(-1);
  const command = `${commandLine()}${args.length ? ` ${args.join(' ')}` : ''}`;
  const params = {
    events: EVENTS,
    slots: SLOTS,
    reps: REPS,
    eventsPerSecond: ev.eventsPerSecond,
    eventsPerBatch: ev.eventsPerBatch,
    machine: machineFacts(load),
  };
  const measured = table.filter((r) => !r.note);
  for (const r of measured) {
    record({
      name: `nexmark-${r.query}`,
      unit: 'events/s',
      value: r[`slots${last}`],
      baseline: r.hand,
      ratio: r.ratio,
      params: { ...params, row: r },
      command,
    });
  }
  for (const [group, members] of Object.entries(GROUPS)) {
    const rows = measured.filter((r) => members.includes(r.query));
    if (rows.length !== members.length) continue; // a run of some queries records only theirs
    const geo = Math.exp(rows.reduce((s, r) => s + Math.log(r.ratio), 0) / rows.length);
    record({
      name: `nexmark-${group}`,
      unit: 'ratio',
      value: round(geo, 3),
      baseline: 1,
      ratio: round(geo, 3),
      params: { ...params, queries: members, ratios: Object.fromEntries(rows.map((r) => [r.query, r.ratio])) },
      command,
    });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
