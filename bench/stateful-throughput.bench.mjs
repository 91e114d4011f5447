// Stateful throughput: the seed query (bench/README.md), against two single-thread loops over the same
// rows, measured in the same run.
//
//   rate-micro-batch (rowsPerBatch 1,000,000, advanceMillisPerBatch 1000)
//     .withColumn('id', value % 100000).withWatermark('timestamp', '10 minutes')
//     .groupBy(window('timestamp', '5 minutes'), 'id').count()   -> memory sink, append mode,
//   durable checkpoint in a temp dir; 2 warm-up batches, then 20 measured ones; once with 1 slot
//   and once with all slots (os.availableParallelism()).
//
// Sluice's rate is sum(numInputRows) / sum(durationMs.triggerExecution) over the measured batches
// (its own progress events); the median per-batch rate is reported too.
//
// Baselines (main thread, same rows, same number of batches, same watermark/eviction rules):
//   naive: per batch, the rows as objects {timestamp, value}; per row the window start, a string key
//          `${windowStart},${id}` and a Map<string, number> increment; rows of windows that ended
//          at or before the watermark are dropped, and windows whose end <= watermark are emitted
//          and evicted (append mode).
//   tuned: per batch, the rows as two Float64Array columns (reused); per row a numeric key
//          windowIndex * 100000 + id into a Map<number, number>; same dropping and eviction.
// Each baseline runs three times (before, between and after the two Sluice runs); its figure is the
// median of the three.
//
// Also prints where Sluice's time goes: durationMs (addBatch, walCommit, commitOffsets, ...), the
// map and state stage wall times (timed in this process by wrapping TaskScheduler.prototype.runTasks
// of the built driver: a bench-side probe, not an engine metric), and stateOperators commitTimeMs.
//
// Knobs (environment): SLUICE_BENCH_ROWS_PER_BATCH (1000000), SLUICE_BENCH_BATCHES (20 measured),
// SLUICE_BENCH_WARMUP (2), SLUICE_BENCH_CORES (os.availableParallelism(): the "all slots" run),
// SLUICE_BENCH_PARTITIONS (200), SLUICE_BENCH_TMP.
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanupOnExit, commandLine, engineVersion, envInt, loadDriver, makeTempDir, median, record, round } from './lib.mjs';

const LOAD_AT_START = loadavg()[0];
const ROWS = envInt('SLUICE_BENCH_ROWS_PER_BATCH', 1_000_000);
const MEASURED = envInt('SLUICE_BENCH_BATCHES', 20);
const WARMUP = envInt('SLUICE_BENCH_WARMUP', 2);
const ALL_SLOTS = envInt('SLUICE_BENCH_CORES', availableParallelism());
const PARTITIONS = envInt('SLUICE_BENCH_PARTITIONS', 200);
const TOTAL_BATCHES = WARMUP + MEASURED;

const ADVANCE_MS = 1000; // advanceMillisPerBatch
const START_MS = 0; // rate-micro-batch's default startTimestamp
const ID_MOD = 100_000;
const WINDOW_MS = 5 * 60_000;
const DELAY_MS = 10 * 60_000;

// ---- baselines ---------------------------------------------------------------------------------

/** The window start of `t` for tumbling windows of WINDOW_MS (as Spark: also right for t < 0). */
const windowStart = (t) => t - (((t % WINDOW_MS) + WINDOW_MS) % WINDOW_MS);

/**
 * Runs TOTAL_BATCHES batches of the naive loop. Returns per-batch times and the final state size.
 * Watermark semantics as the engine's: batch N drops and evicts with the watermark computed from
 * the event times of batches < N (initially 0), then advances it.
 */
function runNaive() {
  const state = new Map(); // `${windowStart},${id}` -> count
  const openWindows = new Set(); // window starts with keys in `state`
  const emitted = [];
  let watermark = 0;
  let maxEventTime = -Infinity;
  let dropped = 0;
  const ms = [];
  for (let b = 0; b < TOTAL_BATCHES; b++) {
    const t0 = performance.now();
    // The batch's rows, as the source would produce them.
    const ts = START_MS + b * ADVANCE_MS;
    const rows = new Array(ROWS);
    for (let i = 0; i < ROWS; i++) rows[i] = { timestamp: ts, value: b * ROWS + i };
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const id = row.value % ID_MOD;
      const start = windowStart(row.timestamp);
      if (row.timestamp > maxEventTime) maxEventTime = row.timestamp;
      if (start + WINDOW_MS <= watermark) {
        dropped++;
        continue;
      }
      const key = `${start},${id}`;
      state.set(key, (state.get(key) ?? 0) + 1);
      openWindows.add(start);
    }
    // Append mode: windows that ended at or before the watermark are final: emit and evict.
    for (const start of openWindows) {
      if (start + WINDOW_MS > watermark) continue;
      const prefix = `${start},`;
      for (const [key, count] of state) {
        if (!key.startsWith(prefix)) continue;
        emitted.push({ window: { start, end: start + WINDOW_MS }, id: Number(key.slice(prefix.length)), count });
        state.delete(key);
      }
      openWindows.delete(start);
    }
    watermark = Math.max(watermark, maxEventTime - DELAY_MS);
    ms.push(performance.now() - t0);
  }
  return { ms, stateKeys: state.size, emitted: emitted.length, dropped, watermark };
}

/** The tuned columnar loop: typed-array columns (allocated once), numeric keys. */
function runTuned() {
  const tsCol = new Float64Array(ROWS);
  const valueCol = new Float64Array(ROWS);
  const state = new Map(); // windowIndex * ID_MOD + id -> count
  const openWindows = new Set(); // window indices with keys in `state`
  let emitted = 0;
  let watermark = 0;
  let maxEventTime = -Infinity;
  let dropped = 0;
  const ms = [];
  for (let b = 0; b < TOTAL_BATCHES; b++) {
    const t0 = performance.now();
    const ts = START_MS + b * ADVANCE_MS;
    const base = b * ROWS;
    for (let i = 0; i < ROWS; i++) {
      tsCol[i] = ts;
      valueCol[i] = base + i;
    }
    let lastWindow = NaN;
    for (let i = 0; i < ROWS; i++) {
      const t = tsCol[i];
      const start = windowStart(t);
      if (t > maxEventTime) maxEventTime = t;
      if (start + WINDOW_MS <= watermark) {
        dropped++;
        continue;
      }
      const w = start / WINDOW_MS;
      if (w !== lastWindow) {
        openWindows.add(w);
        lastWindow = w;
      }
      const key = w * ID_MOD + (valueCol[i] % ID_MOD);
      state.set(key, (state.get(key) ?? 0) + 1);
    }
    for (const w of openWindows) {
      if ((w + 1) * WINDOW_MS > watermark) continue;
      const lo = w * ID_MOD;
      const hi = lo + ID_MOD;
      for (const key of state.keys()) {
        if (key < lo || key >= hi) continue;
        emitted++;
        state.delete(key);
      }
      openWindows.delete(w);
    }
    watermark = Math.max(watermark, maxEventTime - DELAY_MS);
    ms.push(performance.now() - t0);
  }
  return { ms, stateKeys: state.size, emitted, dropped, watermark };
}

/** Rows/s over the measured batches of a list of per-batch times: aggregate and median per batch. */
function rates(msPerBatch) {
  const measured = msPerBatch.slice(WARMUP);
  const totalMs = measured.reduce((s, x) => s + x, 0);
  return {
    rowsPerSec: (ROWS * measured.length) / (totalMs / 1000),
    medianBatchRowsPerSec: median(measured.map((m) => ROWS / (m / 1000))),
    medianBatchMs: median(measured),
  };
}

// ---- Sluice ------------------------------------------------------------------------------------

/**
 * Stage wall times per batch, timed around TaskScheduler.prototype.runTasks of the built driver (a
 * map stage, then a state stage, per stateful batch). Returns a Map batchId -> { map, state, ... }
 * that the probe fills, or null when the internals are not where this expects them.
 */
async function installStageProbe() {
  try {
    const url = new URL('./scheduler/TaskScheduler.js', import.meta.resolve('@sluice/driver'));
    const { TaskScheduler } = await import(url.href);
    const original = TaskScheduler?.prototype?.runTasks;
    if (typeof original !== 'function') return null;
    const stages = new Map();
    TaskScheduler.prototype.runTasks = async function probedRunTasks(tasks, slotOf) {
      const t0 = performance.now();
      const results = await original.call(this, tasks, slotOf);
      const ms = performance.now() - t0;
      const first = tasks[0];
      if (first && (first.kind === 'map' || first.kind === 'state')) {
        const s = stages.get(first.batchId) ?? { mapMs: 0, stateMs: 0, mapTasks: 0, stateTasks: 0, shuffleBytes: 0, shuffleBlocks: 0 };
        if (first.kind === 'map') {
          s.mapMs += ms;
          s.mapTasks += tasks.length;
          for (const r of results) {
            for (const blk of r.blocks ?? []) {
              s.shuffleBytes += blk.data.byteLength;
              s.shuffleBlocks++;
            }
          }
        } else {
          s.stateMs += ms;
          s.stateTasks += tasks.length;
        }
        stages.set(first.batchId, s);
      }
      return results;
    };
    return stages;
  } catch {
    return null;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runSluice(driver, stages, slots, ckpt) {
  const { col, window } = driver;
  stages?.clear();
  const session = await driver.Session.create({
    conf: { 'sluice.executor.cores': slots, 'sluice.sql.shuffle.partitions': PARTITIONS },
  });
  let q;
  const wall0 = performance.now();
  const cpu0 = process.cpuUsage(); // the whole process: driver thread and worker threads
  try {
    q = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', ROWS)
      .option('advanceMillisPerBatch', ADVANCE_MS)
      .load()
      .withColumn('id', col('value').mod(ID_MOD))
      .withWatermark('timestamp', '10 minutes')
      .groupBy(window('timestamp', '5 minutes'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName(`seed_${slots}slot`)
      .outputMode('append')
      .option('checkpointLocation', ckpt)
      .start();
    let printed = -1;
    for (;;) {
      const progress = q.recentProgress;
      for (const p of progress) {
        if (p.batchId <= printed) continue;
        printed = p.batchId;
        const st = stages?.get(p.batchId);
        const op = p.stateOperators[0];
        console.log(
          `    batch ${p.batchId}${p.batchId < WARMUP ? ' (warm-up)' : ''}: ${p.numInputRows} rows in ${p.durationMs.triggerExecution} ms` +
            (st ? ` (map ${Math.round(st.mapMs)} ms, state ${Math.round(st.stateMs)} ms` : ' (') +
            `, state commit ${op?.commitTimeMs ?? '?'} ms, ${op?.numRowsTotal ?? '?'} keys)`,
        );
      }
      if (printed >= TOTAL_BATCHES - 1) break;
      if (!q.isActive && q.exception) throw q.exception;
      await sleep(20);
    }
  } finally {
    if (q) await q.stop();
    await session.close();
  }
  const wallMs = performance.now() - wall0;
  const cpu = process.cpuUsage(cpu0);
  const progress = q.recentProgress.filter((p) => p.batchId < TOTAL_BATCHES);
  if (progress.length < TOTAL_BATCHES) throw new Error(`only ${progress.length} progress events kept, need ${TOTAL_BATCHES}`);
  const measured = progress.filter((p) => p.batchId >= WARMUP);
  for (const p of progress) {
    if (p.numInputRows !== ROWS) throw new Error(`batch ${p.batchId} read ${p.numInputRows} rows, expected ${ROWS}`);
  }
  const sum = (f) => measured.reduce((s, p) => s + (f(p) ?? 0), 0);
  const trigMs = sum((p) => p.durationMs.triggerExecution);
  const rows = sum((p) => p.numInputRows);
  const last = progress.at(-1);
  return {
    slots,
    wallMs,
    // CPU seconds of this process per wall second over the whole run (warm-up and stop included):
    // near the slot count when the slots really ran in parallel.
    coresUsed: (cpu.user + cpu.system) / 1000 / wallMs,
    rowsPerSec: rows / (trigMs / 1000),
    medianBatchRowsPerSec: median(measured.map((p) => p.numInputRows / (p.durationMs.triggerExecution / 1000))),
    medianBatchMs: median(measured.map((p) => p.durationMs.triggerExecution)),
    // Between the start of the first measured trigger and the end of the last: includes the gaps.
    wallRowsPerSec: rows / ((Date.parse(measured.at(-1).timestamp) + measured.at(-1).durationMs.triggerExecution - Date.parse(measured[0].timestamp)) / 1000),
    stateKeys: last.stateOperators[0]?.numRowsTotal,
    stateOperator: last.stateOperators[0],
    watermark: last.eventTime.watermark,
    breakdown: breakdown(measured, stages),
  };
}

/** Sums over the measured batches of each timing, its share of triggerExecution and its median per batch. */
function breakdown(measured, stages) {
  const series = {};
  const add = (name, value) => {
    series[name] ??= [];
    series[name].push(value);
  };
  for (const p of measured) {
    const d = p.durationMs;
    for (const [k, v] of Object.entries(d)) add(k, v);
    const st = stages?.get(p.batchId);
    if (st) {
      add('addBatch.mapStage', st.mapMs);
      add('addBatch.stateStage', st.stateMs);
      add('addBatch.other', (d.addBatch ?? 0) - st.mapMs - st.stateMs);
      add('shuffleMB', st.shuffleBytes / 2 ** 20);
      add('mapTasks', st.mapTasks);
      add('stateTasks', st.stateTasks);
    }
    const op = p.stateOperators[0];
    if (op) {
      add('state.commitTimeMs(sum over shards)', op.commitTimeMs);
      add('state.numRowsUpdated', op.numRowsUpdated);
    }
    const accounted = ['latestOffset', 'getBatch', 'queryPlanning', 'walCommit', 'addBatch', 'commitOffsets'].reduce((s, k) => s + (d[k] ?? 0), 0);
    add('triggerExecution.unaccounted', d.triggerExecution - accounted);
  }
  const trig = series.triggerExecution.reduce((s, x) => s + x, 0);
  const out = {};
  for (const [k, vs] of Object.entries(series)) {
    const total = vs.reduce((s, x) => s + x, 0);
    const isTime = !['shuffleMB', 'mapTasks', 'stateTasks', 'state.numRowsUpdated'].includes(k);
    out[k] = { median: round(median(vs), 2), ...(isTime && { sharePct: round((100 * total) / trig, 1) }) };
  }
  return out;
}

function printBreakdown(label, b) {
  console.log(`\n  where the time goes, ${label} (median per measured batch; share of the summed triggerExecution):`);
  for (const [k, v] of Object.entries(b)) {
    console.log(`    ${k.padEnd(38)} ${String(v.median).padStart(10)}${v.sharePct !== undefined ? `   ${String(v.sharePct).padStart(5)} %` : ''}`);
  }
}

// ---- main --------------------------------------------------------------------------------------

async function main() {
  const driver = await loadDriver();
  const stages = await installStageProbe();
  if (!stages) console.log('(stage probe unavailable: no map/state stage split in the breakdown)');
  const work = makeTempDir('stateful');
  cleanupOnExit(work);
  console.log(
    `seed query: ${TOTAL_BATCHES} batches (${WARMUP} warm-up) of ${ROWS} rows, id = value % ${ID_MOD}, ` +
      `${PARTITIONS} partitions; Sluice with 1 and ${ALL_SLOTS} slot(s); checkpoints under ${work}`,
  );

  const naive = [];
  const tuned = [];
  const baselineRound = (label) => {
    const n = runNaive();
    const nr = rates(n.ms);
    naive.push({ ...n, ...nr });
    const t = runTuned();
    const tr = rates(t.ms);
    tuned.push({ ...t, ...tr });
    if (n.stateKeys !== t.stateKeys || n.emitted !== t.emitted || n.dropped !== t.dropped) {
      throw new Error(
        `baselines disagree: naive ${JSON.stringify([n.stateKeys, n.emitted, n.dropped])}, tuned ${JSON.stringify([t.stateKeys, t.emitted, t.dropped])}`,
      );
    }
    console.log(
      `  baselines (${label}): naive ${Math.round(nr.rowsPerSec)} rows/s (median batch ${round(nr.medianBatchMs, 1)} ms), ` +
        `tuned ${Math.round(tr.rowsPerSec)} rows/s (median batch ${round(tr.medianBatchMs, 1)} ms); ${n.stateKeys} keys, ${n.emitted} emitted`,
    );
  };

  baselineRound('1/3');
  console.log(`  sluice, 1 slot:`);
  const s1 = await runSluice(driver, stages, 1, join(work, 'ckpt-1slot'));
  console.log(`  sluice, 1 slot: ${Math.round(s1.rowsPerSec)} rows/s (median batch ${s1.medianBatchMs} ms; ${round(s1.coresUsed, 2)} cores busy)`);
  baselineRound('2/3');
  console.log(`  sluice, ${ALL_SLOTS} slots:`);
  const sN = await runSluice(driver, stages, ALL_SLOTS, join(work, `ckpt-${ALL_SLOTS}slot`));
  console.log(`  sluice, ${ALL_SLOTS} slots: ${Math.round(sN.rowsPerSec)} rows/s (median batch ${sN.medianBatchMs} ms; ${round(sN.coresUsed, 2)} cores busy)`);
  baselineRound('3/3');

  // Same data, same rules: the state must agree (no eviction within the default 22 s of event time).
  for (const s of [s1, sN]) {
    if (s.stateKeys !== naive[0].stateKeys) {
      throw new Error(`Sluice (${s.slots} slot(s)) holds ${s.stateKeys} keys after ${TOTAL_BATCHES} batches, the baselines ${naive[0].stateKeys}`);
    }
  }

  const naiveRate = median(naive.map((n) => n.rowsPerSec));
  const tunedRate = median(tuned.map((t) => t.rowsPerSec));
  const naiveBatchRate = median(naive.map((n) => n.medianBatchRowsPerSec));
  const tunedBatchRate = median(tuned.map((t) => t.medianBatchRowsPerSec));
  printBreakdown('1 slot', s1.breakdown);
  printBreakdown(`${ALL_SLOTS} slots`, sN.breakdown);

  const common = {
    rowsPerBatch: ROWS,
    measuredBatches: MEASURED,
    warmupBatches: WARMUP,
    advanceMillisPerBatch: ADVANCE_MS,
    query: `rate-micro-batch -> id = value % ${ID_MOD} -> withWatermark(timestamp, 10 minutes) -> groupBy(window(timestamp, 5 minutes), id).count() -> memory sink, append`,
    'sluice.sql.shuffle.partitions': PARTITIONS,
    rateDefinition: 'sum(numInputRows) / sum(durationMs.triggerExecution) over the measured batches',
    naiveRowsPerSec: Math.round(naiveRate),
    tunedRowsPerSec: Math.round(tunedRate),
    naiveRounds: naive.map((n) => Math.round(n.rowsPerSec)),
    tunedRounds: tuned.map((t) => Math.round(t.rowsPerSec)),
    naive:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the description quotes the naive loop's key expression
      'row objects {timestamp, value}; string key `${windowStart},${id}`; Map<string, number> increment; drop late rows, emit+evict windows with end <= watermark',
    tuned: 'Float64Array columns (reused); key windowIndex * 100000 + id; Map<number, number> increment; same drop/evict',
    stateKeys: s1.stateKeys,
    cpu: cpus()[0]?.model ?? 'unknown',
    cpus: availableParallelism(),
    node: process.version,
    engine: engineVersion(),
    // 1-minute load average at the start and at the end: above the core count, other processes
    // competed for the CPUs (the ratios between slot counts suffer first).
    loadavg: [round(LOAD_AT_START, 2), round(loadavg()[0], 2)],
  };
  const side = (s) => ({
    slots: s.slots,
    rowsPerSec: Math.round(s.rowsPerSec),
    medianBatchRowsPerSec: Math.round(s.medianBatchRowsPerSec),
    medianBatchMs: s.medianBatchMs,
    coresUsed: round(s.coresUsed, 2),
    wallRowsPerSec: Math.round(s.wallRowsPerSec),
    numStateStoreInstances: s.stateOperator?.numStateStoreInstances,
    numShufflePartitions: s.stateOperator?.numShufflePartitions,
    memoryUsedBytes: s.stateOperator?.memoryUsedBytes,
    // "median ms per measured batch (share of the summed triggerExecution)"; counts without a share.
    breakdown: Object.fromEntries(Object.entries(s.breakdown).map(([k, v]) => [k, v.sharePct === undefined ? v.median : `${v.median} (${v.sharePct}%)`])),
  });
  const command = commandLine();
  const results = [
    record({
      name: 'stateful-throughput-1slot',
      unit: 'rows/s',
      value: Math.round(s1.rowsPerSec),
      baseline: Math.round(naiveRate),
      ratio: round(s1.rowsPerSec / naiveRate, 3),
      params: {
        ratioIs: 'Sluice 1 slot / naive loop',
        medianBatchRatio: round(s1.medianBatchRowsPerSec / naiveBatchRate, 3),
        vsTuned: round(s1.rowsPerSec / tunedRate, 3),
        sluice: side(s1),
        ...common,
      },
      command,
    }),
    record({
      name: 'stateful-throughput-allslots',
      unit: 'rows/s',
      value: Math.round(sN.rowsPerSec),
      baseline: Math.round(naiveRate),
      ratio: round(sN.rowsPerSec / naiveRate, 3),
      params: {
        ratioIs: `Sluice ${ALL_SLOTS} slots / naive loop`,
        medianBatchRatio: round(sN.medianBatchRowsPerSec / naiveBatchRate, 3),
        vsTuned: round(sN.rowsPerSec / tunedRate, 3),
        sluice: side(sN),
        ...common,
      },
      command,
    }),
    record({
      name: 'stateful-throughput-scaling',
      unit: 'rows/s',
      value: Math.round(sN.rowsPerSec),
      baseline: Math.round(s1.rowsPerSec),
      ratio: round(sN.rowsPerSec / s1.rowsPerSec, 3),
      params: {
        ratioIs: `Sluice ${ALL_SLOTS} slots / Sluice 1 slot`,
        slots: ALL_SLOTS,
        medianBatchRatio: round(sN.medianBatchRowsPerSec / s1.medianBatchRowsPerSec, 3),
        aim: 'about 1.4x from 1 to 2 slots on 2 cores (bench/README.md)',
        ...common,
      },
      command,
    }),
    record({
      name: 'stateful-throughput-vs-tuned',
      unit: 'rows/s',
      value: Math.round(s1.rowsPerSec),
      baseline: Math.round(tunedRate),
      ratio: round(s1.rowsPerSec / tunedRate, 3),
      params: {
        ratioIs: 'Sluice 1 slot / tuned columnar loop (both one thread of compute)',
        allSlotsRatio: round(sN.rowsPerSec / tunedRate, 3),
        medianBatchRatio: round(s1.medianBatchRowsPerSec / tunedBatchRate, 3),
        ...common,
      },
      command,
    }),
  ];
  console.log('');
  for (const r of results) console.log(`${r.name}: ${r.value} vs ${r.baseline} ${r.unit} -> ratio ${r.ratio} (${r.params.ratioIs})`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
