// Ports the session tracking of Spark's transformWithState docs (Spark 4.0, "Arbitrary Stateful
// Operations"; the guide's sessionization with flatMapGroupsWithState before it): a stateful
// processor that keeps each user's open session (events, pages visited) and emits a summary row
// when the session ends: when an event-time timer fires 30 minutes after the user's last event,
// or when the user's next event comes more than 30 minutes after it.
// Run from the repository root, after `pnpm run build`:  node examples/session-tracker.mjs
//
// The processor is a class in examples/processors/session-tracker.mjs that every worker imports,
// named with statefulProcessor(url, exportName) (Spark passes an instance; here the module and
// export). Adapted: the click events come from JSON files, one per micro-batch (maxFilesPerTrigger
// 1, Trigger.AvailableNow()), and foreachBatch prints each batch's summaries sorted by user.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, statefulProcessor } from '@sluice/driver';

// Click events on 2024-05-01 (UTC): [user, hh:mm, page], one array per file and micro-batch.
const FILES = [
  [
    ['alice', '09:00', '/home'],
    ['bob', '09:02', '/home'],
    ['alice', '09:12', '/pricing'],
    ['alice', '09:05', '/docs'],
  ],
  [
    ['bob', '09:10', '/blog'],
    ['carol', '09:40', '/home'],
    ['alice', '09:20', '/signup'],
  ],
  [
    ['alice', '10:30', '/home'],
    ['bob', '10:45', '/docs'],
  ], // both come back after more than 30 minutes
  [
    ['dave', '12:00', '/home'],
    ['erin', '09:00', '/home'],
  ], // erin's event is older than the watermark: dropped
];

const root = mkdtempSync(join(tmpdir(), 'sluice-session-tracker-'));
const input = join(root, 'clicks');
mkdirSync(input);
FILES.forEach((events, i) => {
  const path = join(input, `clicks-${i}.json`);
  const lines = events.map(([user, hm, page]) => JSON.stringify({ user, ts: `2024-05-01T${hm}:00Z`, page }));
  writeFileSync(path, `${lines.join('\n')}\n`);
  utimesSync(path, 1_700_000_000 + i, 1_700_000_000 + i);
});

const hm = (d) => (d instanceof Date ? d.toISOString() : String(d)).slice(11, 16);
const plural = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;
const watermarkText = (iso) => (new Date(iso).getTime() === 0 ? 'none yet' : hm(iso));

const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
try {
  const tracker = statefulProcessor(new URL('./processors/session-tracker.mjs', import.meta.url), 'SessionTracker');

  const clicks = session.readStream.format('json').schema('user STRING, ts TIMESTAMP, page STRING').option('maxFilesPerTrigger', 1).load(input);

  const sessions = clicks.withWatermark('ts', '10 minutes').groupBy('user').transformWithState(tracker, {
    outputSchema: 'user STRING, session_start TIMESTAMP, session_end TIMESTAMP, events LONG, pages STRING, closed_by STRING',
    outputMode: 'append',
    timeMode: 'eventTime',
  });

  const emitted = new Map();
  const query = await sessions.writeStream
    .outputMode('append')
    .foreachBatch((rows, batchId) => {
      emitted.set(
        batchId,
        [...rows].sort((a, b) => a.user.localeCompare(b.user) || a.session_start - b.session_start),
      );
    })
    .option('checkpointLocation', join(root, 'checkpoint'))
    .trigger(Trigger.AvailableNow())
    .start();
  await query.awaitTermination();

  for (const p of query.recentProgress) {
    const op = p.stateOperators[0];
    console.log(
      `batch ${p.batchId} (watermark ${watermarkText(p.eventTime.watermark)}, ${plural(p.numInputRows, 'event')}, ` +
        `${op.numRowsDroppedByWatermark} late, ${plural(op.customMetrics.numExpiredTimers, 'timer')} fired):`,
    );
    const rows = emitted.get(p.batchId) ?? [];
    if (rows.length === 0) console.log('  (no session ended)');
    for (const r of rows) {
      console.log(`  ${r.user} ${hm(r.session_start)}-${hm(r.session_end)} ${plural(r.events, 'event')} (${r.pages}) closed by ${r.closed_by}`);
    }
  }
} finally {
  await session.close();
  rmSync(root, { recursive: true, force: true });
}
