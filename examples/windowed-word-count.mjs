// Ports the Structured Streaming Programming Guide's "Window Operations on Event Time" and
// "Handling Late Data and Watermarking" programs: words with event times, counted per word in
// 10-minute windows sliding every 5 minutes, with withWatermark('timestamp', '10 minutes'), in
// update mode and then in append mode, over the guide's own words and times (dog at 12:07, owl at
// 12:08, ..., the late donkey at 12:04).
// Run from the repository root, after `pnpm run build`:  node examples/windowed-word-count.mjs
//
// Adapted: the words come from JSON files (no socket source here), one file per micro-batch
// (maxFilesPerTrigger 1, Trigger.AvailableNow()), and foreachBatch prints each batch's rows sorted,
// where the guide's console sink prints them in no fixed order. The guide's last trigger (owl at
// 12:17 and donkey at 12:04) is split in two: since Spark 3.4 (and in Sluice) a batch drops late
// rows by the watermark the batch before it ran with, so the donkey is dropped once the 12:11
// watermark has been in force for a batch, as the guide's figure shows it dropped.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, window } from '@sluice/driver';

// The guide's figure, trigger by trigger: [event time (12:mm on 2024-01-01, UTC), word].
const BATCHES = [
  [
    ['12:07', 'dog'],
    ['12:08', 'owl'],
  ],
  [
    ['12:14', 'dog'],
    ['12:09', 'cat'],
  ],
  [
    ['12:15', 'cat'],
    ['12:08', 'dog'],
    ['12:13', 'owl'],
    ['12:21', 'owl'],
  ],
  [['12:17', 'owl']],
  [['12:04', 'donkey']], // late: both its windows end at or before the watermark of 12:11
];

const root = mkdtempSync(join(tmpdir(), 'sluice-windowed-word-count-'));
const input = join(root, 'words');
mkdirSync(input);
BATCHES.forEach((rows, i) => {
  const path = join(input, `words-${i}.json`);
  writeFileSync(path, `${rows.map(([hm, word]) => JSON.stringify({ timestamp: `2024-01-01T${hm}:00Z`, word })).join('\n')}\n`);
  utimesSync(path, 1_700_000_000 + i, 1_700_000_000 + i); // one batch per file, in this order
});

const hm = (d) => (d instanceof Date ? d.toISOString() : String(d)).slice(11, 16);
// The watermark is 0 (the epoch) until the first batch has seen data.
const watermarkText = (iso) => (new Date(iso).getTime() === 0 ? 'none yet' : hm(iso));
const windowText = (w) => `${hm(w.start)}-${hm(w.end)}`;
const byWindowAndWord = (a, b) => a.window.start - b.window.start || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0);

const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
try {
  for (const mode of ['update', 'append']) {
    // words = ... # streaming DataFrame of schema { timestamp: Timestamp, word: String }
    const words = session.readStream.format('json').schema('timestamp TIMESTAMP, word STRING').option('maxFilesPerTrigger', 1).load(input);

    // windowedCounts = words \
    //     .withWatermark("timestamp", "10 minutes") \
    //     .groupBy(window(words.timestamp, "10 minutes", "5 minutes"), words.word) \
    //     .count()
    const windowedCounts = words
      .withWatermark('timestamp', '10 minutes')
      .groupBy(window('timestamp', '10 minutes', '5 minutes'), 'word')
      .count();

    const emitted = new Map();
    const query = await windowedCounts.writeStream
      .outputMode(mode)
      .foreachBatch((rows, batchId) => {
        emitted.set(batchId, [...rows].sort(byWindowAndWord));
      })
      .option('checkpointLocation', join(root, `checkpoint-${mode}`))
      .trigger(Trigger.AvailableNow())
      .start();
    await query.awaitTermination();

    console.log(`== ${mode} mode ==`);
    for (const p of query.recentProgress) {
      const dropped = p.stateOperators[0]?.numRowsDroppedByWatermark ?? 0;
      const plural = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;
      console.log(
        `batch ${p.batchId} (watermark ${watermarkText(p.eventTime.watermark)}, ${plural(p.numInputRows, 'input row')}, ` +
          `${plural(dropped, 'late row')} dropped):`,
      );
      const rows = emitted.get(p.batchId) ?? [];
      if (rows.length === 0) console.log('  (no rows)');
      for (const r of rows) console.log(`  ${windowText(r.window)} ${r.word} ${r.count}`);
    }
    console.log('');
  }
} finally {
  await session.close();
  rmSync(root, { recursive: true, force: true });
}
