import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StatelessTask } from '@sluice/executor';
import { TaskScheduler, workerEntry } from './TaskScheduler.js';

const fixture = (name: string) => fileURLToPath(new URL(`../../../../test/fixtures/${name}`, import.meta.url));

function task(partition: number): StatelessTask {
  return {
    kind: 'stateless',
    queryId: 'q',
    runId: 'r',
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
      const results = await scheduler.runTasks([0, 1, 2, 3, 4, 5].map(task));
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
});
