/**
 * Prometheus metrics: after N batches the scrape's counters, histogram and gauges agree with the
 * query's own progress events, and the session's gauges with session.metrics().
 */
import { describe, expect, it } from 'vitest';
import { col, window, window_time } from '@sluice/driver';
import { withSession } from './helpers.js';

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('prometheus metrics', () => {
  it('counts batches and rows, times batches, and shows state, watermark and the session as progress and metrics() do', async () => {
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (s) => {
      const input = s.memoryStream('events', 'id STRING, t TIMESTAMP');
      const q = await s.readStream
        .format('memory')
        .load('events')
        .withWatermark('t', '10 seconds')
        .groupBy(window(col('t'), '10 seconds'), 'id')
        .count()
        .writeStream.format('memory')
        .queryName('windows')
        .outputMode('update')
        .start();
      try {
        for (let b = 0; b < 3; b++) {
          input.addData(Array.from({ length: 5 + b }, (_, i) => ({ id: `k${i % 3}`, t: new Date((b * 20 + i) * 1000) })));
          await q.processAllAvailable();
        }
        const progress = q.recentProgress;
        const last = progress.at(-1)!;
        const m = samples(await s.prometheusMetrics());
        const l = `query_name="windows",query_id="${q.id}"`;
        expect(m.get(`sluice_query_batches_total{${l}}`)).toBe(progress.length);
        expect(m.get(`sluice_query_input_rows_total{${l}}`)).toBe(progress.reduce((n, p) => n + p.numInputRows, 0));
        expect(m.get(`sluice_query_batch_duration_seconds_count{${l}}`)).toBe(progress.length);
        expect(m.get(`sluice_query_batch_duration_seconds_sum{${l}}`)).toBeCloseTo(progress.reduce((n, p) => n + p.batchDuration, 0) / 1000, 6);
        expect(last.stateOperators).toHaveLength(1);
        expect(m.get(`sluice_query_state_rows{${l}}`)).toBe(last.stateOperators[0]?.numRowsTotal);
        expect(m.get(`sluice_query_state_memory_bytes{${l}}`)).toBe(last.stateOperators[0]?.memoryUsedBytes);
        expect(m.get(`sluice_query_watermark_seconds{${l}}`)).toBe(Date.parse(last.eventTime.watermark as string) / 1000);
        expect(m.get(`sluice_query_processed_rows_per_second{${l}}`)).toBeCloseTo(last.processedRowsPerSecond, 6);
        expect(m.get(`sluice_query_input_rows_per_second{${l}}`)).toBeCloseTo(last.inputRowsPerSecond, 6);
        expect(m.get('sluice_executor_slots')).toBe(2);
        expect(m.get('sluice_executor_slots_busy')).toBe(0);
        expect(m.get('sluice_listener_bus_queue_size')).toBe(0);
        const pools = s.metrics().scheduler.pools;
        expect(m.get('sluice_scheduler_pool_running_tasks{pool="default"}')).toBe(pools.default?.runningTasks);
        expect(m.get('sluice_scheduler_pool_waiting_tasks{pool="default"}')).toBe(pools.default?.waitingTasks);
        expect(m.get('sluice_listener_bus_dropped_events{kind="onQueryProgress"}')).toBe(s.metrics().listenerBus.numDroppedEventsByKind.onQueryProgress);
      } finally {
        await q.stop();
      }
    });
  });

  it("shows a query's state as every stateful operator's together", async () => {
    await withSession({ 'sluice.executor.cores': 2, 'sluice.sql.shuffle.partitions': 4 }, async (s) => {
      const input = s.memoryStream('chain_events', 'id STRING, t TIMESTAMP');
      const q = await s.readStream
        .format('memory')
        .load('chain_events')
        .withWatermark('t', '10 seconds')
        .groupBy(window(col('t'), '10 seconds'), 'id')
        .count()
        .groupBy(window(window_time('window'), '1 minute'))
        .count()
        .writeStream.format('memory')
        .queryName('chained_windows')
        .start();
      try {
        input.addData(Array.from({ length: 30 }, (_, i) => ({ id: `k${i % 3}`, t: new Date(i * 1000) })));
        await q.processAllAvailable();
        const last = q.recentProgress.at(-1)!;
        const rows = last.stateOperators.map((o) => o.numRowsTotal);
        // Both operators hold state: the open 10-second windows, and the open minute's counts.
        expect(rows.every((n) => n > 0)).toBe(true);
        const m = samples(await s.prometheusMetrics());
        const l = `query_name="chained_windows",query_id="${q.id}"`;
        expect(m.get(`sluice_query_state_rows{${l}}`)).toBe(rows[0]! + rows[1]!);
        expect(m.get(`sluice_query_state_memory_bytes{${l}}`)).toBe(last.stateOperators.reduce((n, o) => n + o.memoryUsedBytes, 0));
      } finally {
        await q.stop();
      }
    });
  });
});
