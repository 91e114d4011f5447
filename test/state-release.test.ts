/**
 * A stopped query that cannot close its state shards says so with a warning of its own code, and
 * the next start on that checkpoint says which shards were left open and why, instead of blaming
 * another process for the lock.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { col, Session, udf, window } from '@sluice/driver';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const unclosable = new URL('./fixtures/unclosable-state.mjs', import.meta.url);

describe('a failed close of state shards', () => {
  it('warns with SLUICE_STATE_RELEASE_FAILED, and the next start names what was left open', async () => {
    // One slot: the worker that loads the udf (and so cannot close shards) also hosts the shards.
    const session = await Session.create({ conf: { 'sluice.executor.cores': 1, 'sluice.sql.shuffle.partitions': 2 } });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const ckpt = tempDir();
      const stream = session.memoryStream('unclosable', 'id STRING, ts TIMESTAMP');
      const same = udf(unclosable, 'same', 'string');
      const start = () =>
        session.readStream
          .format('memory')
          .load('unclosable')
          .withWatermark('ts', '1 minute')
          .groupBy(window('ts', '1 minute'), same(col('id')).alias('id'))
          .count()
          .writeStream.format('memory')
          .queryName('unclosable_out')
          .outputMode('update')
          .option('checkpointLocation', ckpt)
          .start();
      stream.addData([{ id: 'a', ts: 0 }]);
      const first = await start();
      await first.processAllAvailable();
      await first.stop();
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      const warning = warnings.find((w) => (w as { code?: string }).code === 'SLUICE_STATE_RELEASE_FAILED');
      expect(warning?.message).toMatch(/could not close its state shards: .*shard-0: close failed: simulated I\/O error/);

      const second = await start();
      stream.addData([{ id: 'b', ts: 1000 }]);
      await expect(second.awaitTermination(30_000)).rejects.toMatchObject({
        code: 'STATE_STORE_LOCKED',
        message: expect.stringMatching(
          /query unclosable_out left state shards open when it stopped at .*close failed: simulated I\/O error.*restart the process/,
        ),
      });
    } finally {
      process.off('warning', onWarning);
      await session.close();
    }
  });
});
