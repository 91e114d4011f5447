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
    /** Occupies every slot with blockers of pool 'z', queues `waiting`, and gives the running tasks per pool once the blockers are done. */
    async function afterBlockers(scheduler: TaskScheduler, slots: number, waiting: Array<[pool: string, n: number]>): Promise<Record<string, number>> {
      const blockers = scheduler.runTasks(Array.from({ length: slots }, (_, i) => task(i, 'blockers')), undefined, 'z');
      const queued = waiting.flatMap(([pool, n]) => Array.from({ length: n }, (_, i) => scheduler.runTasks([task(i, `run-${pool}`)], undefined, pool)));
      await blockers;
      const m = scheduler.poolMetrics();
      const running = Object.fromEntries(Object.entries(m).map(([name, p]) => [name, p.runningTasks]));
      await Promise.all(queued);
      return running;
    }

    it('FIFO: a freed slot goes to the task submitted first, whatever its pool', async () => {
      const scheduler = new TaskScheduler(1, 1, fixture('echo-worker.mjs'));
      try {
        const blocker = scheduler.runTasks([task(0)], undefined, 'a');
        const order: string[] = [];
        const queued = ['b1', 'a1', 'b2', 'a2'].map((id) => scheduler.runTasks([task(0, id)], undefined, id[0]).then(() => order.push(id)));
        expect(scheduler.poolMetrics()['b']).toMatchObject({ runningTasks: 0, waitingTasks: 2, weight: 1, minShare: 0, schedulingMode: 'FIFO' });
        expect(scheduler.poolMetrics()['a']).toMatchObject({ runningTasks: 1, waitingTasks: 2 });
        await blocker;
        await Promise.all(queued);
        expect(order).toEqual(['b1', 'a1', 'b2', 'a2']);
        // Idle pools that are not configured are not listed.
        expect(Object.keys(scheduler.poolMetrics())).toEqual(['default']);
      } finally {
        await scheduler.close();
      }
    });

    const fair = (a: [weight: number, minShare: number], b: [weight: number, minShare: number]) => ({
      a: { schedulingMode: 'FIFO' as const, weight: a[0], minShare: a[1] },
      b: { schedulingMode: 'FIFO' as const, weight: b[0], minShare: b[1] },
    });
    const fairCases: Array<[what: string, pools: ReturnType<typeof fair>, submitted: Array<[string, number]>, running: Record<string, number>]> = [
      // a was submitted first: FIFO would give it every freed slot.
      ['FAIR: slots are shared in proportion to weight', fair([1, 0], [3, 0]), [['a', 8], ['b', 8]], { a: 1, b: 3 }],
      // b, with ten times the weight and submitted first, still leaves a its two slots.
      ['FAIR: a pool below its minShare is served first', fair([1, 2], [10, 0]), [['b', 8], ['a', 8]], { a: 2, b: 2 }],
    ];
    for (const [what, pools, submitted, running] of fairCases) {
      it(what, async () => {
        const scheduler = new TaskScheduler(4, 1, fixture('echo-worker.mjs'), undefined, { mode: 'FAIR', pools });
        try {
          expect(await afterBlockers(scheduler, 4, submitted)).toMatchObject(running);
        } finally {
          await scheduler.close();
        }
      });
    }

    it('FAIR: pools whose shares tie take turns by their longest-waiting task, so a pool named last is not starved', async () => {
      const scheduler = new TaskScheduler(1, 1, fixture('echo-worker.mjs'), undefined, { mode: 'FAIR', pools: {} });
      const done: string[] = [];
      // Pools a and b each submit their next task as soon as the previous one is done, 10 times.
      const loop = async (pool: string) => {
        for (let i = 0; i < 10; i++) {
          await scheduler.runTasks([task(i, `run-${pool}`)], undefined, pool);
          done.push(pool);
        }
      };
      try {
        const loops = [loop('a'), loop('b')];
        await scheduler.runTasks([task(0, 'run-z')], undefined, 'z');
        done.push('z');
        await Promise.all(loops);
        // z waited behind at most one task of each (by name it would wait for all 20).
        expect(done.indexOf('z')).toBeLessThanOrEqual(2);
      } finally {
        await scheduler.close();
      }
    });

    it('FIFO across pools gives the slots to the first submitted', async () => {
      const scheduler = new TaskScheduler(4, 1, fixture('echo-worker.mjs'));
      try {
        expect(await afterBlockers(scheduler, 4, [['a', 8], ['b', 8]])).toMatchObject({ a: 4 });
      } finally {
        await scheduler.close();
      }
    });
  });
});
