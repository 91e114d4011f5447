import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StatelessTask } from '@sluice/executor';
import { TaskScheduler, workerEntry } from './TaskScheduler.js';

const fixture = (name: string) => fileURLToPath(new URL(`../../../../test/fixtures/${name}`, import.meta.url));

function task(partition: number, runId = 'r'): StatelessTask {
  return {
    kind: 'stateless',
    queryId: 'q',
    runId,
    batchId: 0,
    partition,
    attempt: 0,
    input: { type: 'rows', data: new Uint8Array() },
    inputSchema: [],
    ops: [],
    output: { type: 'collect' },
  };
}

describe('TaskScheduler', () => {
  it('resolves the built worker entry of @sluice/executor', () => {
    expect(workerEntry()).toMatch(/executor[/\\]dist[/\\]task[/\\]entry\.cjs$/);
  });

  it('runs a stage across all slots and returns results in task order', async () => {
    const scheduler = new TaskScheduler(2, 1, fixture('echo-worker.mjs'));
    try {
      const results = await scheduler.runTasks([0, 1, 2, 3, 4, 5].map((p) => task(p)));
      expect(results.map((r) => r.numInputRows)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(new Set(results.map((r) => r.threadId)).size).toBe(2);
    } finally {
      await scheduler.close();
    }
  });

  it('fails loudly, not by hanging, when the worker entry cannot load', async () => {
    const scheduler = new TaskScheduler(1, 2, fixture('broken-worker.mjs'));
    try {
      await expect(scheduler.runTasks([task(0)])).rejects.toMatchObject({
        code: 'TASK_FAILED',
        message: expect.stringContaining('broken worker entry'),
      });
    } finally {
      await scheduler.close();
    }
  }, 15_000);

  it('fails loudly when the real entry cannot load the worker module behind it', async () => {
    // The built CommonJS entry, beside a worker module that throws when imported.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-entry-'));
    try {
      copyFileSync(workerEntry(), join(dir, 'entry.cjs'));
      writeFileSync(join(dir, 'worker.js'), "throw new Error('worker module cannot load');\n");
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
      const scheduler = new TaskScheduler(1, 2, join(dir, 'entry.cjs'));
      try {
        await expect(scheduler.runTasks([task(0)])).rejects.toMatchObject({
          code: 'TASK_FAILED',
          message: expect.stringContaining('worker module cannot load'),
        });
      } finally {
        await scheduler.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 15_000);

  describe('scheduler pools', () => {
    it('a freed slot goes to the task the arbiter picks (FIFO here: the first submitted), and the pools count their tasks', async () => {
      const scheduler = new TaskScheduler(1, 1, fixture('echo-worker.mjs'));
      try {
        const blocker = scheduler.runTasks([task(0)], undefined, 'a');
        const order: string[] = [];
        const queued = ['b1', 'a1', 'b2', 'a2'].map((id) => scheduler.runTasks([task(0, id)], undefined, id[0]).then(() => order.push(id)));
        expect(scheduler.poolMetrics().b).toMatchObject({ runningTasks: 0, waitingTasks: 2, weight: 1, minShare: 0, schedulingMode: 'FIFO' });
        expect(scheduler.poolMetrics().a).toMatchObject({ runningTasks: 1, waitingTasks: 2 });
        await blocker;
        await Promise.all(queued);
        expect(order).toEqual(['b1', 'a1', 'b2', 'a2']);
        // Idle pools that are not configured are not listed.
        expect(Object.keys(scheduler.poolMetrics())).toEqual(['default']);
      } finally {
        await scheduler.close();
      }
    });

    it('FAIR pools on 4 slots: every waiting task of both pools runs, each on its own slot, and the counts add up meanwhile', async () => {
      const pools = { a: { schedulingMode: 'FIFO' as const, weight: 1, minShare: 0 }, b: { schedulingMode: 'FIFO' as const, weight: 3, minShare: 0 } };
      const scheduler = new TaskScheduler(4, 1, fixture('echo-worker.mjs'), undefined, { mode: 'FAIR', pools });
      try {
        const blockers = scheduler.runTasks(
          [0, 1, 2, 3].map((i) => task(i, 'blockers')),
          undefined,
          'z',
        );
        const queued = ['a', 'b'].flatMap((pool) => Array.from({ length: 8 }, (_, i) => scheduler.runTasks([task(i, `run-${pool}`)], undefined, pool)));
        // Right after submission nothing has finished: the blockers hold every slot.
        const m = scheduler.poolMetrics();
        expect([m.z?.runningTasks, m.a?.waitingTasks, m.b?.waitingTasks, scheduler.busySlots]).toEqual([4, 8, 8, 4]);
        const threads = new Set((await blockers).map((r) => r.threadId));
        const results = (await Promise.all(queued)).flat();
        expect(threads.size).toBe(4);
        expect(results.map((r) => r.numInputRows).sort((x, y) => x - y)).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
        expect(scheduler.busySlots).toBe(0);
      } finally {
        await scheduler.close();
      }
    });
  });
});
