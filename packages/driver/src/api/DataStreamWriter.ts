/**
 * `df.writeStream`: sink format, options, output mode and trigger, then `start()`. Everything is
 * validated before the query starts, so `start()` rejects on a bad option and no batch runs.
 */
import { resolve } from 'node:path';
import { ManualClock } from '../execution/clock.js';
import { PARQUET_COMPRESSIONS, PARTITION_TYPES, checkParquetWritable, type WriteOptions } from '@sluice/executor';
import { CONF_KEYS, didYouMean, SluiceError, suggest } from '@sluice/state';
import type { DataFrame } from './DataFrame.js';
import { Options, type OptionValue } from '../conf/Options.js';
import { ConsoleSink } from '../sinks/ConsoleSink.js';
import { FileSink } from '../sinks/FileSink.js';
import { DeltaSink } from '../delta/DeltaSink.js';
import { defaultCheckpoint, existingTableFormat, prepareTable, tableDir } from '../sinks/tables.js';
import { NoopSink } from '../sinks/NoopSink.js';
import { ForeachBatchSink, type ForeachBatchFunction } from '../sinks/ForeachBatchSink.js';
import { SqliteSink, type SqliteSinkOptions } from '../sinks/SqliteSink.js';
import type { StreamSink } from '../sinks/Sink.js';
import type { OutputMode, QuerySpec, TriggerSpec } from '../plan/QuerySpec.js';
import { checkFormat } from '../sources/resolveSource.js';
import { checkOutputMode } from '../plan/UnsupportedOperationChecker.js';
import type { StreamingQuery } from './StreamingQuery.js';
import { Trigger } from './Trigger.js';
import { DEFAULT_POOL, POOL_PROPERTY } from '../scheduler/TaskScheduler.js';
import { parseBoolean, parseEnum, parsePositiveInt } from '../conf/parsers.js';

export const SINK_FORMATS = ['json', 'csv', 'parquet', 'delta', 'memory', 'console', 'foreachBatch', 'sqlite', 'noop'] as const;
/**
 * The formats `writeStream` writes: files (json, csv, parquet) and Delta tables exactly once,
 * memory (`session.memoryTable`), console, foreachBatch, SQLite upserts, and noop (discards).
 * @useDeclaredType
 */
export type SinkFormat = (typeof SINK_FORMATS)[number];

/**
 * `df.writeStream` (Spark's DataStreamWriter): the sink's format and options, the output mode
 * and the trigger, then `start()` runs the query. Everything is checked before the query starts,
 * so `start()` rejects on a bad option or an output mode the query cannot use, and no batch runs.
 *
 * @example
 * ```ts
 * const query = await counts.writeStream
 *   .format('json')
 *   .option('checkpointLocation', 'ckpt')
 *   .outputMode('append')
 *   .trigger(Trigger.ProcessingTime('1 second'))
 *   .start('data/out');
 * ```
 */
export class DataStreamWriter {
  private fmt: string | undefined;
  private readonly opts = new Options();
  private mode = 'append';
  private trig: TriggerSpec = Trigger.ProcessingTime(0);
  private manualClock: ManualClock | undefined;
  private name: string | null = null;
  private batchFn: ForeachBatchFunction | undefined;
  private partitionCols: string[] = [];

  /** @internal */
  constructor(private readonly df: DataFrame) {}

  /**
   * The sink's format (default: `sluice.sql.sources.default`, json); see {@link SinkFormat}. An
   * unknown name type-checks but is UNKNOWN_FORMAT at `start()`.
   */
  format(sink: SinkFormat | (string & {})): this {
    this.fmt = sink;
    return this;
  }

  /**
   * An option of the sink (`checkpointLocation`, `header`, `compression`...) or of the query
   * (`schedulerPool`). Keys are case-insensitive; an unknown one is UNKNOWN_OPTION at `start()`.
   */
  option(key: string, value: OptionValue): this {
    this.opts.set(key, value);
    return this;
  }

  /** Several options at once, as {@link DataStreamWriter.option}. */
  options(values: Record<string, OptionValue>): this {
    for (const [k, v] of Object.entries(values)) this.opts.set(k, v);
    return this;
  }

  /**
   * How each batch's result is written (default `append`); a mode the query cannot use (update
   * of a stream-stream join, complete without an aggregation) is UNSUPPORTED_OUTPUT_MODE at `start()`.
   */
  outputMode(mode: OutputMode): this {
    this.mode = mode;
    return this;
  }

  /**
   * When batches run (Trigger). `clock`: a ManualClock the query's triggers and batch timestamps
   * follow instead of the wall clock (Spark's StreamManualClock), for tests of processing time.
   */
  trigger(trigger: TriggerSpec, options: { clock?: ManualClock } = {}): this {
    if (options.clock !== undefined && !(options.clock instanceof ManualClock)) {
      throw new SluiceError('INVALID_OPTION', 'trigger: clock must be a ManualClock', { option: 'clock' });
    }
    this.trig = trigger;
    this.manualClock = options.clock;
    return this;
  }

  /**
   * Spark's partitionBy: a file sink writes each row under `col=value/...` directories of these
   * columns (Hive's layout), without them in the files; session.read of the directory gives them back.
   */
  partitionBy(...cols: string[]): this {
    this.partitionCols = cols.flat();
    return this;
  }

  /** The query's name: unique among the active queries, and the table name of the memory sink. */
  queryName(name: string): this {
    this.name = name;
    return this;
  }

  /**
   * Spark's foreachBatch: `fn` gets each batch's rows and its id, on the driver, and the query
   * waits for what it returns. A replayed batch comes again with the same id, so an idempotent
   * `fn` gives exactly-once output. Sets the format to `foreachBatch`.
   *
   * @example
   * ```ts
   * await df.writeStream.foreachBatch(async (rows, batchId) => { await save(batchId, rows); }).start();
   * ```
   */
  foreachBatch(fn: ForeachBatchFunction): this {
    if (typeof fn !== 'function') {
      throw new SluiceError('INVALID_OPTION', 'foreachBatch needs a function (rows, batchId) => ...', { option: 'foreachBatch' });
    }
    this.fmt = 'foreachBatch';
    this.batchFn = fn;
    return this;
  }

  private resolveSpec(path: string | undefined): QuerySpec {
    const format = this.fmt ?? this.df.session.conf.get(CONF_KEYS.sourcesDefault);
    checkFormat(format, SINK_FORMATS, 'sink');
    const o = this.opts.copy();
    const outputMode = parseEnum(this.mode, ['append', 'update', 'complete'] as const, 'outputMode');
    checkOutputMode(this.df.plan, outputMode);
    if (format === 'delta' && outputMode === 'update') {
      throw new SluiceError(
        'UNSUPPORTED_OUTPUT_MODE',
        'Data source delta does not support Update output mode (as in Delta: use append, or complete for an aggregation)',
        { option: 'outputMode' },
      );
    }
    const ckpt = o.take('checkpointLocation');
    const fileSink = format === 'json' || format === 'csv' || format === 'parquet' || format === 'delta';
    const checkpointLocation = ckpt === undefined ? defaultCheckpoint(this.df.session.conf, this.name, fileSink) : resolve(String(ckpt));
    let sink: StreamSink;
    if (fileSink) {
      const p = path ?? o.take('path');
      if (p === undefined || p === '') {
        throw new SluiceError('INVALID_OPTION', `a ${format} sink needs an output directory: start(path)`, { option: 'path' });
      }
      if (checkpointLocation === undefined) {
        throw new SluiceError('CHECKPOINT_LOCATION_REQUIRED', `a ${format} file sink needs option checkpointLocation for exactly-once output`, {
          option: 'checkpointLocation',
        });
      }
      const header = format === 'csv' ? parseBoolean(o.take('header') ?? false, 'header') : false;
      const sep = format === 'csv' ? String(o.take('sep') ?? ',') : ',';
      const options: WriteOptions = { header, sep };
      const partitionBy = this.partitionColumns();
      if (format === 'parquet' || format === 'delta') {
        options.compression = parseEnum(String(o.take('compression') ?? 'snappy').toLowerCase(), PARQUET_COMPRESSIONS, 'compression');
        // A column Parquet cannot hold fails here, before the query starts.
        checkParquetWritable(this.df.schema.filter((f) => !partitionBy.includes(f.name)));
      }
      sink =
        format === 'delta'
          ? new DeltaSink(resolve(String(p)), this.df.schema, options, partitionBy)
          : new FileSink(format, resolve(String(p)), options, partitionBy);
    } else if (format === 'memory') {
      if (this.name === null) {
        throw new SluiceError('INVALID_OPTION', 'the memory sink needs a query name: .queryName(name)', { option: 'queryName' });
      }
      sink = this.df.session.memorySink(this.name);
    } else if (format === 'sqlite') {
      sink = new SqliteSink(sqliteOptions(o), this.df.schema);
    } else if (format === 'noop') {
      sink = new NoopSink();
    } else if (format === 'console') {
      const numRows = parsePositiveInt(o.take('numRows') ?? 20, 'numRows');
      const truncate = parseBoolean(o.take('truncate') ?? true, 'truncate');
      sink = new ConsoleSink(numRows, truncate);
    } else {
      if (!this.batchFn) {
        throw new SluiceError('INVALID_OPTION', 'format foreachBatch needs .foreachBatch(fn)', { option: 'foreachBatch' });
      }
      sink = new ForeachBatchSink(this.batchFn);
    }
    if (!fileSink && this.partitionCols.length > 0) {
      throw new SluiceError('INVALID_OPTION', `partitionBy applies to the json, csv, parquet and delta sinks, not ${format}`, { option: 'partitionBy' });
    }
    const poolOption = o.take('schedulerPool');
    if (poolOption !== undefined && (typeof poolOption !== 'string' || poolOption === '')) {
      throw new SluiceError('INVALID_OPTION', `option schedulerPool must name a pool, got ${JSON.stringify(poolOption)}`, { option: 'schedulerPool' });
    }
    const pool = (poolOption as string | undefined) ?? this.df.session.getLocalProperty(POOL_PROPERTY) ?? DEFAULT_POOL;
    o.rejectUnknown(`${format} sink`);
    return { sink, outputMode, trigger: this.trig, queryName: this.name, checkpointLocation, pool, ...(this.manualClock && { clock: this.manualClock }) };
  }

  /** partitionBy's columns as the output names them, checked: atomic types, some column left for the files. */
  private partitionColumns(): string[] {
    const schema = this.df.schema;
    const cols = this.partitionCols.map((c) => {
      const field = schema.find((f) => f.name.toLowerCase() === String(c).toLowerCase());
      if (!field) {
        const suggestions = suggest(
          String(c),
          schema.map((f) => f.name),
        );
        throw new SluiceError('UNRESOLVED_COLUMN', `partitionBy: no column ${c}.${didYouMean(suggestions)} Columns: ${schema.map((f) => f.name).join(', ')}`, {
          column: String(c),
          suggestions,
        });
      }
      if (!PARTITION_TYPES.includes(field.type)) {
        throw new SluiceError(
          'INVALID_OPTION',
          `partitionBy: column ${field.name} is ${String(typeof field.type === 'string' ? field.type : 'nested').toUpperCase()}; a partition column is ${PARTITION_TYPES.join(', ').toUpperCase()}`,
          { column: field.name },
        );
      }
      return field.name;
    });
    if (new Set(cols).size !== cols.length)
      throw new SluiceError('INVALID_OPTION', `partitionBy names a column twice (${cols.join(', ')})`, { option: 'partitionBy' });
    if (cols.length > 0 && cols.length === schema.length)
      throw new SluiceError('INVALID_OPTION', 'Cannot use all columns for partition columns', { option: 'partitionBy' });
    return cols;
  }

  /**
   * Starts the query; resolves once it runs (its first batch not yet done). `path` is a file
   * sink's output directory (or option `path`). Rejects, before any batch, on a bad option,
   * schema or plan, and with QUERY_NAME_IN_USE or a locked checkpoint.
   */
  async start(path?: string): Promise<StreamingQuery> {
    const spec = this.resolveSpec(path);
    return this.df.session.streams.startQuery(this.df, spec);
  }

  /**
   * Writes to the named table `<sluice.sql.warehouse.dir>/<name>`, exactly once: a JSON file sink,
   * or a Delta table when the query's format or sluice.sql.sources.default says delta (an existing
   * table keeps its format); `session.read.table(name)` reads it back. Without checkpointLocation
   * the checkpoint is `<sluice.sql.streaming.checkpointLocation or <warehouse>/_checkpoints>/<queryName>`.
   */
  async toTable(tableName: string): Promise<StreamingQuery> {
    const conf = this.df.session.conf;
    const dir = tableDir(conf, tableName);
    const existing = existingTableFormat(dir);
    const format = this.fmt ?? existing ?? conf.get(CONF_KEYS.sourcesDefault);
    if (format !== 'json' && format !== 'delta') {
      throw new SluiceError('INVALID_OPTION', `toTable writes json or delta tables, not ${format}`, { option: 'format' });
    }
    if (existing !== undefined && existing !== format) {
      throw new SluiceError('INVALID_OPTION', `table ${tableName} is a ${existing} table; it cannot be written as ${format}`, { option: 'format' });
    }
    this.fmt = format;
    const spec = this.resolveSpec(dir);
    prepareTable(dir, tableName, format, this.df.schema);
    return this.df.session.streams.startQuery(this.df, spec);
  }
}

/** Options of format('sqlite'): path, table and mergeKeys are required. */
function sqliteOptions(o: Options): SqliteSinkOptions {
  const required = (key: string): string => {
    const v = o.take(key);
    if (typeof v !== 'string' || v.trim() === '') {
      throw new SluiceError('INVALID_OPTION', `a sqlite sink needs option ${key}`, { option: key });
    }
    return v.trim();
  };
  const path = resolve(required('path'));
  const table = required('table');
  const mergeKeys = required('mergeKeys')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  const deleteColumn = o.take('deleteColumn');
  const busy = o.take('busyTimeoutMs');
  return {
    path,
    table,
    mergeKeys,
    ...(deleteColumn !== undefined && { deleteColumn: String(deleteColumn) }),
    ...(busy !== undefined && { busyTimeoutMs: parsePositiveInt(busy, 'busyTimeoutMs') }),
  };
}
