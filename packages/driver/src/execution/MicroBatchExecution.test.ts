/**
 * Which phases of a batch its progress times, seen through a clock that ticks one millisecond at
 * every reading: a phase that is timed reports at least 1, one that is not would report 0.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Session } from '../api/Session.js';
import { clock } from './clock.js';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe('progress durations', () => {
  it('time every phase of a batch, queryPlanning included, within triggerExecution', async () => {
    let t = 0;
    clock.now = () => ++t;
    const session = await Session.create({ conf: { 'sluice.executor.cores': 1 } });
    try {
      session.memoryStream('timed', 'v LONG').addData([{ v: 1 }, { v: 2 }]);
      const q = await session.readStream.format('memory').load('timed').writeStream.format('memory').queryName('timed_out').start();
      await q.processAllAvailable();
      await q.stop();
      const d = q.lastProgress?.durationMs as Record<string, number>;
      for (const phase of ['latestOffset', 'getBatch', 'queryPlanning', 'addBatch', 'walCommit', 'commitOffsets']) {
        expect(d[phase], phase).toBeGreaterThanOrEqual(1);
      }
      const phases = d.latestOffset! + d.getBatch! + d.queryPlanning! + d.addBatch! + d.walCommit! + d.commitOffsets!;
      expect(d.triggerExecution).toBeGreaterThan(phases);
    } finally {
      await session.close();
    }
  });

  it('time a REPARTITION control batch, reported in the next data batch only', async () => {
    let t = 0;
    clock.now = () => ++t;
    const ckpt = mkdtempSync(join(tmpdir(), 'sluice-control-timed-'));
    try {
      const run = async (partitions: number) => {
        const session = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.sql.streaming.stateStore.partitions': partitions } });
        try {
          // A memory stream starts over in each session: one more batch than the checkpoint read.
          const stream = session.memoryStream('counted', 'k LONG');
          for (let i = 0; i <= 4 - partitions; i++) stream.addData([{ k: i }]);
          const q = await session.readStream
            .format('memory')
            .load('counted')
            .groupBy('k')
            .count()
            .writeStream.format('memory')
            .queryName('counted_out')
            .outputMode('update')
            .option('checkpointLocation', ckpt)
            .start();
          await q.processAllAvailable();
          await q.stop();
          return q.recentProgress;
        } finally {
          await session.close();
        }
      };
      await run(4);
      const [first, ...rest] = await run(3);
      expect(first?.durationMs['controlBatch.REPARTITION']).toBeGreaterThanOrEqual(1);
      expect(rest.every((p) => !('controlBatch.REPARTITION' in p.durationMs))).toBe(true);
    } finally {
      rmSync(ckpt, { recursive: true, force: true });
    }
  });
});
