/**
 * The console sink prints what Spark's console sink prints: a "Batch: N" banner, then the batch as
 * Dataset.show(numRows, truncate) shows it, windows and timestamps in UTC, nulls as NULL.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { col, window } from '@sluice/driver';
import { useSession } from './helpers.js';

const session = useSession({ 'sluice.executor.cores': 1, 'sluice.sql.shuffle.partitions': 2 });
afterEach(() => {
  vi.restoreAllMocks();
});

/** Everything written to stdout while `fn` runs. */
async function stdoutOf(fn: () => Promise<void>): Promise<string> {
  const written: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && (written.length > 0 || chunk.startsWith('---'))) {
      written.push(chunk);
      return true;
    }
    return original(chunk, ...(rest as []));
  }) as typeof process.stdout.write);
  await fn();
  return written.join('');
}

const lines = (...l: string[]) => l.map((x) => `${x}\n`).join('');
const BAR = '-------------------------------------------';

describe('console sink', () => {
  it('prints a windowed count as Spark does: banner, table, {start, end} windows in UTC', async () => {
    const input = session().memoryStream('clicks', 'ts TIMESTAMP, url STRING');
    const q = await session()
      .readStream.format('memory')
      .load('clicks')
      .groupBy(window(col('ts'), '30 minutes'), 'url')
      .count()
      .writeStream.format('console')
      .outputMode('complete')
      .start();
    try {
      input.addData([
        { ts: new Date('2024-06-01T12:02:00Z'), url: '/a' },
        { ts: new Date('2024-06-01T12:10:00Z'), url: '/a' },
        { ts: new Date('2024-06-01T12:40:00Z'), url: null },
      ]);
      const text = await stdoutOf(() => q.processAllAvailable());
      const [first, ...rest] = text.split('\n').slice(3, -3);
      // Rows come in no particular order, as in Spark; the table around them does not.
      expect(text.split('\n').slice(0, 3).join('\n')).toBe(`${BAR}\nBatch: 0\n${BAR}`);
      expect(first).toBe('+--------------------+----+-----+');
      expect(rest.slice(0, 2)).toEqual(['|              window| url|count|', '+--------------------+----+-----+']);
      expect(rest.slice(2).sort()).toEqual(['|{2024-06-01 12:00...|  /a|    2|', '|{2024-06-01 12:30...|NULL|    1|']);
      expect(text.endsWith('+--------------------+----+-----+\n\n')).toBe(true);
    } finally {
      await q.stop();
    }
  });

  it("with truncate false shows whole cells left-aligned, and numRows limits the rows with Spark's footer", async () => {
    const input = session().memoryStream('events', 'ts TIMESTAMP, id LONG');
    const q = await session().readStream.format('memory').load('events').writeStream.format('console').option('truncate', false).option('numRows', 2).start();
    try {
      input.addData([
        { ts: new Date('2024-06-01T12:02:00Z'), id: 1 },
        { ts: new Date('2024-06-01T12:02:00.250Z'), id: 2 },
        { ts: null, id: 3 },
      ]);
      const text = await stdoutOf(() => q.processAllAvailable());
      expect(text).toBe(
        lines(
          BAR,
          'Batch: 0',
          BAR,
          '+----------------------+---+',
          '|ts                    |id |',
          '+----------------------+---+',
          '|2024-06-01 12:02:00   |1  |',
          '|2024-06-01 12:02:00.25|2  |',
          '+----------------------+---+',
          'only showing top 2 rows',
          '',
        ),
      );
    } finally {
      await q.stop();
    }
  });
});
