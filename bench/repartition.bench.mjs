// repartition: the REPARTITION control batch on 1M state keys (bench/README.md), beside a raw LevelDB
// copy of the same keys measured in the same run.
//
// A base checkpoint is built once: the seed query (rate-micro-batch, id = value % KEYS, 10-minute
// watermark, 5-minute windows, count by window and id, append) at 200 partitions on 2 shards, with
// a first batch that creates KEYS state keys and BEFORE more batches over the same keys (their
// median duration is the "before" figure). Then each case starts from its own copy of that
// checkpoint, with a new layout: the restart runs the control batch, then one data batch.
//   (a) 200 -> 100 partitions, shards unchanged (nothing should move);
//   (b) 200 -> 7 partitions;
//   (c) 2 shards -> 1;
//   (d) 2 -> 3 shards (about a third of the keys should move).
// For each: durationMs["controlBatch.REPARTITION"], the key groups, rows and bytes moved, the ratio
// to the raw copy (iterate every entry of both shards, batch-write them into a new LevelDB, 10k a
// batch, the last synced), and the first data batch's duration after the move over the median one
// before it. A second data batch after the move shows what the new layout costs by itself (one
// shard runs the state stage on one slot), apart from what the move left behind.
//
//   node bench/repartition.bench.mjs        (SLUICE_BENCH_KEYS, SLUICE_BENCH_BEFORE, and
//   SLUICE_BENCH_CHANGELOG=false to run every batch with changelog checkpointing off)
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupOnExit, commandLine, engineVersion, envInt, loadDriver, makeTempDir, median, record, ROOT_DIR, round } from './lib.mjs';

const KEYS = envInt('SLUICE_BENCH_KEYS', 1_000_000);
const BEFORE = envInt('SLUICE_BENCH_BEFORE', 3);
const CHANGELOG = process.env.SLUICE_BENCH_CHANGELOG !== 'false';
const { Session, Trigger, col, window } = await loadDriver();
const req = createRequire(join(ROOT_DIR, 'packages', 'state', 'package.json'));
const { ClassicLevel } = await import(pathToFileURL(req.resolve('classic-level')).href);

const root = makeTempDir('repartition');
cleanupOnExit(root);
const base = join(root, 'base');

/** One run (AvailableNow: one data batch, after a control batch when the layout changed). */
async function run(dir, partitions, shards) {
  const session = await Session.create({
    conf: {
      'sluice.executor.cores': 2,
      'sluice.sql.streaming.stateStore.partitions': partitions,
      'sluice.sql.streaming.stateStore.shards': shards,
      'sluice.sql.streaming.noDataMicroBatches.enabled': false,
      'sluice.sql.streaming.stateStore.changelogCheckpointing.enabled': CHANGELOG,
    },
  });
  try {
    const q = await session.readStream
      .format('rate-micro-batch')
      .option('rowsPerBatch', KEYS)
      .option('advanceMillisPerBatch', 1000)
      .load()
      .withWatermark('timestamp', '10 minutes')
      .withColumn('id', col('value').mod(KEYS))
      .groupBy(window('timestamp', '5 minutes'), 'id')
      .count()
      .writeStream.format('memory')
      .queryName('repartition_bench')
      .outputMode('append')
      .option('checkpointLocation', join(dir, 'ckpt'))
      .trigger(Trigger.AvailableNow())
      .start();
    await q.awaitTermination();
    return q.recentProgress;
  } finally {
    await session.close();
  }
}

/** The raw copy: every entry of the base state into one new LevelDB. */
async function rawCopy() {
  const target = new ClassicLevel(join(root, `raw-${Date.now()}`), { keyEncoding: 'view', valueEncoding: 'view' });
  await target.open();
  const t0 = performance.now();
  let entries = 0;
  for (const shard of [0, 1]) {
    const source = new ClassicLevel(join(base, 'ckpt', 'state', '0', `shard-${shard}`), { keyEncoding: 'view', valueEncoding: 'view' });
    await source.open();
    const it = source.iterator();
    for (;;) {
      const batch = await it.nextv(10_000);
      if (batch.length === 0) break;
      const write = target.batch();
      for (const [k, v] of batch) write.put(k, v);
      await write.write();
      entries += batch.length;
    }
    await it.close();
    await source.close();
  }
  const last = target.batch();
  await last.write({ sync: true });
  const ms = performance.now() - t0;
  await target.close();
  return { ms, entries };
}

console.log(`building ${KEYS} state keys at 200 partitions on 2 shards, then ${BEFORE} batches over them`);
const before = [];
for (let i = 0; i <= BEFORE; i++) {
  const [p] = await run(base, 200, 2);
  if (i > 0) before.push(p.durationMs.triggerExecution);
  console.log(`  batch ${p.batchId}: ${p.durationMs.triggerExecution} ms, ${p.stateOperators[0].numRowsTotal} keys`);
}
const beforeMs = median(before);
const raws = [await rawCopy(), await rawCopy()];
const raw = { ms: median(raws.map((r) => r.ms)), entries: raws[0].entries };
console.log(`raw LevelDB copy of ${raw.entries} entries: ${round(raw.ms, 1)} ms (median of 2)`);

const cases = [
  { name: 'a', what: '200 -> 100 partitions, 2 shards', partitions: 100, shards: 2, aim: '<= 0.1' },
  { name: 'b', what: '200 -> 7 partitions, 2 shards', partitions: 7, shards: 2, aim: 'well under 1' },
  { name: 'c', what: '2 shards -> 1, 200 partitions', partitions: 200, shards: 1, aim: '<= 1.2' },
  { name: 'd', what: '2 shards -> 3, 200 partitions', partitions: 200, shards: 3, aim: 'keys moved <= 34%' },
];
const params = {
  keys: KEYS,
  stateEntries: raw.entries,
  beforeBatches: before,
  rawCopyMs: raws.map((r) => round(r.ms, 1)),
  cpu: process.arch,
  node: process.version,
  engine: engineVersion(),
};
for (const c of cases) {
  const dir = join(root, `case-${c.name}`);
  cpSync(base, dir, { recursive: true });
  const [first] = await run(dir, c.partitions, c.shards);
  const ms = first.durationMs['controlBatch.REPARTITION'];
  const m = first.stateOperators[0].customMetrics;
  const after = first.durationMs.triggerExecution;
  const [second] = await run(dir, c.partitions, c.shards);
  const next = second.durationMs.triggerExecution;
  const result = {
    case: c.what,
    aim: c.aim,
    repartitionMs: ms,
    numKeyGroupsMoved: m.numKeyGroupsMoved,
    numRowsMoved: m.numRowsMoved,
    numBytesMoved: m.numBytesMoved,
    keysMovedFraction: round(m.numRowsMoved / KEYS, 3),
    // A moved row is two entries (the row and its eviction index entry); the raw copy counts entries.
    rowsMovedPerSecond: ms > 0 ? Math.round((1000 * m.numRowsMoved) / ms) : null,
    rawCopyEntriesPerSecond: Math.round((1000 * raw.entries) / raw.ms),
    firstBatchAfterMs: after,
    firstBatchAfterOverBefore: round(after / beforeMs, 3),
    secondBatchAfterMs: next,
    firstOverSecondAfter: round(after / next, 3),
    changelogCheckpointing: CHANGELOG,
    ...params,
  };
  console.log(
    `(${c.name}) ${c.what}: ${ms} ms vs raw copy ${round(raw.ms, 1)} ms -> ratio ${round(ms / raw.ms, 3)} (aim ${c.aim}); moved ${m.numKeyGroupsMoved} key groups, ` +
      `${m.numRowsMoved} rows (${round((100 * m.numRowsMoved) / KEYS, 1)}%), ${m.numBytesMoved} bytes; first batch after ${after} ms = ${round(after / beforeMs, 2)}x the median before, ` +
      `${round(after / next, 2)}x the second batch after`,
  );
  record({
    name: `repartition-${c.name}`,
    unit: 'ms',
    value: ms,
    baseline: round(raw.ms, 1),
    ratio: round(ms / raw.ms, 3),
    params: result,
    command: commandLine(),
  });
  rmSync(dir, { recursive: true, force: true });
}
