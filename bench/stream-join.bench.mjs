// Stream-stream join: Spark's ad impressions and clicks join (left outer, watermarks of 2 and 3
// hours, clicks within an hour of their impression), against a hand-written symmetric hash join
// loop over the same rows in the same run.
//
//   impressions: rate-micro-batch (rowsPerBatch 100,000) .select(value as impressionAdId, timestamp_millis(value * 36) as impressionTime)
//   clicks:      rate-micro-batch (rowsPerBatch 100,000) .select(value as clickAdId, timestamp_millis(value * 36 + 600000) as clickTime)
//     impressions.join(clicks, clickAdId = impressionAdId AND clickTime >= impressionTime
//       AND clickTime <= impressionTime + interval 1 hour, 'leftOuter') -> foreachBatch counting rows
//
// 1,000,000 rows a side in 10 measured batches (after 2 warm-up ones) span 10 hours of event time;
// every impression joins its click, 10 minutes after it, in the same batch. The state holds about
// the last 3 hours of each side (the watermark, less the hour of the condition, evicts the rest).
//
// Sluice's rate is both sides' input rows per second, sum(numInputRows) / sum(batchDuration) over
// the measured batches (no-data batches, when they run, count into the time of the next one: they
// are part of the work). The baseline, on the main thread: per batch, both sides' rows as
// objects, then Spark's algorithm by hand: each impression probes a Map of stored clicks by id,
// then is stored; each click probes the stored impressions, checks the time range, marks the
// match and is stored; then rows the watermark has passed are dropped from time-ordered queues,
// unmatched impressions emitted with nulls. It runs three times (before, between and after two
// Sluice runs); median.
//
// Knobs (environment): SLUICE_BENCH_ROWS_PER_BATCH (100000), SLUICE_BENCH_BATCHES (10),
// SLUICE_BENCH_CORES (2), SLUICE_BENCH_TMP.
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, measureDataBatches, median, record, round } from './lib.mjs';

const ROWS = envInt('SLUICE_BENCH_ROWS_PER_BATCH', 100_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 10);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const WARMUP = 2;
const STEP_MS = 36; // event time of row v: v × 36 ms
const CLICK_LAG_MS = 10 * 60_000;
const HOUR = 3_600_000;
const LOAD_AT_START = loadavg()[0];

const { Session, expr } = await loadDriver();
const tmp = makeTempDir('stream-join');
cleanupOnExit(tmp);

/** Spark's algorithm by hand, on the main thread (see the header). */
function baseline() {
  const impressions = new Map(); // id -> [{ row, matched }]
  const clicks = new Map();
  const impQueue = []; // stored impressions in time order (they arrive in order)
  const clickQueue = [];
  let impHead = 0;
  let clickHead = 0;
  let maxImp = -Infinity;
  let maxClick = -Infinity;
  let watermark = 0;
  let out = 0;
  const ms = [];
  const push = (map, key, entry) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [entry]);
    else list.push(entry);
  };
  for (let b = 0; b < WARMUP + MEASURED; b++) {
    const t0 = performance.now();
    const imps = new Array(ROWS);
    const cls = new Array(ROWS);
    for (let i = 0; i < ROWS; i++) {
      const v = b * ROWS + i;
      imps[i] = { impressionAdId: v, impressionTime: v * STEP_MS };
      cls[i] = { clickAdId: v, clickTime: v * STEP_MS + CLICK_LAG_MS };
    }
    const output = [];
    const inRange = (imp, click) => click.clickTime >= imp.impressionTime && click.clickTime <= imp.impressionTime + HOUR;
    for (const row of imps) {
      const entry = { row, matched: false };
      for (const c of clicks.get(row.impressionAdId) ?? []) {
        if (!inRange(row, c.row)) continue;
        entry.matched = c.matched = true;
        output.push({ ...row, ...c.row });
      }
      push(impressions, row.impressionAdId, entry);
      impQueue.push(entry);
      if (row.impressionTime > maxImp) maxImp = row.impressionTime;
    }
    for (const row of cls) {
      const entry = { row, matched: false };
      for (const i of impressions.get(row.clickAdId) ?? []) {
        if (!inRange(i.row, row)) continue;
        entry.matched = i.matched = true;
        output.push({ ...i.row, ...row });
      }
      push(clicks, row.clickAdId, entry);
      clickQueue.push(entry);
      if (row.clickTime > maxClick) maxClick = row.clickTime;
    }
    // Eviction by this batch's watermark (the last batch's maxima), as the engine does.
    while (impHead < impQueue.length && impQueue[impHead].row.impressionTime <= watermark - HOUR - 1) {
      const e = impQueue[impHead++];
      if (!e.matched) output.push({ ...e.row, clickAdId: null, clickTime: null });
      impressions.delete(e.row.impressionAdId);
    }
    while (clickHead < clickQueue.length && clickQueue[clickHead].row.clickTime <= watermark - 1) {
      clicks.delete(clickQueue[clickHead++].row.clickAdId);
    }
    watermark = Math.max(watermark, Math.min(maxImp - 2 * HOUR, maxClick - 3 * HOUR));
    out += output.length;
    if (b >= WARMUP) ms.push(performance.now() - t0);
  }
  return { rowsPerSec: (2 * ROWS * MEASURED * 1000) / ms.reduce((a, b) => a + b, 0), joined: out };
}

async function sluice() {
  const session = await Session.create({ conf: { 'sluice.executor.cores': CORES } });
  let joined = 0;
  try {
    const side = (name, time, lag) =>
      session.readStream
        .format('rate-micro-batch')
        .option('rowsPerBatch', ROWS)
        .load()
        .select(expr(`value AS ${name}AdId`), expr(`timestamp_millis(value * ${STEP_MS} + ${lag}) AS ${time}`));
    const impressions = side('impression', 'impressionTime', 0).withWatermark('impressionTime', '2 hours');
    const clicks = side('click', 'clickTime', CLICK_LAG_MS).withWatermark('clickTime', '3 hours');
    const q = await impressions
      .join(clicks, expr('clickAdId = impressionAdId AND clickTime >= impressionTime AND clickTime <= impressionTime + interval 1 hour'), 'leftOuter')
      .writeStream.foreachBatch((rows) => {
        joined += rows.length;
      })
      .option('checkpointLocation', join(tmp, `ckpt-${Date.now()}`))
      .start();
    const { rowsPerSec, medianBatchMs, last } = await measureDataBatches(q, WARMUP, MEASURED);
    return { rowsPerSec, medianBatchMs, joined, stateRows: last.stateOperators[0].numRowsTotal };
  } finally {
    await session.close();
  }
}

const base = [baseline()];
const runs = [await sluice()];
base.push(baseline());
runs.push(await sluice());
base.push(baseline());
for (const r of [...base, ...runs]) console.log(r);
// Every impression of the run joins its click (the state keeps the last hours of both sides).
for (const r of base) if (r.joined < (WARMUP + MEASURED) * ROWS * 0.9) throw new Error(`baseline joined ${r.joined} rows`);
for (const r of runs) if (r.joined < (WARMUP + MEASURED) * ROWS * 0.9) throw new Error(`Sluice joined ${r.joined} rows`);
const sluiceRate = median(runs.map((r) => r.rowsPerSec));
const baseRate = median(base.map((r) => r.rowsPerSec));
record({
  name: 'stream-join',
  unit: 'rows/s',
  value: Math.round(sluiceRate),
  baseline: Math.round(baseRate),
  ratio: round(sluiceRate / baseRate, 3),
  params: {
    ratioIs: `Sluice ${CORES} slots / main-thread hand-written symmetric hash join, input rows (both sides) per second`,
    query: `rate-micro-batch(${ROWS} rows) x2 -> impressions.join(clicks, id = id AND clickTime in [impressionTime, +1 hour], leftOuter), watermarks 2 h / 3 h -> foreachBatch`,
    sluiceRuns: runs.map((r) => ({ rowsPerSec: Math.round(r.rowsPerSec), medianBatchMs: r.medianBatchMs, stateRows: r.stateRows })),
    baselineRuns: base.map((r) => Math.round(r.rowsPerSec)),
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    ...machineFacts(LOAD_AT_START),
  },
  command: commandLine(),
});
