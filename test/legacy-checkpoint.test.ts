/**
 * Checkpoints written by an earlier Sluice (test/fixtures/legacy-checkpoints, made by its make.mjs:
 * offsets entries without a batch kind, the state layout pinned in `metadata`) still open, replay
 * their unfinished batch and resume with every row exactly once.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Session } from '@sluice/driver';
// @ts-expect-error: a plain JavaScript fixture module without types
import { CONF, startQuery } from './fixtures/legacy-checkpoints/query.mjs';
import { readSinkJson, removeTempDirs, tempDir } from './helpers.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/legacy-checkpoints/', import.meta.url));
const MIN = 60_000;

afterAll(removeTempDirs);

/** A fresh copy of a fixture, so the test never writes into the repository. */
function copyOf(kind: 'stateless' | 'stateful'): string {
  const root = tempDir(`sluice-legacy-${kind}-`);
  cpSync(join(FIXTURES, kind), root, { recursive: true });
  return root;
}

function lastLine(path: string): Record<string, unknown> {
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  return JSON.parse(lines[lines.length - 1] as string) as Record<string, unknown>;
}

async function resume(kind: 'stateless' | 'stateful', root: string): Promise<number[]> {
  const session = await Session.create({ conf: CONF });
  try {
    const query = await startQuery(session, kind, root);
    await query.awaitTermination();
    return query.recentProgress.map((p: { batchId: number }) => p.batchId);
  } finally {
    await session.close();
  }
}

describe('a checkpoint of an earlier Sluice', () => {
  it('stateless: the unfinished batch 3 replays once, then batch 4 runs; every value once', async () => {
    const root = copyOf('stateless');
    const batches = await resume('stateless', root);
    expect(batches).toEqual([3, 4]);
    const values = readSinkJson(join(root, 'out')).map((r) => r['value'] as number);
    expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, v) => v));
  });

  it('stateful: the state written then is read back; every closed window is emitted once with its count', async () => {
    const root = copyOf('stateful');
    const before = readSinkJson(join(root, 'out'));
    expect(before).toHaveLength(3); // the window of minute 0, emitted before the kill
    const batches = await resume('stateful', root);
    expect(batches[0]).toBe(4); // the unfinished batch replays first
    // Every batch holds 6 rows of one minute, 2 per id, so each closed window counts 2 per id.
    const rows = readSinkJson(join(root, 'out'));
    const watermark = (lastLine(join(root, 'checkpoint', 'commits', String(batches.at(-1)))) as { nextBatchWatermarkMs: number })
      .nextBatchWatermarkMs;
    const closedMinutes = Math.floor(watermark / MIN);
    expect(closedMinutes).toBeGreaterThanOrEqual(3);
    const expected = [];
    for (let m = 0; m < closedMinutes; m++) {
      for (const id of [0, 1, 2]) {
        expected.push({ window: { start: new Date(m * MIN).toISOString(), end: new Date((m + 1) * MIN).toISOString() }, id, count: 2 });
      }
    }
    const key = (r: unknown) => JSON.stringify(r);
    expect(rows.map(key).sort()).toEqual(expected.map(key).sort());
  });
});
