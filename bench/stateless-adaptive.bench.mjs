// Adaptive execution of a stateless shuffle: the same query at 200 shuffle partitions, on small
// batches and on skewed ones, with sluice.sql.adaptive.streaming.stateless.enabled on and off,
// in one run.
//
//   rate-micro-batch (small: 2,000 rows a batch; skewed: 400,000 rows, 90% of them with key 0)
//     .select(k, value) .repartition('k') .select(k, value * 2)  -> foreachBatch (a no-op)
//   shuffle.partitions 200; 2 warm-up batches, then 10 measured; on and off alternate, twice.
//
// Figure: median batchDuration with adaptive on / off (lower is better), per workload. Off, each
// of the 200 partitions is a reduce task; on, small partitions are coalesced up to
// advisoryPartitionSizeInBytes (16 MB), so a small batch makes a task or two.
//
// Knobs (environment): SLUICE_BENCH_BATCHES (10), SLUICE_BENCH_CORES (2), SLUICE_BENCH_TMP.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupOnExit, commandLine, envInt, loadDriver, machineFacts, makeTempDir, median, record, round } from './lib.mjs';

const MEASURED = envInt('SLUICE_BENCH_BATCHES', 10);
const CORES = envInt('SLUICE_BENCH_CORES', 2);
const WARMUP = 2;
const LOAD_AT_START = loadavg()[0];
const WORKLOADS = {
  small: { rows: 2_000, key: (col) => col('value').mod(1000) },
  // 9 rows in 10 share key 0: one partition holds most of the batch.
  skewed: { rows: 400_000, key: (col, when) => when(col('value').mod(10).lt(9), 0).otherwise(col('value').mod(1000)) },
};

const { Session, col, when } = await loadDriver();
const tmp = makeTempDir('adaptive');
cleanupOnExit(tmp);
let runs = 0;

async function run(workload, adaptive) {
  const w = WORKLOADS[workload];
  const session = await Session.create({
    conf: { 'sluice.executor.cores': CORES, 'sluice.sql.shuffle.partitions': 200, 'sluice.sql.adaptive.streaming.stateless.enabled': adaptive },
  });
  try {
    const q = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', w.rows)
      .load()
      .select(w.key(col, when).alias('k'), col('value'))
      .repartition('k')
      .select(col('k'), col('value').multiply(2).alias('v'))
      .writeStream.foreachBatch(async () => {})
      .option('checkpointLocation', join(tmp, `ckpt-${runs++}`))
      .start();
    while ((q.lastProgress?.batchId ?? -1) < WARMUP + MEASURED - 1) {
      if (q.exception) throw q.exception;
      await sleep(5);
    }
    await q.stop();
    const measured = q.recentProgress.filter((p) => p.batchId >= WARMUP && p.batchId < WARMUP + MEASURED);
    return { medianBatchMs: median(measured.map((p) => p.batchDuration)), tasks: median(measured.map((p) => p.shuffle?.numCoalescedPartitions ?? 0)) };
  } finally {
    await session.close();
  }
}

const results = {};
for (const workload of Object.keys(WORKLOADS)) {
  const on = [];
  const off = [];
  for (let round = 0; round < 2; round++) {
    off.push(await run(workload, false));
    on.push(await run(workload, true));
  }
  results[workload] = { on, off, ratio: median(on.map((r) => r.medianBatchMs)) / median(off.map((r) => r.medianBatchMs)) };
  console.log(workload, JSON.stringify(results[workload]));
}

for (const workload of Object.keys(WORKLOADS)) {
  const r = results[workload];
  record({
    name: `stateless-adaptive-${workload}`,
    unit: 'ms',
    value: median(r.on.map((x) => x.medianBatchMs)),
    baseline: median(r.off.map((x) => x.medianBatchMs)),
    ratio: round(r.ratio, 3),
    params: {
      ratioIs: `median batchDuration, adaptive on / off, ${workload} batches (${WORKLOADS[workload].rows} rows) at 200 shuffle partitions`,
      reduceTasksOn: r.on.map((x) => x.tasks),
      reduceTasksOff: r.off.map((x) => x.tasks),
      runsOn: r.on.map((x) => x.medianBatchMs),
      runsOff: r.off.map((x) => x.medianBatchMs),
      query: "rate-micro-batch -> select(k, value) -> repartition('k') -> select(k, value * 2) -> foreachBatch no-op",
      measuredBatches: MEASURED,
      warmupBatches: WARMUP,
      'sluice.executor.cores': CORES,
      ...machineFacts(LOAD_AT_START),
    },
    command: commandLine(),
  });
}
