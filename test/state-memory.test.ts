/**
 * stateOperators[].memoryUsedBytes reports the bytes of the operator's state (LevelDB's estimate of
 * its files and memtables, and the worker's decoded cache), not what the state stores were
 * allotted: a few rows of state give a small number, and it grows with the state.
 */
import { describe, expect, it } from 'vitest';
import { withSession } from './helpers.js';

describe('progress memoryUsedBytes', () => {
  it('is small for a 3-row state and grows with the state', async () => {
    await withSession({ 'sluice.executor.cores': 1, 'sluice.sql.shuffle.partitions': 2 }, async (s) => {
      const input = s.memoryStream('visits', 'id STRING');
      const q = await s.readStream
        .format('memory')
        .load('visits')
        .groupBy('id')
        .count()
        .writeStream.format('memory')
        .queryName('visit_counts')
        .outputMode('complete')
        .start();
      try {
        input.addData([{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'a' }]);
        await q.processAllAvailable();
        const small = q.lastProgress!.stateOperators[0]!;
        expect(small.numRowsTotal).toBe(3);
        expect(small.memoryUsedBytes).toBeGreaterThan(0);
        // Three keys and their counts: kilobytes, not the hundreds of megabytes LevelDB is allotted.
        expect(small.memoryUsedBytes).toBeLessThan(1 << 20);

        input.addData(Array.from({ length: 20_000 }, (_, i) => ({ id: `visitor-${i}` })));
        await q.processAllAvailable();
        const big = q.lastProgress!.stateOperators[0]!;
        expect(big.numRowsTotal).toBe(20_003);
        expect(big.memoryUsedBytes).toBeGreaterThan(small.memoryUsedBytes + 20_000 * 10);
      } finally {
        await q.stop();
      }
    });
  });
});
