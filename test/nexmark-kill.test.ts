/**
 * The nexmark source through SIGKILL: a windowed count of its bids in a child process
 * (fixtures/nexmark-kill-child.mjs), killed at random moments and restarted on its checkpoint.
 * Each batch replays the same events (they are a function of seed and event number, and the start
 * time is the first run's, kept in the checkpoint), so the sink must end with exactly the windows
 * the generator's events make, every one of them (the bounded stream's end closes the last).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { NexmarkGenerator } from '@sluice/executor';
import { removeTempDirs, tempDir } from './helpers.js';
import { committedRows, killScenario, type ChildDirs } from './killHarness.js';

const CHILD = fileURLToPath(new URL('./fixtures/nexmark-kill-child.mjs', import.meta.url));

afterAll(removeTempDirs);

/** The windows of the first 200,000 events of seed 3 from `start`: [start ms, count, sum, max], sorted. */
function expectedWindows(start: number): string[] {
  const windows = new Map<number, [number, number, number]>();
  const gen = new NexmarkGenerator({ table: 'bid', seed: 3, eventsPerSecond: 1000, startTimestamp: start });
  for (const b of gen.rows(0, 200_000)) {
    const w = Math.floor((b.dateTime as number) / 10_000) * 10_000;
    const [n, total, top] = windows.get(w) ?? [0, 0, 0];
    windows.set(w, [n + 1, total + (b.price as number), Math.max(top, b.price as number)]);
  }
  return [...windows].map(([w, v]) => JSON.stringify([w, ...v])).sort();
}

const windowsOf = (out: string): string[] =>
  committedRows(out)
    .map((r) => JSON.stringify([Date.parse((r.window as { start: string }).start), r.n, r.total, r.top]))
    .sort();

/** The start time the first run kept (the source's metadata file: a version line, then JSON). */
function keptStart(ckpt: string): number {
  const text = readFileSync(join(ckpt, 'sources', '0', 'metadata'), 'utf8');
  return (JSON.parse(text.slice(text.indexOf('\n') + 1)) as { startTimestamp: number }).startTimestamp;
}

const dirs = (): ChildDirs => ({ input: tempDir('sluice-nexmark-unused-'), out: tempDir('sluice-nexmark-out-'), ckpt: tempDir('sluice-nexmark-ckpt-') });

describe('the nexmark source through SIGKILL', () => {
  it('8 kills at random moments, then a run to the end: every window exactly once, as the events make them', async () => {
    await killScenario({
      child: CHILD,
      dirs: dirs(),
      kills: { seed: 0x4e58, count: 8, startupShare: 0.2, batchPhases: 4 },
      expectOutput: (d) => {
        const expected = expectedWindows(keptStart(d.ckpt));
        expect(expected.length).toBeGreaterThanOrEqual(20);
        expect(windowsOf(d.out)).toEqual(expected);
      },
      inspect: (_run, state) => ({ manifests: state.manifests.length }),
      atLeastMidRun: 2,
    });
  });
});
