// Ports the Structured Streaming Programming Guide's SQL over streams ("You can also register a
// streaming DataFrame/Dataset as a temporary view and then apply SQL commands on it":
// df.createOrReplaceTempView("updates"); spark.sql("select count(*) from updates")), with the JSON
// payloads parsed by from_json as the guide's Kafka programs do: page views per page, with
// approx_count_distinct of visitors, in complete output mode.
// Run from the repository root, after `pnpm run build`:  node examples/sql-job.mjs
//
// Adapted: the guide's Kafka `value` column is a text source's `value` here (one JSON document per
// line of a file, one file per micro-batch), and the memory sink's final result is printed sorted by
// page (a stream has no ORDER BY).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger } from '@sluice/driver';

// Each file is what one poll of the topic would return: page views as JSON text, and some junk.
const FILES = [
  [
    { user: 'ann', page: '/home', ms: 120 },
    { user: 'bob', page: '/home', ms: 340 },
    { user: 'ann', page: '/docs', ms: 95 },
    'not json at all', // from_json gives null: dropped by the WHERE below
  ],
  [
    { user: 'cid', page: '/pricing', ms: 410 },
    { user: 'ann', page: '/home', ms: 101 },
    { user: 'dee', page: '/docs', ms: 88 },
    { user: 'bob', ms: 70 }, // no page: dropped too
    { user: 'eve', page: '/blog', ms: 230 },
  ],
  [
    { user: 'bob', page: '/docs', ms: 130 },
    { user: 'cid', page: '/home', ms: 99 },
    { user: 'fay', page: '/pricing', ms: 505 },
    { user: 'dee', page: '/docs', ms: 77 },
  ],
];

const root = mkdtempSync(join(tmpdir(), 'sluice-sql-job-'));
const input = join(root, 'events');
mkdirSync(input);
FILES.forEach((events, i) => {
  const path = join(input, `events-${i}.txt`);
  writeFileSync(path, `${events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n')}\n`);
  utimesSync(path, 1_700_000_000 + i, 1_700_000_000 + i);
});

const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
try {
  // The raw records, as a Kafka source would give them: one STRING column `value`.
  session.readStream.format('text').option('maxFilesPerTrigger', 1).load(input).createOrReplaceTempView('raw_events');

  // Parse the payloads into typed columns, and register the result as a view of its own.
  session
    .sql(
      `SELECT event.user AS user, event.page AS page, event.ms AS load_ms
       FROM (SELECT from_json(value, 'user STRING, page STRING, ms BIGINT') AS event FROM raw_events)
       WHERE event.page IS NOT NULL`,
    )
    .createOrReplaceTempView('page_views');

  // The report: views, distinct visitors and load times per page, for pages seen more than once.
  const report = session.sql(`
    SELECT page,
           count(*) AS views,
           approx_count_distinct(user) AS visitors,
           max(load_ms) AS slowest_ms,
           round(avg(load_ms), 1) AS avg_ms
    FROM page_views
    GROUP BY page
    HAVING count(*) > 1`);

  const query = await report.writeStream.format('memory').queryName('page_report').outputMode('complete').trigger(Trigger.AvailableNow()).start();
  await query.awaitTermination();

  // In complete mode the memory sink holds the last batch's result: the whole report.
  const rows = (await session.memoryTable('page_report')).sort((a, b) => a.page.localeCompare(b.page));
  const columns = ['page', 'views', 'visitors', 'slowest_ms', 'avg_ms'];
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (values) =>
    values
      .map((v, i) => String(v).padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  console.log(`page report after ${query.recentProgress.length} batches (${query.recentProgress.reduce((n, p) => n + p.numInputRows, 0)} input lines):`);
  console.log(line(columns));
  for (const r of rows) console.log(line(columns.map((c) => r[c])));
} finally {
  await session.close();
  rmSync(root, { recursive: true, force: true });
}
