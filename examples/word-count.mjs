// Ports the Structured Streaming Programming Guide's "Quick Example": a running word count over
// lines of text (split, explode, groupBy('word').count(), complete output mode).
// Run from the repository root, after `pnpm run build`:  node examples/word-count.mjs
//
// Adapted: Sluice has no socket source, so the lines a user would type into `nc -lk 9999` are text
// files in a temporary directory, read one file per batch (maxFilesPerTrigger 1) with
// Trigger.AvailableNow(). The guide's console sink prints each batch's result table in no fixed
// order; here foreachBatch prints the same table sorted by word, so the output is stable.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session, Trigger, col, explode, split } from '@sluice/driver';

// What the guide types into netcat, one batch at a time (the first two are the guide's own).
const BATCHES = ['apache spark', 'apache hadoop', 'spark streams sluice streams\nsluice'];

const root = mkdtempSync(join(tmpdir(), 'sluice-word-count-'));
const input = join(root, 'lines');
mkdirSync(input);
BATCHES.forEach((text, i) => {
  const path = join(input, `lines-${i}.txt`);
  writeFileSync(path, `${text}\n`);
  utimesSync(path, 1_700_000_000 + i, 1_700_000_000 + i); // files are taken in modification-time order
});

/** A table as Spark's Dataset.show() prints one: cells right-aligned, a rule above and below the header. */
function show(rows, columns) {
  const cells = rows.map((r) => columns.map((c) => String(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const rule = `+${widths.map((w) => '-'.repeat(w)).join('+')}+`;
  const line = (values) => `|${values.map((v, i) => v.padStart(widths[i])).join('|')}|`;
  return [rule, line(columns), rule, ...cells.map(line), rule].join('\n');
}

const session = await Session.create({ conf: { 'sluice.executor.cores': 2 } });
try {
  // lines = spark.readStream.format("socket")...load()
  const lines = session.readStream.format('text').option('maxFilesPerTrigger', 1).load(input);

  // words = lines.select(explode(split(lines.value, " ")).alias("word"))
  const words = lines.select(explode(split(col('value'), ' ')).alias('word'));

  // wordCounts = words.groupBy("word").count()
  const wordCounts = words.groupBy('word').count();

  // query = wordCounts.writeStream.outputMode("complete").format("console").start()
  const query = await wordCounts.writeStream
    .outputMode('complete')
    .foreachBatch((rows, batchId) => {
      const sorted = [...rows].sort((a, b) => (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
      console.log('-------------------------------------------');
      console.log(`Batch: ${batchId}`);
      console.log('-------------------------------------------');
      console.log(show(sorted, ['word', 'count']));
      console.log('');
    })
    .trigger(Trigger.AvailableNow())
    .start();
  await query.awaitTermination();
} finally {
  await session.close();
  rmSync(root, { recursive: true, force: true });
}
