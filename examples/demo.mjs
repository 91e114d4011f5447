// Sluice demo: a streaming query over generated sensor readings, with admission control,
// progress from a listener, exactly-once JSON output, and a check a person can read.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, col, when } from '@sluice/driver';

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
  writeFileSync(path, lines.join('\n') + '\n');
  utimesSync(path, 1_700_000_000 + f, 1_700_000_000 + f);
}

const session = await Session.create();
session.streams.addListener({
  onQueryProgress: ({ progress: p }) =>
    console.log(
      `batch ${p.batchId}: ${p.numInputRows} rows in, ${p.sink.numOutputRows} rows out, ` +
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

await session.close();
rmSync(root, { recursive: true, force: true });
process.exitCode = ok ? 0 : 1;
