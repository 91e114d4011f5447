// One run of a soak query (soak/run.mjs), in its own process so that the soak can SIGKILL it.
//
//   node soak/child.mjs <kind> <inputDir> <outputDir> <checkpointDir> [crashMarker]
//
// stateless: json files {id, v, t} → select → json sink. aggregation: over the same files, a
// 5-minute windowed count per id with a 10-minute watermark, append mode. Every other kind
// (dropDuplicates, dropDuplicatesWithinWatermark, sessionWindow, streamJoin, transformWithState,
// flatMapGroupsWithState, limit) runs its query of test/fixtures/operator-kinds.mjs over json files
// {key, eventTime, n}, in the output mode it names. All run Trigger.AvailableNow, 2 files a batch,
// LevelDB state in 2 shards. With a crash marker, a udf on the source ends its worker thread once
// (a worker crash the engine retries). Prints STARTED, BATCH <id> per committed batch, then DONE,
// or FAILED <code>.
import { col, lit, Session, Trigger, udf, window } from '@sluice/driver';
import { operatorOutputMode, operatorQueries } from '../test/fixtures/operator-kinds.mjs';

const [kind, input, out, ckpt, marker] = process.argv.slice(2);
const crashOnce = udf(new URL('../test/fixtures/crashing-udfs.mjs', import.meta.url), 'crashOnce', 'string');
/** The source of the kind's files; with a marker, its string column passes the crashing udf. */
function source(session, schema, column) {
  const df = session.readStream.format('json').schema(schema).option('maxFilesPerTrigger', 2).load(input);
  return marker ? df.withColumn(column, crashOnce(col(column), lit(marker))) : df;
}
try {
  if (kind !== 'stateless' && kind !== 'aggregation' && operatorQueries[kind] === undefined)
    throw Object.assign(new Error(`unknown kind ${kind}`), { code: 'USAGE' });
  const session = await Session.create({
    conf: { 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 8, 'sluice.sql.streaming.stateStore.shards': 2 },
  });
  session.streams.addListener({ onQueryProgress: ({ progress }) => console.log(`BATCH ${progress.batchId}`) });
  let df;
  if (kind === 'stateless' || kind === 'aggregation') {
    df = source(session, 'id STRING, v LONG, t TIMESTAMP', 'id');
    df = kind === 'aggregation' ? df.withWatermark('t', '10 minutes').groupBy(window('t', '5 minutes'), 'id').count() : df.select(col('id'), col('v'));
  } else {
    df = operatorQueries[kind]((s) => source(s, 'key STRING, eventTime TIMESTAMP, n LONG', 'key'), session);
  }
  const mode = kind === 'stateless' || kind === 'aggregation' ? 'append' : operatorOutputMode(kind);
  const query = await df.writeStream.format('json').option('checkpointLocation', ckpt).outputMode(mode).trigger(Trigger.AvailableNow()).start(out);
  console.log('STARTED');
  await query.awaitTermination();
  await session.close();
  console.log('DONE');
} catch (e) {
  console.log(`FAILED ${e?.code ?? 'UNCODED'} ${String(e?.message ?? e).split('\n')[0]}`);
  process.exit(1);
}
