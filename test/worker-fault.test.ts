/**
 * The worker fault point `worker-after-state-commit` ends a worker thread after its state task
 * committed its shard and before it replied: the driver replaces the worker and retries the task
 * in the same run, whose new attempt rolls the shard back first. Every stateful operator kind gives
 * exactly the rows of a run without the fault, and the process lives on to finish the query.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLines, removeTempDirs, tempDir, writeInput } from './helpers.js';
import { committedRows, expectCompleted, runChild } from './killHarness.js';
// @ts-expect-error: a plain JavaScript fixture module without types
import { operatorQueries } from './fixtures/operator-kinds.mjs';

const CHILD = join(import.meta.dirname, 'fixtures', 'operator-kinds-child.mjs');
/** Every kind of the shared table of queries, one query each. */
const KINDS = Object.keys(operatorQueries);

afterAll(removeTempDirs);

/** Five files, one a batch: keys a-f over 0-70 s, duplicates, late rows, keys that come back. */
function writeRows(dir: string): void {
  const t = (s: number) => new Date(s * 1000).toISOString();
  const files = [
    [
      ['a', 1, 1],
      ['b', 2, 2],
      ['c', 3, 3],
      ['a', 1, 1],
      ['d', 4, 4],
    ],
    [
      ['a', 6, 5],
      ['b', 12, 6],
      ['e', 14, 7],
      ['c', 3, 3],
    ],
    [
      ['a', 25, 8],
      ['f', 26, 9],
      ['b', 2, 10],
      ['d', 28, 11],
    ],
    [
      ['e', 40, 12],
      ['a', 41, 13],
      ['f', 29, 14],
    ],
    [
      ['c', 70, 15],
      ['b', 71, 16],
    ],
  ] as const;
  files.forEach((rows, i) => {
    writeInput(dir, `part-${i}.json`, jsonLines(rows.map(([key, s, n]) => ({ key, eventTime: t(s), n }))), 1_700_000_000 + i);
  });
}

const sorted = (rows: Array<Record<string, unknown>>) => rows.map((r) => JSON.stringify(r)).sort();

describe('worker-after-state-commit: a worker ended after its state commit', () => {
  for (const kind of KINDS) {
    it(`${kind}: the task is retried in the same run and the output is exact`, async () => {
      const input = tempDir();
      writeRows(input);
      const clean = { out: tempDir(), ckpt: tempDir() };
      const faulted = { out: tempDir(), ckpt: tempDir() };

      const reference = await runChild(CHILD, [kind, input, clean.out, clean.ckpt]);
      expectCompleted(reference);
      const expected = committedRows(clean.out);
      expect(expected.length).toBeGreaterThan(0);

      // The third state commit of the run: past the first batch, so the shard has state to roll back.
      const run = await runChild(CHILD, [kind, input, faulted.out, faulted.ckpt], { fault: 'worker-after-state-commit:3' });
      expectCompleted(run);
      expect(run.stderr).toMatch(/SLUICE_FAULT worker-after-state-commit: ended worker thread \d+/);
      expect(run.stderr.match(/SLUICE_FAULT/g)).toHaveLength(1);
      expect(sorted(committedRows(faulted.out))).toEqual(sorted(expected));
    });
  }
});
