// Ports the Structured Streaming Programming Guide's file source to file sink program
// (spark.readStream.schema(userSchema).json(dir) ... writeStream.format(...).start(path)), with
// Delta Lake's streaming sink (`.format("delta")`, as Delta's docs write it) as the sink: JSON order
// files streamed into a Delta table partitioned by day, one commit per micro-batch, then the table
// read back with spark.read.format("delta"), at its latest version and by time travel (versionAsOf).
// Run from the repository root, after `pnpm run build`:  node examples/files-to-delta.mjs
//
// Adapted: the files are read one per micro-batch (maxFilesPerTrigger 1) with
// Trigger.AvailableNow(), so the table gets one version per file and the run ends by itself.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, col, round, to_date, upper } from '@sluice/driver';

// Three drops of orders; a line that is not JSON is dropped (mode DROPMALFORMED).
const FILES = [
  [
    { id: 1, customer: 'ann', amount: 12.5, ts: '2024-03-01T09:15:00Z' },
    { id: 2, customer: 'bob', amount: 80, ts: '2024-03-01T17:40:00Z' },
  ],
  [
    { id: 3, customer: 'ann', amount: 7.25, ts: '2024-03-02T08:05:00Z' },
    '{"id": 4, "customer": "cid", "amount": ',
    { id: 5, customer: 'dee', amount: 19.99, ts: '2024-03-02T21:30:00Z' },
  ],
  [{ id: 6, customer: 'bob', amount: 42, ts: '2024-03-03T12:00:00Z' }],
];

const root = mkdtempSync(join(tmpdir(), 'sluice-files-to-delta-'));
const input = join(root, 'orders');
const table = join(root, 'tables', 'orders');
mkdirSync(input);
FILES.forEach((lines, i) => {
  const path = join(input, `orders-${i}.json`);
  writeFileSync(path, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
  utimesSync(path, 1_700_000_000 + i, 1_700_000_000 + i);
});

const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
try {
  const orders = session.readStream
    .schema('id LONG, customer STRING, amount DOUBLE, ts TIMESTAMP')
    .option('maxFilesPerTrigger', 1)
    .option('mode', 'DROPMALFORMED')
    .json(input);

  const query = await orders
    .select(
      col('id'),
      upper(col('customer')).alias('customer'),
      round(col('amount').multiply(1.2), 2).alias('amount_with_vat'),
      col('ts'),
      to_date(col('ts')).alias('day'),
    )
    .writeStream.format('delta')
    .outputMode('append')
    .partitionBy('day')
    .option('checkpointLocation', join(root, 'checkpoint'))
    .trigger(Trigger.AvailableNow())
    .start(table);
  await query.awaitTermination();

  const commits = readdirSync(join(table, '_delta_log'))
    .filter((n) => /^\d{20}\.json$/.test(n))
    .sort();
  console.log(`delta log: ${commits.length} commits (${commits.map((n) => `version ${Number(n.slice(0, 20))}`).join(', ')})`);
  const days = readdirSync(table)
    .filter((n) => n.startsWith('day='))
    .sort();
  console.log(`partitions: ${days.join(' ')}`);

  // Rows as an aligned table, values as Spark prints them (timestamps in UTC, dates as yyyy-MM-dd).
  const columns = ['id', 'customer', 'amount_with_vat', 'ts', 'day'];
  const text = (r) => [
    String(r.id),
    r.customer,
    r.amount_with_vat.toFixed(2),
    r.ts.toISOString().replace('T', ' ').slice(0, 19),
    r.day.toISOString().slice(0, 10),
  ];
  const print = (rows) => {
    const cells = [columns, ...rows.map(text)];
    const widths = columns.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
    for (const c of cells)
      console.log(
        c
          .map((v, i) => v.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      );
  };
  const byId = (a, b) => a.id - b.id;

  const latest = (await session.read.format('delta').load(table).collect()).sort(byId);
  console.log(`\nlatest version: ${latest.length} rows`);
  print(latest);

  const first = (await session.read.format('delta').option('versionAsOf', 0).load(table).collect()).sort(byId);
  console.log(`\nversionAsOf 0: ${first.length} rows`);
  print(first);
} finally {
  await session.close();
  rmSync(root, { recursive: true, force: true });
}
