/**
 * Which phases of a batch its progress times, seen through a clock that ticks one millisecond at
 * every reading: a phase that is timed reports at least 1, one that is not would report 0.
 */
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
      const phases = d['latestOffset']! + d['getBatch']! + d['queryPlanning']! + d['addBatch']! + d['walCommit']! + d['commitOffsets']!;
      expect(d['triggerExecution']).toBeGreaterThan(phases);
    } finally {
      await session.close();
    }
  });
});
