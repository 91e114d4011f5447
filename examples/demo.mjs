// Sluice demo: streaming queries over generated sensor readings: admission control, progress from
// a listener, exactly-once JSON output, windowed counts in LevelDB state, and checks a person can read.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, col, count, max, when, window } from '@sluice/driver';

const root = mkdtempSync(join(tmpdir(), 'sluice-demo-'));
const input = join(root, 'in');
const output = join(root, 'out');
const checkpoint = join(root, 'checkpoint');
mkdirSync(input);

// 20 files of 500 readings each; readings above 30 °C are "hot".
const expectedHot = new Map();
for (let f = 0; f < 20; f++) {
  const lines = [];
  for (let r = 0; r < 500; r++) {
    const sensor = `s${(f * 7 + r) % 4}`;
    const celsius = ((f * 31 + r * 17) % 45) + 0.5;
    const ts = new Date(Date.UTC(2024, 5, 1, 12, f, r % 60)).toISOString();
    lines.push(JSON.stringify({ sensor, celsius, ts }));
    if (celsius > 30) expectedHot.set(sensor, (expectedHot.get(sensor) ?? 0) + 1);
  }
  const path = join(input, `readings-${String(f).padStart(2, '0')}.json`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  utimesSync(path, 1_700_000_000 + f, 1_700_000_000 + f);
}

// `--ui` (pnpm demo:ui): the live dashboard on sluice.ui.port (4040, or SLUICE_UI_PORT), kept up
// after the queries end until Ctrl-C.
const withUI = process.argv.includes('--ui');
const session = await Session.create({
  conf: withUI ? { 'sluice.ui.enabled': true, 'sluice.ui.port': Number(process.env.SLUICE_UI_PORT ?? 4040) } : {},
});
if (session.ui) console.log(`dashboard: ${session.ui.url} (metrics: ${session.ui.url}metrics)`);
session.streams.addListener({
  onQueryProgress: ({ progress: p }) =>
    console.log(
      `[${p.name}] batch ${p.batchId}: ${p.numInputRows} rows in, ${p.sink.numOutputRows} rows out, ` +
        `${p.durationMs.triggerExecution} ms, files up to ${JSON.stringify(p.sources[0].endOffset)}`,
    ),
});

const query = await session.readStream
  .format('json')
  .schema('sensor STRING, celsius DOUBLE, ts TIMESTAMP')
  .option('maxFilesPerTrigger', 5)
  .load(input)
  .filter(col('celsius').gt(30))
  .select(
    col('sensor'),
    col('celsius'),
    col('celsius').multiply(9).divide(5).plus(32).alias('fahrenheit'),
    when(col('celsius').gt(40), 'alarm').otherwise('warm').alias('level'),
    col('ts'),
  )
  .writeStream.format('json')
  .queryName('hot_readings')
  .option('checkpointLocation', checkpoint)
  .trigger(Trigger.AvailableNow())
  .start(output);

await query.awaitTermination();

// Read the sink back through its manifest and compare with the count made while generating.
const rows = await session.read.format('json').load(output).collect();
const got = new Map();
for (const r of rows) got.set(r.sensor, (got.get(r.sensor) ?? 0) + 1);
console.log('\nhot readings per sensor (expected = counted while generating the input):');
let ok = true;
for (const sensor of [...expectedHot.keys()].sort()) {
  const same = got.get(sensor) === expectedHot.get(sensor);
  ok &&= same;
  console.log(`  ${sensor}: expected ${expectedHot.get(sensor)}, got ${got.get(sensor) ?? 0} ${same ? 'ok' : 'MISMATCH'}`);
}
console.log(`example row: ${JSON.stringify(rows[0])}`);
console.log(ok ? '\nall rows arrived exactly once' : '\nMISMATCH: see above');

// A stateful query over the same files: readings per sensor in 5-minute windows of event time,
// kept in LevelDB state and emitted once the watermark passes each window's end. The final
// no-data batch of Trigger.AvailableNow() closes every window up to the watermark.
const windows = await session.readStream
  .format('json')
  .schema('sensor STRING, celsius DOUBLE, ts TIMESTAMP')
  .option('maxFilesPerTrigger', 5)
  .load(input)
  .withWatermark('ts', '1 minute')
  .groupBy(window('ts', '5 minutes'), 'sensor')
  .agg(count('*').alias('readings'), max('celsius').alias('hottest'))
  .writeStream.format('memory')
  .queryName('windows')
  .outputMode('append')
  .option('checkpointLocation', join(root, 'checkpoint-windows'))
  .trigger(Trigger.AvailableNow())
  .start();
await windows.awaitTermination();
const state = windows.lastProgress.stateOperators[0];
console.log(
  `\nwindowed counts: ${windows.recentProgress.length} batches; state now holds ${state.numRowsTotal} open window(s) in ${state.numStateStoreInstances} LevelDB shard(s)`,
);
const closed = await session.memoryTable('windows');
// Independent count: file f holds minute f of 12:00, so window w covers files 5w .. 5w+4.
const expectedReadings = new Map();
for (let f = 0; f < 20; f++) {
  for (let r = 0; r < 500; r++) {
    const key = `${Math.floor(f / 5)}|s${(f * 7 + r) % 4}`;
    expectedReadings.set(key, (expectedReadings.get(key) ?? 0) + 1);
  }
}
let windowsOk = closed.length > 0;
for (const w of closed) {
  const index = (w.window.start.getUTCMinutes() / 5) | 0;
  windowsOk &&= expectedReadings.get(`${index}|${w.sensor}`) === w.readings;
}
// The memory sink keeps each batch's rows in the order its tasks finished: sort them to print.
const inOrder = [...closed].sort((a, b) => a.window.start - b.window.start || (a.sensor < b.sensor ? -1 : a.sensor > b.sensor ? 1 : 0));
for (const w of inOrder.slice(0, 4)) {
  console.log(
    `  ${w.window.start.toISOString().slice(11, 16)}-${w.window.end.toISOString().slice(11, 16)} ${w.sensor}: ${w.readings} readings, hottest ${w.hottest} °C`,
  );
}
console.log(`  ... ${closed.length} closed windows, ${windowsOk ? 'each count as expected' : 'MISMATCH'}`);
ok &&= windowsOk;

if (session.ui) {
  console.log(`\nthe dashboard stays up at ${session.ui.url}; Ctrl-C ends the demo`);
  await new Promise((resolve) => process.once('SIGINT', resolve));
}
await session.close();
rmSync(root, { recursive: true, force: true });
process.exitCode = ok ? 0 : 1;
