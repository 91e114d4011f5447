// One run of a soak query (soak/run.mjs), in its own process so that the soak can SIGKILL it.
//
//   node soak/child.mjs <stateless|stateful> <inputDir> <outputDir> <checkpointDir> [crashMarker]
//
// stateless: json files → select → json sink. stateful: a 5-minute windowed count per id with a
// 10-minute watermark, append mode, LevelDB state in 2 shards. Both run Trigger.AvailableNow, 2
// files a batch. With a crash marker, a udf ends its worker thread once (a worker crash the
// engine retries). Prints STARTED, BATCH <id> per committed batch, then DONE, or FAILED <code>.
import { col, lit, Session, Trigger, udf, window } from '@sluice/driver';

const [kind, input, out, ckpt, marker] = process.argv.slice(2);
const crashOnce = udf(new URL('../test/fixtures/crashing-udfs.mjs', import.meta.url), 'crashOnce', 'string');
try {
  const session = await Session.create({
    conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 8, 'sluice.sql.streaming.stateStore.shards': 2 },
  });
  session.streams.addListener({ onQueryProgress: ({ progress }) => console.log(`BATCH ${progress.batchId}`) });
  let df = session.readStream.format('json').schema('id STRING, v LONG, t TIMESTAMP').option('maxFilesPerTrigger', 2).load(input);
  if (marker) df = df.withColumn('id', crashOnce(col('id'), lit(marker)));
  df = kind === 'stateful' ? df.withWatermark('t', '10 minutes').groupBy(window('t', '5 minutes'), 'id').count() : df.select(col('id'), col('v'));
  const query = await df.writeStream.format('json').option('checkpointLocation', ckpt).outputMode('append').trigger(Trigger.AvailableNow()).start(out);
  console.log('STARTED');
  await query.awaitTermination();
  await session.close();
  console.log('DONE');
} catch (e) {
  console.log(`FAILED ${e?.code ?? 'UNCODED'} ${String(e?.message ?? e).split('\n')[0]}`);
  process.exit(1);
}
