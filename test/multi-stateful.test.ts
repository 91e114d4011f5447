/**
 * Several stateful operators in one query (the README's "Several stateful operators"): the
 * chained aggregation as Spark's guide writes it, checked against a model of its semantics, across
 * SIGKILL at fault points and a restart; each operator's state under its own id and layout file,
 * and one progress entry per operator, nearest the sink first. Spark's own scenarios are in
 * spark-multi-stateful.test.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { window, window_time } from '@sluice/driver';
import { jsonLines, readDoc, readSinkJson, removeTempDirs, tempDir, withSession, writeInput } from './helpers.js';
import { committedRows, expectCompleted, expectKilled, runChild as runKillChild, type ChildDirs } from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/chained-child.mjs', import.meta.url));

afterAll(removeTempDirs);

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

/** Files of words in time order: file f covers minutes [f × 20, f × 20 + 20) (3 hours in all), then one far later. */
function inputFiles(): Array<Array<{ word: string; t: number }>> {
  const files: Array<Array<{ word: string; t: number }>> = [];
  for (let f = 0; f < 9; f++) {
    const rows: Array<{ word: string; t: number }> = [];
    for (let i = 0; i < 12; i++) rows.push({ word: ['a', 'b', 'c'][(f + i) % 3] as string, t: T0 + (f * 20 + ((i * 7) % 20)) * MIN });
    files.push(rows);
  }
  files.push([{ word: 'z', t: T0 + 24 * 60 * MIN }]);
  return files;
}

const FILES = inputFiles();

/** The model: per hour, the number of (10-minute window, word) groups that had rows; every hour closed but the last file's. */
function expectedHours(): Array<{ start: string; count: number }> {
  const groups = new Set<string>();
  for (const { word, t } of FILES.slice(0, -1).flat()) groups.add(`${Math.floor(t / (10 * MIN))}|${word}`);
  const hours = new Map<number, number>();
  for (const g of groups) {
    const tenMinutes = Number(g.split('|')[0]);
    const hour = Math.floor((tenMinutes * 10 * MIN) / (60 * MIN)) * 60 * MIN;
    hours.set(hour, (hours.get(hour) ?? 0) + 1);
  }
  return [...hours].sort((a, b) => a[0] - b[0]).map(([h, count]) => ({ start: iso(h), count }));
}

const hoursOf = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => ({ start: (r['window'] as { start: string }).start, count: Number(r['count']) })).sort((a, b) => a.start.localeCompare(b.start));

function scenarioDirs(): ChildDirs {
  const input = tempDir('sluice-chain-in-');
  FILES.forEach((rows, i) => writeInput(input, `f${String(i).padStart(3, '0')}.json`, jsonLines(rows.map((r) => ({ word: r.word, timestamp: iso(r.t) }))), 1_700_000_000 + i));
  return { input, out: tempDir('sluice-chain-out-'), ckpt: tempDir('sluice-chain-ckpt-') };
}

describe('an aggregation after an aggregation', () => {
  it("runs Spark's snippet as written: counts per 10 minutes and word, then those per hour, each hour once it closes", async () => {
    const dirs = scenarioDirs();
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (s) => {
      const words = s.readStream.format('json').schema('word STRING, timestamp TIMESTAMP').option('maxFilesPerTrigger', 1).load(dirs.input);
      const q = await words
        .withWatermark('timestamp', '10 minutes')
        .groupBy(window('timestamp', '10 minutes'), 'word')
        .count()
        .groupBy(window(window_time('window'), '1 hour'))
        .count()
        .writeStream.format('json')
        .option('checkpointLocation', dirs.ckpt)
        .start(dirs.out);
      try {
        await q.processAllAvailable();
        expect(hoursOf(readSinkJson(dirs.out))).toEqual(expectedHours());
        // One entry per operator, the second aggregation's (nearest the sink) first.
        const ops = q.lastProgress?.stateOperators ?? [];
        expect(ops.map((o) => o.operatorName)).toEqual(['stateStoreSave', 'stateStoreSave']);
        // Left in state: the last file's 10-minute group (first operator); nothing in the second.
        expect(ops.map((o) => o.numRowsTotal)).toEqual([0, 1]);
      } finally {
        await q.stop();
      }
    });
    // Each operator's state under its own id, with its own layout file.
    for (const id of [0, 1]) {
      expect(readDoc(join(dirs.ckpt, 'state', String(id), 'layout'))).toEqual(expect.objectContaining({ operator: 'stateStoreSave', partitions: 4 }));
      expect(existsSync(join(dirs.ckpt, 'state', String(id), 'shard-0'))).toBe(true);
    }
  });

  it('refuses update and complete output modes, as Spark does', async () => {
    await withSession({ 'sluice.executor.cores': 1 }, async (s) => {
      s.memoryStream('chain_modes', 'word STRING, timestamp TIMESTAMP');
      const df = s.readStream.format('memory').load('chain_modes').withWatermark('timestamp', '1 minute')
        .groupBy(window('timestamp', '1 minute'), 'word').count()
        .groupBy(window(window_time('window'), '1 hour')).count();
      for (const mode of ['update', 'complete']) {
        await expect(df.writeStream.format('memory').queryName(`chain_${mode}`).outputMode(mode).start()).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE' });
      }
    });
  });
});

describe('through SIGKILL at fault points', () => {
  it.each(['after-state-commit:3', 'after-state-commit:6', 'before-commit-log:4'])('dies at %s, and a restart gives every hour once', async (point) => {
    const dirs = scenarioDirs();
    expectKilled(await runKillChild(CHILD, dirs, { fault: point }), `at ${point}`);
    expectCompleted(await runKillChild(CHILD, dirs));
    expect(hoursOf(committedRows(dirs.out))).toEqual(expectedHours());
  });
});
