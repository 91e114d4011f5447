/**
 * Scheduler pools from the API: setLocalProperty (and sparkContext's), the writer option, strict
 * pool settings, and what session.metrics() shows. The slot arbitration itself (FIFO, FAIR by
 * weight and minShare) is tested in packages/driver/src/scheduler/TaskScheduler.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Session } from '@sluice/driver';
import { waitUntil } from './helpers.js';

async function withSession<T>(conf: Record<string, unknown>, fn: (s: Session) => Promise<T>): Promise<T> {
  const s = await Session.create({ conf: { 'sluice.executor.cores': 2, ...conf } });
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const rate = (s: Session) => s.readStream.format('rate').option('rowsPerSecond', 10).load();

describe('scheduler pools', () => {
  it("puts queries started after setLocalProperty in that pool, as the Databricks snippet does; the option names one query's pool; null clears it", async () => {
    const pools = { pool1: { schedulingMode: 'FAIR', weight: 2, minShare: 1 } };
    await withSession({ 'spark.scheduler.mode': 'FAIR', 'spark.scheduler.pools': JSON.stringify(pools) }, async (s) => {
      s.sparkContext.setLocalProperty('spark.scheduler.pool', 'pool1');
      const q1 = await rate(s).writeStream.format('memory').queryName('query1').start();
      s.sparkContext.setLocalProperty('spark.scheduler.pool', 'pool2');
      expect(s.getLocalProperty('sluice.scheduler.pool')).toBe('pool2');
      const q2 = await rate(s).writeStream.format('memory').queryName('query2').start();
      const q3 = await rate(s).writeStream.format('memory').queryName('query3').start(); // still pool2
      const q4 = await rate(s).writeStream.format('memory').queryName('query4').option('schedulerPool', 'own').start();
      s.setLocalProperty('sluice.scheduler.pool', null);
      const q5 = await rate(s).writeStream.format('memory').queryName('query5').start();
      try {
        expect([q1, q2, q3, q4, q5].map((q) => q.schedulerPool)).toEqual(['pool1', 'pool2', 'pool2', 'own', 'default']);
        const m = s.metrics().scheduler;
        expect(m.mode).toBe('FAIR');
        expect(m.queries.map((q) => [q.name, q.pool])).toEqual([
          ['query1', 'pool1'],
          ['query2', 'pool2'],
          ['query3', 'pool2'],
          ['query4', 'own'],
          ['query5', 'default'],
        ]);
        expect(m.pools.pool1).toMatchObject({ schedulingMode: 'FAIR', weight: 2, minShare: 1 });
        expect(m.pools.default).toMatchObject({ schedulingMode: 'FIFO', weight: 1, minShare: 0 });
        // Each batch's progress names the pool its tasks ran in.
        await waitUntil(() => [q1, q4].every((q) => q.lastProgress !== null), 'a progress event of query1 and query4');
        expect([q1, q4].map((q) => q.lastProgress?.schedulerPool)).toEqual(['pool1', 'own']);
      } finally {
        for (const q of [q1, q2, q3, q4, q5]) await q.stop();
      }
    });
  });

  it('refuses pool settings that are not { name: { schedulingMode, weight, minShare } }, naming the key', async () => {
    for (const pools of [
      '[1,2]',
      '{"p": 3}',
      '{"p": {"weight": -1}}',
      '{"p": {"schedulingMode": "LIFO"}}',
      '{"p": {"share": 1}}',
      '{"p": {"minShare": 1.5}}',
    ]) {
      await expect(Session.create({ conf: { 'sluice.scheduler.pools': pools } })).rejects.toMatchObject({
        code: 'INVALID_CONF',
        option: 'sluice.scheduler.pools',
      });
    }
    await withSession({}, async (s) => {
      expect(() => s.setLocalProperty('spark.scheduler.pool', '')).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
      await expect(rate(s).writeStream.format('memory').queryName('bad_pool').option('schedulerPool', '').start()).rejects.toMatchObject({
        code: 'INVALID_OPTION',
        option: 'schedulerPool',
      });
    });
  });
});
