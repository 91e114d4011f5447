// State footprint: process RSS, open file handles and LevelDB bytes on disk of a stateful query,
// against state size (1M vs 5M keys) and partition count (200 vs 8, same slots), with baselines
// measured in the same run: the same process before the query starts, and the same keys held in a
// plain JS Map.
//
// The query is the seed query with more keys: rate-micro-batch (rowsPerBatch 1,000,000,
// advanceMillisPerBatch 1000) -> id = value % KEYS -> 10-minute watermark -> count by
// (5-minute window, id) -> memory sink, append mode, durable checkpoint in a temp dir. Every batch
// falls in the first window and nothing is evicted or emitted, so after ceil(KEYS / rowsPerBatch)
// batches the state holds exactly KEYS keys. All batches but the last run as Trigger.AvailableNow()
// restarts on the same checkpoint (one batch each); the last runs under
// Trigger.ProcessingTime('1 hour'), so after it the query sits idle with its shards open and the
// figures are taken at rest (after SETTLE ms) rather than mid-batch.
//
// Each case runs in its own `node` child process (worker threads are threads of that process, so
// its RSS and /proc/self/fd cover the workers and LevelDB), so cases do not inherit each other's
// heaps. Figures per case:
//   rss / fds before the session, after Session.create (workers up) and just before start();
//   at rest after the last batch (and VmHWM, the peak RSS); handles into the checkpoint dir;
//   after stop() (the shards should be closed again); bytes on disk under <checkpoint>/state.
// The Map baseline builds the same keys (`${windowStart},${id}` -> count) in a fresh child.
//
// Knobs (environment): SLUICE_BENCH_KEYS (1000000), SLUICE_BENCH_BIG_KEYS (5000000),
// SLUICE_BENCH_ROWS_PER_BATCH (1000000), SLUICE_BENCH_PARTITIONS (200),
// SLUICE_BENCH_FEW_PARTITIONS (8), SLUICE_BENCH_CORES (os.availableParallelism()),
// SLUICE_BENCH_SETTLE_MS (2000), SLUICE_BENCH_BUDGET_MB (256: the budget case), SLUICE_BENCH_TMP.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { cleanupOnExit, commandLine, engineVersion, envInt, loadDriver, makeTempDir, record, round, ROOT_DIR } from './lib.mjs';

const LOAD_AT_START = loadavg()[0];
const KEYS = envInt('SLUICE_BENCH_KEYS', 1_000_000);
const BIG_KEYS = envInt('SLUICE_BENCH_BIG_KEYS', 5_000_000);
const ROWS = envInt('SLUICE_BENCH_ROWS_PER_BATCH', 1_000_000);
const PARTITIONS = envInt('SLUICE_BENCH_PARTITIONS', 200);
const FEW_PARTITIONS = envInt('SLUICE_BENCH_FEW_PARTITIONS', 8);
const CORES = envInt('SLUICE_BENCH_CORES', availableParallelism());
const SETTLE_MS = envInt('SLUICE_BENCH_SETTLE_MS', 2000);
const BUDGET_MB = envInt('SLUICE_BENCH_BUDGET_MB', 256);
const ADVANCE_MS = 1000;
const WINDOW_MS = 5 * 60_000;
const MiB = 2 ** 20;
const MARK = 'FOOTPRINT_RESULT ';

// ---- measuring this process --------------------------------------------------------------------

function procStatus() {
  const text = readFileSync('/proc/self/status', 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return {
    rss: kb('VmRSS'),
    hwm: kb('VmHWM'),
    rssAnon: kb('RssAnon'),
    rssFile: kb('RssFile'),
    threads: Number(/^Threads:\s+(\d+)/m.exec(text)?.[1] ?? NaN),
  };
}

/**
 * Files under `dir` mapped into memory: LevelDB mmaps its table files and closes their
 * descriptors, so they show here rather than in /proc/self/fd.
 */
function mappedFiles(dir) {
  if (!dir) return { files: 0, bytes: 0 };
  const seen = new Map();
  for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s+(\/.*)$/.exec(line);
    if (!m?.[3].startsWith(dir)) continue;
    seen.set(m[3], (seen.get(m[3]) ?? 0) + (parseInt(m[2], 16) - parseInt(m[1], 16)));
  }
  return { files: seen.size, bytes: [...seen.values()].reduce((a, b) => a + b, 0) };
}

/** Open file descriptors of this process (all threads), and how many point under `dir`. */
function fds(dir) {
  let total = 0;
  let underDir = 0;
  const kinds = {};
  for (const fd of readdirSync('/proc/self/fd')) {
    let target;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the readdir handle itself)
    }
    total++;
    if (dir && target.startsWith(dir)) {
      underDir++;
      const ext = /\.[a-z]+$/.exec(target)?.[0] ?? target.slice(target.lastIndexOf('/') + 1).replace(/-\d+$/, '');
      kinds[ext] = (kinds[ext] ?? 0) + 1;
    }
  }
  return { total, underDir, kinds };
}

/** Apparent bytes and allocated bytes (du) and file count under `dir`. */
function diskUsage(dir) {
  let bytes = 0;
  let allocated = 0;
  let files = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        bytes += s.size;
        allocated += s.blocks * 512;
        files++;
      }
    }
  };
  walk(dir);
  return { bytes, allocated, files };
}

function snapshot(dir) {
  const st = procStatus();
  const f = fds(dir);
  const mapped = mappedFiles(dir);
  return {
    rss: st.rss,
    hwm: st.hwm,
    rssAnon: st.rssAnon,
    rssFile: st.rssFile,
    threads: st.threads,
    fds: f.total,
    fdsUnderCheckpoint: f.underDir,
    fdKinds: f.kinds,
    mappedCheckpointFiles: mapped.files,
    mappedCheckpointBytes: mapped.bytes,
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function gcNow() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  gc();
  gc();
}

// ---- child: one case ---------------------------------------------------------------------------

/** The plain-Map baseline: the same keys as the query's state, `${windowStart},${id}` -> count. */
async function mapCase({ keys }) {
  gcNow();
  await sleep(100);
  const before = snapshot();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const state = new Map();
  for (let b = 0; b * ROWS < keys; b++) {
    const ts = b * ADVANCE_MS;
    const start = ts - (ts % WINDOW_MS);
    for (let i = 0; i < ROWS; i++) {
      const key = `${start},${(b * ROWS + i) % keys}`;
      state.set(key, (state.get(key) ?? 0) + 1);
    }
  }
  const buildMs = performance.now() - t0;
  gcNow();
  await sleep(100);
  const after = snapshot();
  const heap1 = process.memoryUsage().heapUsed;
  if (state.size !== keys) throw new Error(`map holds ${state.size} keys, expected ${keys}`);
  return { keys: state.size, buildMs, before, after, heapUsedDelta: heap1 - heap0 };
}

async function sluiceCase({ keys, partitions, dir, maxMemoryMB, settleMs = SETTLE_MS }) {
  const before = snapshot(dir);
  const driver = await loadDriver();
  const { col, window, Trigger } = driver;
  const session = await driver.Session.create({
    conf: {
      'sluice.executor.cores': CORES,
      'sluice.sql.shuffle.partitions': partitions,
      ...(maxMemoryMB !== undefined && { 'sluice.sql.streaming.stateStore.maxMemoryMB': maxMemoryMB }),
    },
  });
  const ckpt = join(dir, 'ckpt');
  const batches = Math.ceil(keys / ROWS);
  if (batches * ADVANCE_MS >= WINDOW_MS) throw new Error(`${batches} batches would cross a window; raise SLUICE_BENCH_ROWS_PER_BATCH`);
  const startQuery = (trigger) =>
    session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', ROWS)
      .option('advanceMillisPerBatch', ADVANCE_MS)
      .load()
      .withColumn('id', col('value').mod(keys))
      .withWatermark('timestamp', '10 minutes')
      .groupBy(window('timestamp', '5 minutes'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName('footprint')
      .outputMode('append')
      .option('checkpointLocation', ckpt)
      .trigger(trigger)
      .start();
  const progress = [];
  const t0 = performance.now();
  let afterSession;
  let atRest;
  let afterStop;
  try {
    // Start every worker thread (they start lazily) with a tiny stateless query, so that
    // `afterSession` already counts their memory and handles.
    const warm = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', CORES)
      .option('numPartitions', CORES)
      .load()
      .writeStream.format('memory')
      .queryName('footprint_warmup')
      .trigger(Trigger.AvailableNow())
      .start();
    await warm.awaitTermination();
    await sleep(200);
    afterSession = snapshot(dir);
    // All batches but the last: one Trigger.AvailableNow() run each, on the same checkpoint.
    for (let b = 0; b < batches - 1; b++) {
      const q = await startQuery(Trigger.AvailableNow());
      await q.awaitTermination();
      progress.push(...q.recentProgress);
      console.error(
        `    batch ${b + 1}/${batches}: ${q.lastProgress?.stateOperators[0]?.numRowsTotal} keys, ${q.lastProgress?.durationMs.triggerExecution} ms`,
      );
    }
    const beforeStart = snapshot(dir);
    const q = await startQuery(Trigger.ProcessingTime('1 hour'));
    while (q.recentProgress.length === 0) {
      if (!q.isActive) throw q.exception ?? new Error('query ended before its first batch');
      await sleep(20);
    }
    const last = q.lastProgress;
    progress.push(last);
    console.error(
      `    batch ${batches}/${batches}: ${last.stateOperators[0]?.numRowsTotal} keys, ${last.durationMs.triggerExecution} ms; at rest for ${settleMs} ms`,
    );
    await sleep(settleMs);
    atRest = { ...snapshot(dir), beforeStart };
    await q.stop();
    await sleep(200);
    afterStop = snapshot(dir);
  } finally {
    await session.close();
  }
  const last = progress.at(-1);
  const op = last.stateOperators[0];
  if (op?.numRowsTotal !== keys) throw new Error(`state holds ${op?.numRowsTotal} keys, expected ${keys}`);
  return {
    keys,
    partitions,
    slots: CORES,
    batches,
    buildMs: performance.now() - t0,
    batchMs: progress.map((p) => p.durationMs.triggerExecution),
    before,
    afterSession,
    atRest,
    afterStop,
    disk: diskUsage(join(ckpt, 'state')),
    numStateStoreInstances: op.numStateStoreInstances,
    numShufflePartitions: op.numShufflePartitions,
    memoryUsedBytes: op.memoryUsedBytes,
  };
}

async function child(spec) {
  const out = spec.kind === 'map' ? await mapCase(spec) : await sluiceCase(spec);
  process.stdout.write(`${MARK + JSON.stringify(out)}\n`);
}

// ---- parent ------------------------------------------------------------------------------------

function runChild(spec) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [process.argv[1], '--case', JSON.stringify(spec)], {
      cwd: ROOT_DIR,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.on('error', reject);
    c.on('exit', (code, signal) => {
      const line = stdout.split('\n').find((l) => l.startsWith(MARK));
      if (code !== 0 || !line) reject(new Error(`case ${JSON.stringify(spec)} failed (exit ${code ?? signal}): ${stdout.slice(-2000)}`));
      else resolve(JSON.parse(line.slice(MARK.length)));
    });
  });
}

const mib = (b) => round(b / MiB, 1);

function describe(label, r) {
  const a = r.atRest;
  console.log(
    `  ${label}: RSS ${mib(r.before.rss)} MiB before, ${mib(r.afterSession.rss)} with workers up, ${mib(a.rss)} at rest ` +
      `(${mib(a.rssAnon)} anonymous, ${mib(a.rssFile)} file-backed; peak ${mib(a.hwm)}), ${mib(r.afterStop.rss)} after stop; FDs ${r.before.fds} before, ${r.afterSession.fds} with workers up, ${a.beforeStart.fds} before the last start(), ` +
      `${a.fds} at rest (${a.fdsUnderCheckpoint} into the checkpoint: ${JSON.stringify(a.fdKinds)}), ${r.afterStop.fds} after stop (${r.afterStop.fdsUnderCheckpoint} into the checkpoint); ` +
      `${a.mappedCheckpointFiles} checkpoint files mmapped (${mib(a.mappedCheckpointBytes)} MiB); ` +
      `disk ${mib(r.disk.allocated)} MiB in ${r.disk.files} files; ${r.numStateStoreInstances} shard(s), ${r.numShufflePartitions} partitions; ` +
      `batches ${r.batchMs.join(', ')} ms`,
  );
}

async function parent() {
  const work = makeTempDir('footprint');
  cleanupOnExit(work);
  console.log(
    `state footprint: ${KEYS} vs ${BIG_KEYS} keys, ${PARTITIONS} vs ${FEW_PARTITIONS} partitions, ${CORES} slot(s), ` +
      `${ROWS} rows per batch; one child process per case; checkpoints under ${work}`,
  );
  const t0 = performance.now();
  const map1 = await runChild({ kind: 'map', keys: KEYS });
  console.log(`  Map of ${KEYS} keys: RSS +${mib(map1.after.rss - map1.before.rss)} MiB, heapUsed +${mib(map1.heapUsedDelta)} MiB`);
  const mapBig = await runChild({ kind: 'map', keys: BIG_KEYS });
  console.log(`  Map of ${BIG_KEYS} keys: RSS +${mib(mapBig.after.rss - mapBig.before.rss)} MiB, heapUsed +${mib(mapBig.heapUsedDelta)} MiB`);

  console.log(`  sluice, ${KEYS} keys, ${PARTITIONS} partitions:`);
  const many = await runChild({ kind: 'sluice', keys: KEYS, partitions: PARTITIONS, dir: join(work, 'many') });
  describe(`${KEYS} keys, ${PARTITIONS} partitions`, many);
  console.log(`  sluice, ${KEYS} keys, ${FEW_PARTITIONS} partitions:`);
  const few = await runChild({ kind: 'sluice', keys: KEYS, partitions: FEW_PARTITIONS, dir: join(work, 'few') });
  describe(`${KEYS} keys, ${FEW_PARTITIONS} partitions`, few);
  console.log(`  sluice, ${KEYS} keys, ${PARTITIONS} partitions, stateStore.maxMemoryMB ${BUDGET_MB}:`);
  const budget = await runChild({ kind: 'sluice', keys: KEYS, partitions: PARTITIONS, dir: join(work, 'budget'), maxMemoryMB: BUDGET_MB, settleMs: 3000 });
  describe(`${KEYS} keys, maxMemoryMB ${BUDGET_MB}`, budget);
  console.log(`  sluice, ${BIG_KEYS} keys, ${PARTITIONS} partitions:`);
  const big = await runChild({ kind: 'sluice', keys: BIG_KEYS, partitions: PARTITIONS, dir: join(work, 'big') });
  describe(`${BIG_KEYS} keys, ${PARTITIONS} partitions`, big);

  // Growth attributable to the query: at rest minus the same process with its workers up, before
  // the first start() of the measured query.
  const growth = (r) => r.atRest.rss - r.afterSession.rss;
  // Handles the query holds: at rest minus after stop() (same process, workers up, shards closed).
  const queryFds = (r) => r.atRest.fds - r.afterStop.fds;
  const mapGrowth = (m) => m.after.rss - m.before.rss;
  const caseParams = (r) => ({
    keys: r.keys,
    partitions: r.partitions,
    slots: r.slots,
    batches: r.batches,
    shards: r.numStateStoreInstances,
    rssBeforeMiB: mib(r.before.rss),
    rssWithWorkersMiB: mib(r.afterSession.rss),
    rssAtRestMiB: mib(r.atRest.rss),
    rssAnonAtRestMiB: mib(r.atRest.rssAnon),
    rssFileAtRestMiB: mib(r.atRest.rssFile),
    rssPeakMiB: mib(r.atRest.hwm),
    rssAfterStopMiB: mib(r.afterStop.rss),
    rssGrowthMiB: mib(growth(r)),
    fdsBefore: r.before.fds,
    fdsWithWorkers: r.afterSession.fds,
    fdsAtRest: r.atRest.fds,
    fdsQuery: queryFds(r),
    fdsIntoCheckpoint: r.atRest.fdsUnderCheckpoint,
    fdKinds: r.atRest.fdKinds,
    fdsAfterStop: r.afterStop.fds,
    mmappedCheckpointFiles: r.atRest.mappedCheckpointFiles,
    mmappedCheckpointMiB: mib(r.atRest.mappedCheckpointBytes),
    fdsIntoCheckpointAfterStop: r.afterStop.fdsUnderCheckpoint,
    threads: r.atRest.threads,
    diskMiB: mib(r.disk.allocated),
    diskApparentMiB: mib(r.disk.bytes),
    diskFiles: r.disk.files,
    diskBytesPerKey: round(r.disk.allocated / r.keys, 1),
    reportedMemoryUsedBytes: r.memoryUsedBytes,
    batchMs: r.batchMs,
  });
  const mapParams = (m) => ({
    keys: m.keys,
    rssGrowthMiB: mib(mapGrowth(m)),
    heapUsedDeltaMiB: mib(m.heapUsedDelta),
    bytesPerKey: round(mapGrowth(m) / m.keys, 1),
  });
  const common = {
    query:
      'rate-micro-batch -> id = value % keys -> withWatermark(timestamp, 10 minutes) -> groupBy(window(timestamp, 5 minutes), id).count() -> memory sink, append (nothing evicted)',
    rowsPerBatch: ROWS,
    slots: CORES,
    settleMs: SETTLE_MS,
    measuredAt: 'idle after the last batch (Trigger.ProcessingTime 1 hour), shards open; earlier batches as Trigger.AvailableNow restarts',
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    engine: engineVersion(),
    // 1-minute load average at the start and at the end: above the core count, other processes
    // competed for the CPUs (the ratios between slot counts suffer first).
    loadavg: [round(LOAD_AT_START, 2), round(loadavg()[0], 2)],
  };
  const command = commandLine();
  const budgetAimMiB = CORES * BUDGET_MB + 250;
  const results = [
    record({
      name: 'state-footprint-fds-partitions',
      unit: 'fds',
      value: queryFds(many),
      baseline: queryFds(few),
      ratio: round(queryFds(many) / queryFds(few), 3),
      params: {
        ratioIs: `file handles the query holds at rest (at rest - after stop), ${PARTITIONS} / ${FEW_PARTITIONS} partitions (same slots, ${KEYS} keys); ~1 when handles grow with shards, not partitions`,
        totalFdsRatio: round(many.atRest.fds / few.atRest.fds, 3),
        many: caseParams(many),
        few: caseParams(few),
        ...common,
      },
      command,
    }),
    record({
      name: 'state-footprint-rss-partitions',
      unit: 'MiB',
      value: mib(many.atRest.rss),
      baseline: mib(few.atRest.rss),
      ratio: round(many.atRest.rss / few.atRest.rss, 3),
      params: {
        ratioIs: `process RSS at rest, ${PARTITIONS} / ${FEW_PARTITIONS} partitions (same slots, ${KEYS} keys)`,
        growthRatio: round(growth(many) / growth(few), 3),
        peakRatio: round(many.atRest.hwm / few.atRest.hwm, 3),
        diskRatio: round(many.disk.allocated / few.disk.allocated, 3),
        many: caseParams(many),
        few: caseParams(few),
        ...common,
      },
      command,
    }),
    record({
      name: 'state-footprint-rss-keys',
      unit: 'MiB',
      value: mib(growth(big)),
      baseline: mib(growth(many)),
      ratio: round(growth(big) / growth(many), 3),
      params: {
        ratioIs: `RSS growth of the query at rest (at rest - with workers up, before the first start()), ${BIG_KEYS} / ${KEYS} keys (${PARTITIONS} partitions); keys ratio ${round(BIG_KEYS / KEYS, 3)}`,
        atRestRatio: round(big.atRest.rss / many.atRest.rss, 3),
        peakRatio: round(big.atRest.hwm / many.atRest.hwm, 3),
        mapGrowthRatio: round(mapGrowth(mapBig) / mapGrowth(map1), 3),
        big: caseParams(big),
        small: caseParams(many),
        ...common,
      },
      command,
    }),
    record({
      name: 'state-footprint-rss-budget',
      unit: 'MiB',
      value: mib(budget.atRest.hwm),
      baseline: budgetAimMiB,
      ratio: round(mib(budget.atRest.hwm) / budgetAimMiB, 3),
      params: {
        ratioIs: `peak process RSS (VmHWM) over one batch creating ${KEYS} keys with stateStore.maxMemoryMB ${BUDGET_MB} on ${CORES} slots / the aim ${CORES} x ${BUDGET_MB} MiB + 250 MiB (<= 1 meets it)`,
        rssAt3sMiB: mib(budget.atRest.rss),
        at3sRatio: round(mib(budget.atRest.rss) / budgetAimMiB, 3),
        budget: caseParams(budget),
        ...common,
      },
      command,
    }),
    record({
      name: 'state-footprint-fds-keys',
      unit: 'fds',
      value: queryFds(big),
      baseline: queryFds(many),
      ratio: round(queryFds(big) / queryFds(many), 3),
      params: {
        ratioIs: `file handles the query holds at rest (at rest - after stop), ${BIG_KEYS} / ${KEYS} keys (${PARTITIONS} partitions)`,
        fdsIntoCheckpoint: [big.atRest.fdsUnderCheckpoint, many.atRest.fdsUnderCheckpoint],
        big: caseParams(big),
        small: caseParams(many),
        ...common,
      },
      command,
    }),
    record({
      name: 'state-footprint-disk-keys',
      unit: 'MiB',
      value: mib(big.disk.allocated),
      baseline: mib(many.disk.allocated),
      ratio: round(big.disk.allocated / many.disk.allocated, 3),
      params: {
        ratioIs: `LevelDB bytes on disk (du of <checkpoint>/state after stop), ${BIG_KEYS} / ${KEYS} keys; keys ratio ${round(BIG_KEYS / KEYS, 3)}`,
        bytesPerKey: [round(big.disk.allocated / big.keys, 1), round(many.disk.allocated / many.keys, 1)],
        files: [big.disk.files, many.disk.files],
        ...common,
      },
      command,
    }),
    record({
      name: 'state-footprint-vs-map',
      unit: 'MiB',
      value: mib(growth(many)),
      baseline: mib(mapGrowth(map1)),
      ratio: round(growth(many) / mapGrowth(map1), 3),
      params: {
        ratioIs: `RSS growth holding ${KEYS} keys: Sluice query at rest (at rest - with workers up, before the first start()) / a plain JS Map of the same keys`,
        bigRatio: round(growth(big) / mapGrowth(mapBig), 3),
        map: mapParams(map1),
        mapBig: mapParams(mapBig),
        sluice: caseParams(many),
        sluiceBig: caseParams(big),
        ...common,
      },
      command,
    }),
  ];
  console.log(`\ndone in ${round((performance.now() - t0) / 1000, 1)} s`);
  for (const r of results) console.log(`${r.name}: ${r.value} vs ${r.baseline} ${r.unit} -> ratio ${r.ratio} (${r.params.ratioIs})`);
}

const caseArg = process.argv.indexOf('--case');
(caseArg >= 0 ? child(JSON.parse(process.argv[caseArg + 1])) : parent()).catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
