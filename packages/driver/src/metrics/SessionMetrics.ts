/**
 * The session's Prometheus metrics (prom-client, one registry per session): per query, from every
 * progress event as it is made (never through the listener bus, which may drop events), and per
 * session, read when scraped. Names follow Prometheus conventions: `sluice_` first, units last.
 */
import type { Counter, Histogram, Registry } from 'prom-client';

/** Loaded when the metrics are first used: a session that never scrapes never loads it. */
const prom = (): typeof import('prom-client') => requireOptional<typeof import('prom-client')>('prom-client', 'the Prometheus registry', 'prometheus');
import type { StreamingQueryProgress } from '../events/progress.js';
import { requireOptional } from '../optionalDependency.js';

/** What a scrape reads from the session at that moment. */
export interface SessionGauges {
  listenerQueueSize(): number;
  listenerDropped(): Record<string, number>;
  slots(): number;
  slotsBusy(): number;
  pools(): Record<string, { runningTasks: number; waitingTasks: number }>;
}

const QUERY_LABELS = ['query_name', 'query_id'] as const;

export class PrometheusMetrics {
  private readonly registry: Registry;
  private readonly inputRows: Counter<(typeof QUERY_LABELS)[number]>;
  private readonly batches: Counter<(typeof QUERY_LABELS)[number]>;
  private readonly batchDuration: Histogram<(typeof QUERY_LABELS)[number]>;
  private readonly last = new Map<string, { labels: Record<(typeof QUERY_LABELS)[number], string>; progress: StreamingQueryProgress }>();

  constructor(session: SessionGauges) {
    const { Counter, Gauge, Histogram, Registry } = prom();
    this.registry = new Registry();
    const registers = [this.registry];
    this.inputRows = new Counter({
      name: 'sluice_query_input_rows_total',
      help: 'Rows read by the query, over all its batches',
      labelNames: QUERY_LABELS,
      registers,
    });
    this.batches = new Counter({ name: 'sluice_query_batches_total', help: 'Batches the query ran', labelNames: QUERY_LABELS, registers });
    this.batchDuration = new Histogram({
      name: 'sluice_query_batch_duration_seconds',
      help: 'Duration of each batch (progress batchDuration)',
      labelNames: QUERY_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const fromLast = (name: string, help: string, value: (p: StreamingQueryProgress) => number | undefined): void => {
      const last = this.last;
      new Gauge({
        name,
        help,
        labelNames: QUERY_LABELS,
        registers,
        collect() {
          this.reset();
          for (const { labels, progress } of last.values()) {
            const v = value(progress);
            if (v !== undefined) this.set(labels, v);
          }
        },
      });
    };
    fromLast('sluice_query_input_rows_per_second', 'Input rate of the last batch (progress inputRowsPerSecond)', (p) => p.inputRowsPerSecond);
    fromLast('sluice_query_processed_rows_per_second', 'Processing rate of the last batch (progress processedRowsPerSecond)', (p) => p.processedRowsPerSecond);
    // A query's state is every stateful operator's.
    const stateSum = (p: StreamingQueryProgress, of: (o: StreamingQueryProgress['stateOperators'][number]) => number): number | undefined =>
      p.stateOperators.length === 0 ? undefined : p.stateOperators.reduce((n, o) => n + of(o), 0);
    fromLast('sluice_query_state_rows', "Rows of state after the last batch, every operator's (stateOperators numRowsTotal)", (p) =>
      stateSum(p, (o) => o.numRowsTotal),
    );
    fromLast('sluice_query_state_memory_bytes', "Memory of the state after the last batch, every operator's (stateOperators memoryUsedBytes)", (p) =>
      stateSum(p, (o) => o.memoryUsedBytes),
    );
    fromLast('sluice_query_source_backlog', 'Entries the sources hold past the last batch (their offsetsBehindLatest)', (p) => {
      const behind = p.sources.map((s) => s.metrics?.offsetsBehindLatest).filter((v) => v !== undefined);
      return behind.length === 0 ? undefined : behind.reduce((n, v) => n + Number(v), 0);
    });
    fromLast('sluice_query_watermark_seconds', 'Event-time watermark of the last batch, seconds since the epoch', (p) =>
      p.eventTime.watermark === undefined ? undefined : Date.parse(p.eventTime.watermark) / 1000,
    );
    new Gauge({
      name: 'sluice_listener_bus_queue_size',
      help: 'Events waiting for the listeners',
      registers,
      collect() {
        this.set(session.listenerQueueSize());
      },
    });
    new Gauge({
      name: 'sluice_listener_bus_dropped_events',
      help: 'Events dropped because the listener bus was full, by kind (a count since the session started)',
      labelNames: ['kind'],
      registers,
      collect() {
        for (const [kind, n] of Object.entries(session.listenerDropped())) this.set({ kind }, n);
      },
    });
    new Gauge({
      name: 'sluice_executor_slots',
      help: 'Executor slots (sluice.executor.cores)',
      registers,
      collect() {
        this.set(session.slots());
      },
    });
    new Gauge({
      name: 'sluice_executor_slots_busy',
      help: 'Slots running a task',
      registers,
      collect() {
        this.set(session.slotsBusy());
      },
    });
    for (const [name, field] of [
      ['sluice_scheduler_pool_running_tasks', 'runningTasks'],
      ['sluice_scheduler_pool_waiting_tasks', 'waitingTasks'],
    ] as const) {
      new Gauge({
        name,
        help: `Tasks of the scheduler pool: ${field === 'runningTasks' ? 'running' : 'waiting for a slot'}`,
        labelNames: ['pool'],
        registers,
        collect() {
          this.reset();
          for (const [pool, m] of Object.entries(session.pools())) this.set({ pool }, m[field]);
        },
      });
    }
  }

  /** A batch's progress, as the query makes it. */
  observe(progress: StreamingQueryProgress): void {
    const labels = { query_name: progress.name ?? '', query_id: progress.id };
    this.inputRows.inc(labels, progress.numInputRows);
    this.batches.inc(labels);
    this.batchDuration.observe(labels, progress.batchDuration / 1000);
    this.last.set(progress.id, { labels, progress });
  }

  /** Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
