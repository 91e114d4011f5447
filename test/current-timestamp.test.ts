/**
 * current_timestamp() is the batch's timestamp, as in Spark: one value for every row of a batch,
 * the value its offsets entry records, and the same value when a batch is replayed after a
 * SIGKILL (test/fixtures/current-timestamp-child.mjs dies by SLUICE_FAULT after writing the
 * offsets of its third batch, and a restart replays that batch).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLines, removeTempDirs, tempDir, writeInput } from './helpers.js';
import { committedRows, expectCompleted, expectKilled, logIds, runChild } from './killHarness.js';

const CHILD = new URL('./fixtures/current-timestamp-child.mjs', import.meta.url).pathname;
afterAll(() => removeTempDirs());

/** batchTimestampMs of each offsets entry, by batch id. */
function batchTimestamps(ckpt: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const id of logIds(join(ckpt, 'offsets'))) {
    const m = /"batchTimestampMs":(\d+)/.exec(readFileSync(join(ckpt, 'offsets', String(id)), 'utf8'));
    if (m === null) throw new Error(`offsets/${id} has no batchTimestampMs`);
    out.set(id, Number(m[1]));
  }
  return out;
}

describe('current_timestamp()', () => {
  it('is the batch timestamp of the offsets log, one per batch, and a batch replayed after SIGKILL keeps its own', async () => {
    const dirs = { input: tempDir(), out: tempDir(), ckpt: tempDir() };
    const base = Math.floor(Date.now() / 1000) - 1000;
    for (let f = 0; f < 8; f++)
      writeInput(
        dirs.input,
        `f${f}.json`,
        jsonLines([
          { id: `r${f}a`, v: f },
          { id: `r${f}b`, v: f },
        ]),
        base + f,
      );

    const crashed = await runChild(CHILD, dirs, { fault: 'after-offsets-write:3' });
    expectKilled(crashed, 'at after-offsets-write:3');
    const planned = batchTimestamps(dirs.ckpt);
    expect([...planned.keys()]).toEqual([0, 1, 2]);
    // The restart comes later than batch 2 was planned, so a fresh clock would differ from it.
    await new Promise((r) => setTimeout(r, 20));
    expectCompleted(await runChild(CHILD, dirs));

    const stamps = batchTimestamps(dirs.ckpt);
    expect([...stamps.keys()]).toEqual([0, 1, 2, 3]);
    expect(stamps.get(2)).toBe(planned.get(2));
    const rows = committedRows(dirs.out);
    expect(rows).toHaveLength(16);
    // Two files a batch: each batch's four rows share its timestamp, and no other value appears.
    const byStamp = new Map<number, number>();
    for (const r of rows) {
      const at = Date.parse(r.at as string);
      byStamp.set(at, (byStamp.get(at) ?? 0) + 1);
      expect(r.day).toBe(new Date(at).toISOString().slice(0, 10));
      expect(r.same).toBe(true);
    }
    expect([...byStamp.keys()].sort()).toEqual([...stamps.values()].sort());
    expect([...byStamp.values()]).toEqual([4, 4, 4, 4]);
  });
});
