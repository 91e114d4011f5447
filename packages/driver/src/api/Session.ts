/**
 * The entry point (Spark's SparkSession): configuration, readers, the query manager, and the
 * executors (worker threads) that all of the session's queries share.
 */
import { inferJsonSchemaFromFiles, parseSchema, rowToExternal, rowToInternal, type ReadOptions, type Row, type Schema } from '@sluice/executor';
import { CONF_KEYS, SluiceError, type WorkerStateUsage } from '@sluice/state';
import { canonicalKey, RuntimeConf } from '../conf/RuntimeConf.js';
import { DataFrame } from './DataFrame.js';
import { DataFrameReader } from './DataFrameReader.js';
import { DataStreamReader } from './DataStreamReader.js';
import { ListenerBus, type EventKind } from '../events/ListenerBus.js';
import { MemorySink } from '../sinks/MemorySink.js';
import { MemoryStream } from '../sources/MemoryStream.js';
import { StreamingQueryManager } from './StreamingQueryManager.js';
import { POOL_PROPERTY, TaskScheduler, type PoolMetrics } from '../scheduler/TaskScheduler.js';
import { staticFiles, staticRows } from '../execution/staticRows.js';
import { PrometheusMetrics } from '../metrics/SessionMetrics.js';
import { isInstalled } from '../optionalDependency.js';
import { startUI, type UIHandle, type UIOptions } from '../ui/UIServer.js';
import { parseUserSchema } from '../sources/resolveSource.js';
import { planSql } from './sql/sqlStatement.js';

/** The options of {@link Session.create}. */
export interface SessionOptions {
  /** Configuration values by key (`sluice.*`, or the `spark.*` alias); each is checked here. */
  conf?: Record<string, unknown>;
}

/** What {@link Session.metrics} reports: the listener bus, the executors and the scheduler. */
export interface SessionMetrics {
  /** The listener bus's queue (sluice.scheduler.listenerbus.eventqueue.capacity). */
  listenerBus: {
    /** Events dropped because the listener queue was full. */
    numDroppedEvents: number;
    /** The same, per kind: idle events first, then the oldest progress; never started or terminated. */
    numDroppedEventsByKind: Record<EventKind, number>;
    /** Events listeners had not taken when the last `close()` stopped waiting for them. */
    numUndeliveredEvents: number;
  };
  /**
   * The slots, and each slot's state shards against its worker's budgets (stateStore.maxOpenFiles
   * within its share of ulimit -n, and maxMemoryMB) as its last state task left them; null before one ran.
   */
  executor: {
    /** Task slots (worker threads): sluice.executor.cores. */
    slots: number;
    /** Queries running now. */
    activeQueries: number;
    /** Per slot, its worker's state shards and budgets; null until a state task ran there. */
    stateStores: Array<WorkerStateUsage | null>;
  };
  /** sluice.scheduler.mode, and each pool's settings and running and waiting tasks (the executors not started yet: none). */
  scheduler: {
    /** FIFO or FAIR between scheduler pools (sluice.scheduler.mode). */
    mode: 'FIFO' | 'FAIR';
    /** Each pool by name. */
    pools: Record<string, PoolMetrics>;
    /** The running queries and the pool each runs in. */
    queries: Array<{
      /** The query's id. */
      id: string;
      /** The query's name, if it has one. */
      name: string | null;
      /** Its scheduler pool. */
      pool: string;
    }>;
  };
}

/**
 * Each worker's V8 heap: the old generation is limited to sluice.executor.heapMB, else the state
 * budget plus 512 MB for a batch's working memory (decoded state and LevelDB live outside the
 * heap; rows and plans in it). The young generation gets a quarter of the state budget, between 16
 * and 96 MB: a batch makes many short-lived objects (a 100k-key state commit several per key), and
 * at V8's default of 16 MB the seed query spends about 8% more time per batch in scavenges.
 */
export function workerHeap(conf: RuntimeConf): { oldMB: number; youngMB: number } {
  const budget = conf.get(CONF_KEYS.stateStoreMaxMemoryMB);
  const oldMB = conf.get(CONF_KEYS.executorHeapMB) ?? budget + 512;
  return { oldMB, youngMB: Math.max(16, Math.min(96, Math.floor(budget / 4))) };
}

/**
 * The entry point of a Sluice program (Spark's SparkSession): its configuration, the readers of
 * streams and static data, SQL over temporary views, and the manager of its queries. All of its
 * queries share one set of executors (worker threads, one per task slot), started on first use;
 * `close()` stops the queries and ends them, after which the process can exit.
 *
 * @example
 * ```ts
 * const session = await Session.create({ conf: { 'sluice.sql.shuffle.partitions': 8 } });
 * session.conf.set('spark.sql.streaming.stateStore.partitions', '4'); // spark.* keys are aliases
 * const rates = session.readStream.format('rate').option('rowsPerSecond', 100).load();
 * // ...start queries...
 * await session.close();
 * ```
 */
export class Session {
  /** The session's configuration (Spark's `spark.conf`). */
  readonly conf: RuntimeConf;
  /** The session's queries and query listeners (Spark's `spark.streams`). */
  readonly streams: StreamingQueryManager;
  /** @internal */
  readonly listenerBus: ListenerBus;
  private taskScheduler: TaskScheduler | undefined;
  private readonly memorySinks = new Map<string, MemorySink>();
  private readonly memoryStreams = new Map<string, MemoryStream>();
  /** Temporary views by lower-case name (Spark's are case-insensitive). */
  private readonly views = new Map<string, DataFrame>();
  private closed = false;

  private constructor(options: SessionOptions) {
    this.conf = new RuntimeConf(options.conf ?? {});
    this.listenerBus = new ListenerBus(this.conf.get(CONF_KEYS.listenerBusCapacity));
    this.streams = new StreamingQueryManager(this);
  }

  /**
   * Starts a session. Conf values are checked here (INVALID_CONF); with `sluice.ui.enabled`, the
   * dashboard is served at once on `sluice.ui.port` (`session.ui`). The executors start with the
   * first query or static read.
   */
  static async create(options: SessionOptions = {}): Promise<Session> {
    const session = new Session(options);
    if (session.conf.get(CONF_KEYS.uiEnabled)) session.ui = await session.startUI({ port: session.conf.get(CONF_KEYS.uiPort) });
    return session;
  }

  /** The dashboard started by `sluice.ui.enabled`, if any. */
  ui: UIHandle | undefined;

  /** A reader of streams: its `load()` gives a streaming DataFrame (Spark's `spark.readStream`). */
  get readStream(): DataStreamReader {
    this.assertOpen();
    return new DataStreamReader(this);
  }

  /** A reader of static data (files, tables, SQLite): its `load()` gives a DataFrame to `collect()` or join (Spark's `spark.read`). */
  get read(): DataFrameReader {
    this.assertOpen();
    return new DataFrameReader(this);
  }

  /** @internal SESSION_CLOSED once closed. */
  assertOpen(): void {
    if (this.closed) throw new SluiceError('SESSION_CLOSED', 'the session is closed');
  }

  /** @internal The executors, started on first use with the `sluice.executor.cores` in force then. */
  scheduler(): TaskScheduler {
    this.assertOpen();
    this.taskScheduler ??= new TaskScheduler(
      this.conf.get(CONF_KEYS.executorCores),
      this.conf.get(CONF_KEYS.taskMaxFailures),
      undefined,
      workerHeap(this.conf),
      {
        mode: this.conf.get(CONF_KEYS.schedulerMode),
        pools: this.conf.get(CONF_KEYS.schedulerPools),
      },
    );
    return this.taskScheduler;
  }

  /**
   * A named in-memory input stream (Spark's MemoryStream); `schema` is required the first time a
   * name is used. `readStream.format('memory').load(name)` reads it.
   *
   * @example
   * ```ts
   * const input = session.memoryStream('events', 'id STRING, v LONG');
   * const df = session.readStream.format('memory').load('events');
   * input.addData([{ id: 'a', v: 1 }]);
   * ```
   */
  memoryStream(name: string, schema?: string | Record<string, unknown> | Schema): MemoryStream {
    let stream = this.memoryStreams.get(name);
    if (!stream) {
      if (!schema) {
        throw new SluiceError('SCHEMA_REQUIRED', `memory stream ${name} needs a schema the first time it is used`, { option: 'schema' });
      }
      stream = new MemoryStream(name, parseUserSchema(schema));
      this.memoryStreams.set(name, stream);
    }
    return stream;
  }

  /** @internal The memory sink of query `name` (format('memory')), made on first use. */
  memorySink(name: string): MemorySink {
    let sink = this.memorySinks.get(name);
    if (!sink) {
      sink = new MemorySink(name);
      this.memorySinks.set(name, sink);
    }
    return sink;
  }

  /**
   * Spark's spark.sql: a SELECT over temporary views (createOrReplaceTempView) as a DataFrame,
   * streaming when it reads a streaming view. See docs/guides/sql-and-functions.md for the grammar.
   */
  sql(text: string): DataFrame {
    this.assertOpen();
    return planSql(text, { view: (name) => this.views.get(name.toLowerCase()), oneRow: () => this.valuesFrame([], [{}]) });
  }

  /**
   * Spark's createDataFrame: a static DataFrame of JavaScript rows, with a schema as
   * readStream.schema takes it (DDL text, an object, or a field list). collect() it, or join a
   * stream with it.
   */
  createDataFrame(rows: Array<Record<string, unknown>>, schema: string | Record<string, string | object> | Schema): DataFrame {
    this.assertOpen();
    if (!Array.isArray(rows)) throw new SluiceError('INVALID_OPTION', 'createDataFrame takes an array of row objects', { option: 'rows' });
    const s = parseSchema(schema);
    return this.valuesFrame(
      s,
      rows.map((r) => rowToInternal(r, s)),
    );
  }

  private valuesFrame(schema: Schema, rows: Row[]): DataFrame {
    return new DataFrame(this, { source: { format: 'values', schema, rows }, ops: [] }, false);
  }

  /** @internal Registers `df` as view `name` (DataFrame.createOrReplaceTempView and createTempView call this). */
  registerTempView(name: string, df: DataFrame, replace: boolean): void {
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new SluiceError('INVALID_OPTION', `a view name is letters, digits and _, not starting with a digit; got ${String(name)}`, { option: 'viewName' });
    }
    const key = name.toLowerCase();
    if (!replace && this.views.has(key)) {
      throw new SluiceError(
        'TEMP_TABLE_OR_VIEW_ALREADY_EXISTS',
        `[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view \`${name}\` because it already exists: use createOrReplaceTempView`,
      );
    }
    this.views.set(key, df);
  }

  /** Drops view `name`; whether it existed (Spark's catalog.dropTempView). */
  dropTempView(name: string): boolean {
    return this.views.delete(String(name).toLowerCase());
  }

  /**
   * The rows of the memory sink of the query named `name` (`.format('memory').queryName(name)`),
   * in batch order; in complete mode, the last batch's. A replayed batch is not added twice.
   * UNKNOWN_TABLE when no such query started.
   */
  async memoryTable(name: string): Promise<Row[]> {
    const sink = this.memorySinks.get(name);
    if (!sink) throw new SluiceError('UNKNOWN_TABLE', `no memory table ${name}; start a query with .format('memory').queryName('${name}')`);
    return sink.rows();
  }

  /** Engine metrics: the listener bus's dropped events, the executors' state stores, the scheduler's pools. */
  metrics(): SessionMetrics {
    return {
      listenerBus: {
        numDroppedEvents: this.listenerBus.numDroppedEvents,
        numDroppedEventsByKind: this.listenerBus.numDroppedEventsByKind,
        numUndeliveredEvents: this.listenerBus.numUndeliveredEvents,
      },
      executor: {
        slots: this.taskScheduler?.slots ?? this.conf.get(CONF_KEYS.executorCores),
        activeQueries: this.streams.active.length,
        stateStores: this.taskScheduler?.stateStoreUsage() ?? [],
      },
      scheduler: {
        mode: this.taskScheduler?.schedulingMode ?? this.conf.get(CONF_KEYS.schedulerMode),
        pools: this.taskScheduler?.poolMetrics() ?? {},
        queries: this.streams.active.map((q) => ({ id: q.id, name: q.name, pool: q.schedulerPool })),
      },
    };
  }

  private metricsRegistry: PrometheusMetrics | undefined;

  /** @internal The session's Prometheus metrics (prom-client): per query from each progress, per session when scraped. */
  get prometheus(): PrometheusMetrics {
    this.metricsRegistry ??= new PrometheusMetrics({
      listenerQueueSize: () => this.listenerBus.queueSize,
      listenerDropped: () => this.listenerBus.numDroppedEventsByKind,
      slots: () => this.taskScheduler?.slots ?? this.conf.get(CONF_KEYS.executorCores),
      slotsBusy: () => this.taskScheduler?.busySlots ?? 0,
      pools: () => this.taskScheduler?.poolMetrics() ?? {},
    });
    return this.metricsRegistry;
  }

  /**
   * @internal What queries record their progress into: the Prometheus metrics when prom-client is installed,
   * else nothing (without it there is no `/metrics` to serve them, and asking for them is
   * OPTIONAL_DEPENDENCY_MISSING).
   */
  get queryMetrics(): PrometheusMetrics | undefined {
    return this.metricsRegistry ?? (isInstalled('prom-client') ? this.prometheus : undefined);
  }

  /** The metrics in Prometheus's text format, as `/metrics` serves them (needs prom-client installed). */
  prometheusMetrics(): Promise<string> {
    return this.prometheus.text();
  }

  /** The content type of {@link Session.prometheusMetrics}'s text. */
  get prometheusContentType(): string {
    return this.prometheus.contentType;
  }

  /**
   * Serves the live dashboard and `/metrics` on `host` (127.0.0.1) and `port` (0: a free one);
   * `close()` stops it, and `session.close()` does too.
   */
  async startUI(options: UIOptions = {}): Promise<UIHandle> {
    this.assertOpen();
    const ui = await startUI(this, options);
    this.uis.add(ui);
    return ui;
  }

  private readonly uis = new Set<UIHandle>();

  private readonly localProperties = new Map<string, string>();

  /**
   * Spark's SparkContext.setLocalProperty: `sluice.scheduler.pool` (or `spark.scheduler.pool`)
   * names the scheduler pool of the queries started afterwards; null clears a property.
   */
  setLocalProperty(key: string, value: string | null): void {
    if (typeof key !== 'string' || key === '') throw new SluiceError('INVALID_OPTION', 'a local property needs a key', { option: 'key' });
    const k = canonicalKey(key);
    if (value === null || value === undefined) this.localProperties.delete(k);
    else if (typeof value !== 'string' || (k === POOL_PROPERTY && value === '')) {
      throw new SluiceError(
        'INVALID_OPTION',
        `local property ${key} must be a string${k === POOL_PROPERTY ? ' naming a pool' : ''}, got ${JSON.stringify(value)}`,
        { option: key },
      );
    } else this.localProperties.set(k, value);
  }

  /** A local property set by {@link Session.setLocalProperty}, or null. */
  getLocalProperty(key: string): string | null {
    return this.localProperties.get(canonicalKey(key)) ?? null;
  }

  /** For ports of Spark code: `session.sparkContext.setLocalProperty(...)`. */
  get sparkContext(): {
    /** As {@link Session.setLocalProperty}. */
    setLocalProperty(key: string, value: string | null): void;
    /** As {@link Session.getLocalProperty}. */
    getLocalProperty(key: string): string | null;
  } {
    return { setLocalProperty: (k, v) => this.setLocalProperty(k, v), getLocalProperty: (k) => this.getLocalProperty(k) };
  }

  /** @internal The JSON schema of the files a static read of `dir` covers: a sink's committed files, else the directory's. */
  inferJsonSchema(dir: string, read: ReadOptions): Schema {
    return inferJsonSchemaFromFiles(staticFiles(dir), read);
  }

  /** @internal The rows of static DataFrame `df` (DataFrame.collect). */
  async collectStatic(df: DataFrame): Promise<Row[]> {
    const rows = await staticRows(this.scheduler(), df.plan);
    return rows.map((row) => rowToExternal(row, df.schema));
  }

  /**
   * Stops every query, waits for listeners (at most `sluice.scheduler.listenerbus.closeTimeout`;
   * what they did not take is counted in `metrics().listenerBus.numUndeliveredEvents`), and ends
   * the worker threads: the process can exit.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.streams.stopAll();
    await this.listenerBus.close(this.conf.get(CONF_KEYS.listenerBusCloseTimeout));
    this.closed = true;
    await Promise.all([...this.uis].map((u) => u.close()));
    await this.taskScheduler?.close();
    this.taskScheduler = undefined;
  }
}
