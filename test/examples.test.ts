/**
 * The programs of examples/ (the Structured Streaming Programming Guide's programs ported, and the
 * demo of `pnpm start`): each runs as a user runs it, `node examples/<name>.mjs` from the
 * repository root, and must exit 0 by itself within its time, print nothing on stderr, remove
 * every temporary file it made (its TMPDIR is a fresh directory, empty again at the end), and print
 * exactly what its input makes it compute. Every example in the folder needs a check in EXPECTED:
 * a new example without one fails.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runChild } from './helpers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLES = join(REPO, 'examples');
/** Hard limit of one example's run; each takes a second or two. */
const RUN_TIMEOUT_MS = 60_000;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** What the example left in its temporary directory. */
  leftInTmp: string[];
}

/** Runs `node examples/<file>` from the repository root, with a TMPDIR of its own; killed in the finally. */
async function runExample(file: string): Promise<Run> {
  const tmp = mkdtempSync(join(tmpdir(), 'sluice-example-run-'));
  try {
    const run = await runChild(process.execPath, [join('examples', file)], {
      cwd: REPO,
      env: { ...process.env, TMPDIR: tmp, TMP: tmp, TEMP: tmp },
      timeoutMs: RUN_TIMEOUT_MS,
    });
    if (run.timedOut) throw new Error(`examples/${file} did not exit within ${RUN_TIMEOUT_MS} ms: stdout=${run.stdout} stderr=${run.stderr}`);
    return { code: run.code, signal: run.signal, stdout: run.stdout, stderr: run.stderr, leftInTmp: readdirSync(tmp) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const lines = (...ls: string[]): string => ls.map((l) => `${l}\n`).join('');

// ---- demo.mjs: its expectations derived here from its generator's formula -------------------------

/** The demo's readings: file f, reading r (sensor, celsius), as examples/demo.mjs generates them. */
function demoReadings(): Array<{ file: number; sensor: string; celsius: number }> {
  const out = [];
  for (let f = 0; f < 20; f++) for (let r = 0; r < 500; r++) out.push({ file: f, sensor: `s${(f * 7 + r) % 4}`, celsius: ((f * 31 + r * 17) % 45) + 0.5 });
  return out;
}

function checkDemo(stdout: string): void {
  const readings = demoReadings();
  const hot = readings.filter((r) => r.celsius > 30);
  // The first query: 5 files a batch through a filter of celsius > 30.
  const hotPerBatch = [0, 1, 2, 3].map((b) => hot.filter((r) => Math.floor(r.file / 5) === b).length);
  const hotPerSensor = ['s0', 's1', 's2', 's3'].map((s) => [s, hot.filter((r) => r.sensor === s).length] as const);
  // The second: 5-minute windows of the readings' minute (file f is minute f), closed by a
  // 1-minute watermark: batch b (b ≥ 2) closes window b − 2, the final no-data batch window 2;
  // window 3 stays open. Each closed window holds every reading of its 5 files.
  const perWindowAndSensor = (w: number, s: string) => readings.filter((r) => Math.floor(r.file / 5) === w && r.sensor === s).length;
  const hottest = (w: number, s: string) => Math.max(...readings.filter((r) => Math.floor(r.file / 5) === w && r.sensor === s).map((r) => r.celsius));
  const expected = lines(
    ...hotPerBatch.map((n, b) => `[hot_readings] batch ${b}: 2500 rows in, ${n} rows out, <ms> ms, files up to {"logOffset":${b}}`),
    '',
    'hot readings per sensor (expected = counted while generating the input):',
    ...hotPerSensor.map(([s, n]) => `  ${s}: expected ${n}, got ${n} ok`),
    'example row: <row>',
    '',
    'all rows arrived exactly once',
    ...[0, 0, 4, 4, 4].map((n, b) => `[windows] batch ${b}: ${b < 4 ? 2500 : 0} rows in, ${n} rows out, <ms> ms, files up to {"logOffset":${Math.min(b, 3)}}`),
    '',
    `windowed counts: 5 batches; state now holds 4 open window(s) in ${availableParallelism()} LevelDB shard(s)`,
    ...['s0', 's1', 's2', 's3'].map((s) => `  12:00-12:05 ${s}: ${perWindowAndSensor(0, s)} readings, hottest ${hottest(0, s)} °C`),
    '  ... 12 closed windows, each count as expected',
  );
  // Times vary from run to run, and the example row is whichever row the sink's first file holds.
  let row: Record<string, unknown> | undefined;
  const normalized = stdout.replace(/, \d+ ms, /g, ', <ms> ms, ').replace(/^example row: (.*)$/m, (_, json: string) => {
    row = JSON.parse(json) as Record<string, unknown>;
    return 'example row: <row>';
  });
  expect(normalized).toBe(expected);
  // The example row is one of the hot readings, converted and labelled as the query does.
  const c = row?.celsius as number;
  expect(Object.keys(row ?? {})).toEqual(['celsius', 'fahrenheit', 'level', 'sensor', 'ts']);
  expect(hot.some((r) => r.celsius === c && r.sensor === row?.sensor)).toBe(true);
  expect(row?.fahrenheit).toBeCloseTo((c * 9) / 5 + 32, 9);
  expect(row?.level).toBe(c > 40 ? 'alarm' : 'warm');
  expect(row?.ts).toMatch(/^2024-06-01T12:\d\d:\d\d\.000Z$/);
}

// ---- the guide's programs: the exact output of the input each example writes ------------------------

/**
 * A Dataset.show() table of word counts after each batch, derived here from the lines the example
 * types in: 'apache spark', 'apache hadoop', then 'spark streams sluice streams' and 'sluice'.
 */
function expectedWordCount(): string {
  const batches = [['apache spark'], ['apache hadoop'], ['spark streams sluice streams', 'sluice']];
  const counts = new Map<string, number>();
  let out = '';
  batches.forEach((batch, id) => {
    for (const word of batch.flatMap((l) => l.split(' '))) counts.set(word, (counts.get(word) ?? 0) + 1);
    const rows = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([w, n]) => [w, String(n)]);
    const widths = [0, 1].map((i) => Math.max(['word', 'count'][i]!.length, ...rows.map((r) => r[i]!.length)));
    const rule = `+${widths.map((w) => '-'.repeat(w)).join('+')}+`;
    const row = (v: string[]) => `|${v.map((x, i) => x.padStart(widths[i]!)).join('|')}|`;
    out += lines(
      '-------------------------------------------',
      `Batch: ${id}`,
      '-------------------------------------------',
      rule,
      row(['word', 'count']),
      rule,
      ...rows.map(row),
      rule,
      '',
    );
  });
  return out;
}

const EXPECTED: Record<string, (stdout: string) => void> = {
  'demo.mjs': checkDemo,

  'word-count.mjs': (stdout) => {
    expect(stdout).toBe(expectedWordCount());
    // The same, as Spark's guide shows its first two batches.
    expect(stdout).toContain(lines('|apache|    2|', '|hadoop|    1|', '| spark|    1|'));
  },

  // The guide's words: dog 12:07 and owl 12:08 fall in windows 12:00-12:10 and 12:05-12:15, etc.
  // The watermark is the max event time less 10 minutes, for the batch after; a batch drops the
  // windows that end at or before the watermark of the batch before it (12:11 for batch 4, so both
  // of donkey's windows, 11:55-12:05 and 12:00-12:10, are late); append mode emits a window once
  // the batch's watermark passes its end (12:00-12:10 in batch 3, at 12:11).
  'windowed-word-count.mjs': (stdout) =>
    expect(stdout).toBe(
      lines(
        '== update mode ==',
        'batch 0 (watermark none yet, 2 input rows, 0 late rows dropped):',
        '  12:00-12:10 dog 1',
        '  12:00-12:10 owl 1',
        '  12:05-12:15 dog 1',
        '  12:05-12:15 owl 1',
        'batch 1 (watermark 11:58, 2 input rows, 0 late rows dropped):',
        '  12:00-12:10 cat 1',
        '  12:05-12:15 cat 1',
        '  12:05-12:15 dog 2',
        '  12:10-12:20 dog 1',
        'batch 2 (watermark 12:04, 4 input rows, 0 late rows dropped):',
        '  12:00-12:10 dog 2',
        '  12:05-12:15 dog 3',
        '  12:05-12:15 owl 2',
        '  12:10-12:20 cat 1',
        '  12:10-12:20 owl 1',
        '  12:15-12:25 cat 1',
        '  12:15-12:25 owl 1',
        '  12:20-12:30 owl 1',
        'batch 3 (watermark 12:11, 1 input row, 0 late rows dropped):',
        '  12:10-12:20 owl 2',
        '  12:15-12:25 owl 2',
        'batch 4 (watermark 12:11, 1 input row, 2 late rows dropped):',
        '  (no rows)',
        '',
        '== append mode ==',
        'batch 0 (watermark none yet, 2 input rows, 0 late rows dropped):',
        '  (no rows)',
        'batch 1 (watermark 11:58, 2 input rows, 0 late rows dropped):',
        '  (no rows)',
        'batch 2 (watermark 12:04, 4 input rows, 0 late rows dropped):',
        '  (no rows)',
        'batch 3 (watermark 12:11, 1 input row, 0 late rows dropped):',
        '  12:00-12:10 cat 1',
        '  12:00-12:10 dog 2',
        '  12:00-12:10 owl 1',
        'batch 4 (watermark 12:11, 1 input row, 2 late rows dropped):',
        '  (no rows)',
        '',
      ),
    ),

  // Clicks within an hour after their ad's impression: ad1, ad3, ad4 (its click a batch later) and
  // ad5; ad2's click is 85 minutes after it, ad7's click has no impression, ad6 has no click. The
  // watermark ends at min(15:30 − 2 h, 15:25 − 3 h) = 12:25, so the left outer join gives up on ad2
  // (10:05 ≤ 12:25 − 1 h) in the final no-data batch, while ad6 (15:30) may still get its click.
  'ad-monetization.mjs': (stdout) => {
    const header = 'impressionAdId impressionTime clickAdId clickTime';
    const matched = [
      'ad1            10:00          ad1       10:02',
      'ad3            10:10          ad3       10:40',
      'ad4            10:20          ad4       10:50',
      'ad5            15:00          ad5       15:20',
    ];
    expect(stdout).toBe(
      lines(
        '== inner join (3 batches, final watermark 12:25) ==',
        header,
        ...matched,
        '',
        '== left outer join (3 batches, final watermark 12:25) ==',
        header,
        matched[0]!,
        'ad2            10:05          null      null',
        ...matched.slice(1),
        '',
      ),
    );
  },

  // Parsed views per page (the junk line and the view without a page dropped): /docs ann 95, dee 88,
  // bob 130, dee 77; /home ann 120, bob 340, ann 101, cid 99; /pricing cid 410, fay 505; /blog once
  // (left out by HAVING).
  'sql-job.mjs': (stdout) =>
    expect(stdout).toBe(
      lines(
        'page report after 3 batches (13 input lines):',
        'page      views  visitors  slowest_ms  avg_ms',
        `/docs     4      3         130         ${(95 + 88 + 130 + 77) / 4}`,
        `/home     4      3         340         ${(120 + 340 + 101 + 99) / 4}`,
        `/pricing  2      2         505         ${(410 + 505) / 2}`,
      ),
    ),

  // Orders 1-6 less the malformed 4, amounts times 1.2 rounded to cents, a day partition each;
  // one Delta version per file, version 0 holding the first file's two orders.
  'files-to-delta.mjs': (stdout) => {
    const header = 'id  customer  amount_with_vat  ts                   day';
    const rows = [
      '1   ANN       15.00            2024-03-01 09:15:00  2024-03-01',
      '2   BOB       96.00            2024-03-01 17:40:00  2024-03-01',
      '3   ANN       8.70             2024-03-02 08:05:00  2024-03-02',
      '5   DEE       23.99            2024-03-02 21:30:00  2024-03-02',
      '6   BOB       50.40            2024-03-03 12:00:00  2024-03-03',
    ];
    expect(stdout).toBe(
      lines(
        'delta log: 3 commits (version 0, version 1, version 2)',
        'partitions: day=2024-03-01 day=2024-03-02 day=2024-03-03',
        '',
        'latest version: 5 rows',
        header,
        ...rows,
        '',
        'versionAsOf 0: 2 rows',
        header,
        ...rows.slice(0, 2),
      ),
    );
  },

  // Sessions with a 30-minute gap, timers at the last event + 30 min, watermark = max − 10 min:
  // alice and bob come back after the gap in batch 2 (their timers, 09:50 and 09:40, not yet due
  // at 09:30), carol's timer (10:10) fires at 10:35, erin's 09:00 is below the late-row watermark
  // (09:30), and the final no-data batch at 11:50 fires alice's (11:00) and bob's (11:15) timers;
  // dave's session (12:00) stays open.
  'session-tracker.mjs': (stdout) =>
    expect(stdout).toBe(
      lines(
        'batch 0 (watermark none yet, 4 events, 0 late, 0 timers fired):',
        '  (no session ended)',
        'batch 1 (watermark 09:02, 3 events, 0 late, 0 timers fired):',
        '  (no session ended)',
        'batch 2 (watermark 09:30, 2 events, 0 late, 0 timers fired):',
        '  alice 09:00-09:20 4 events (/home > /docs > /pricing > /signup) closed by gap',
        '  bob 09:02-09:10 2 events (/home > /blog) closed by gap',
        'batch 3 (watermark 10:35, 2 events, 1 late, 1 timer fired):',
        '  carol 09:40-09:40 1 event (/home) closed by timeout',
        'batch 4 (watermark 11:50, 0 events, 0 late, 2 timers fired):',
        '  alice 10:30-10:30 1 event (/home) closed by timeout',
        '  bob 10:45-10:45 1 event (/docs) closed by timeout',
      ),
    ),
};

const examples = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.mjs'))
  .sort();

describe('examples/', () => {
  it('has a check for every example, and an example for every check', () => {
    expect(examples).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(examples)('node examples/%s exits 0 by itself, cleans up, and prints what it computed', async (file) => {
    const check = EXPECTED[file];
    expect(check, `test/examples.test.ts has no expected output for examples/${file}`).toBeDefined();
    const run = await runExample(file);
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }, `stdout:\n${run.stdout}`).toEqual({ code: 0, signal: null, stderr: '' });
    expect(run.leftInTmp, 'files left in the temporary directory').toEqual([]);
    check!(run.stdout);
  });
});
