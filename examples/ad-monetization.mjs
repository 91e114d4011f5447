// Ports the Structured Streaming Programming Guide's stream-stream join example ("Inner Joins with
// optional Watermarking" and "Outer Joins with Watermarking"): ad impressions joined with the clicks
// on them, each stream with a watermark (2 hours, 3 hours), on
//   clickAdId = impressionAdId AND clickTime >= impressionTime AND clickTime <= impressionTime + interval 1 hour
// first as an inner join, then as the left outer join that also emits the impressions no click
// followed within the hour.
// Run from the repository root, after `pnpm run build`:  node examples/ad-monetization.mjs
//
// Adapted: the guide reads both streams from Kafka; here each is a directory of JSON files, one
// file per micro-batch (maxFilesPerTrigger 1, Trigger.AvailableNow()), and the memory sink's rows
// are printed sorted by ad id.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, expr } from '@sluice/driver';

// Event times are on 2024-01-01, UTC. Batch 0 has the morning's traffic, batch 1 the afternoon's,
// which moves both watermarks far enough for the left outer join to give up on ad2.
const IMPRESSIONS = [
  [
    ['ad1', '10:00'],
    ['ad2', '10:05'],
    ['ad3', '10:10'],
    ['ad4', '10:20'],
  ],
  [
    ['ad5', '15:00'],
    ['ad6', '15:30'],
  ],
];
const CLICKS = [
  [
    ['ad1', '10:02'],
    ['ad3', '10:40'],
    ['ad2', '11:30'],
  ], // ad2's click comes 85 minutes late: no match
  [
    ['ad4', '10:50'],
    ['ad5', '15:20'],
    ['ad7', '15:25'],
  ], // ad4's click arrives a batch later; ad7 had no impression
];

const root = mkdtempSync(join(tmpdir(), 'sluice-ad-monetization-'));

function writeStream(name, batches, idColumn, timeColumn) {
  const dir = join(root, name);
  mkdirSync(dir);
  batches.forEach((rows, i) => {
    const path = join(dir, `${name}-${i}.json`);
    const lines = rows.map(([id, hm]) => JSON.stringify({ [idColumn]: id, [timeColumn]: `2024-01-01T${hm}:00Z` }));
    writeFileSync(path, `${lines.join('\n')}\n`);
    utimesSync(path, 1_700_000_000 + i, 1_700_000_000 + i);
  });
  return dir;
}
const impressionsDir = writeStream('impressions', IMPRESSIONS, 'impressionAdId', 'impressionTime');
const clicksDir = writeStream('clicks', CLICKS, 'clickAdId', 'clickTime');

const hm = (d) => (d === null ? 'null' : d.toISOString().slice(11, 16));

const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
try {
  for (const [title, how] of [
    ['inner join', 'inner'],
    ['left outer join', 'leftOuter'],
  ]) {
    const impressions = session.readStream
      .format('json')
      .schema('impressionAdId STRING, impressionTime TIMESTAMP')
      .option('maxFilesPerTrigger', 1)
      .load(impressionsDir);
    const clicks = session.readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').option('maxFilesPerTrigger', 1).load(clicksDir);

    // Apply watermarks on event-time columns
    const impressionsWithWatermark = impressions.withWatermark('impressionTime', '2 hours');
    const clicksWithWatermark = clicks.withWatermark('clickTime', '3 hours');

    // Join with event-time constraints
    const joined = impressionsWithWatermark.join(
      clicksWithWatermark,
      expr(`
        clickAdId = impressionAdId AND
        clickTime >= impressionTime AND
        clickTime <= impressionTime + interval 1 hour
      `),
      how,
    );

    const name = `ad_clicks_${how}`;
    const query = await joined.writeStream
      .format('memory')
      .queryName(name)
      .outputMode('append')
      .option('checkpointLocation', join(root, `checkpoint-${how}`))
      .trigger(Trigger.AvailableNow())
      .start();
    await query.awaitTermination();

    const rows = (await session.memoryTable(name)).sort((a, b) => a.impressionAdId.localeCompare(b.impressionAdId) || a.impressionTime - b.impressionTime);
    const watermark = query.lastProgress.eventTime.watermark.slice(11, 16);
    console.log(`== ${title} (${query.recentProgress.length} batches, final watermark ${watermark}) ==`);
    console.log('impressionAdId impressionTime clickAdId clickTime');
    for (const r of rows) {
      console.log(`${r.impressionAdId.padEnd(14)} ${hm(r.impressionTime).padEnd(14)} ${String(r.clickAdId).padEnd(9)} ${hm(r.clickTime)}`.trimEnd());
    }
    console.log('');
  }
} finally {
  await session.close();
  rmSync(root, { recursive: true, force: true });
}
