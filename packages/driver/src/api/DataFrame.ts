/**
 * A DataFrame is a source, a chain of stateless operators, then stateful operators (an
 * aggregation, a deduplication or a join of two streams; the ones after the first in plan.chain),
 * each followed by more stateless operators. Every operator is checked against the schema when it
 * is called, so an unknown column fails at the line naming it.
 */
import { randomUUID } from 'node:crypto';
import {
  GROUP_STATE,
  GroupStateTimeout,
  parseSchema,
  stateTypeOf,
  timeModeOfTimeout,
  exprName,
  expandStar,
  exprType,
  isStructType,
  sessionOfKey,
  typeName,
  type Expr,
  type JoinType,
  type Op,
  type Schema,
  type StatefulOp,
  type DataType,
  type GroupStateTimeoutConf,
  type Row,
  type StateVariable,
  type TimeMode,
  type TransformWithStateOp,
} from '@sluice/executor';
import { didYouMean, SluiceError, suggest } from '@sluice/state';
import { Column, toColumn } from './Column.js';
import { AggregateColumn, avg, count, max, min, sum } from './aggregates.js';
import type { Session } from './Session.js';
import { DataStreamWriter } from './DataStreamWriter.js';
import {
  carriesEventTime,
  eventTimeColumns,
  planInputs,
  planOutput,
  watermarkDelayOf,
  watermarkOf,
  type ChainedOperator,
  type LogicalPlan,
  type PlanInput,
} from '../plan/LogicalPlan.js';
import { parseDuration } from '../conf/parsers.js';
import { andAll, exprColumns, planStreamJoin } from '../plan/StreamJoinPlanner.js';
import { parseColumn } from './sql/parseExpression.js';
import { generatorOf } from './generators.js';
import type { StatefulProcessorRef } from './functions.js';
import { starTarget } from './starText.js';

/**
 * A query over a stream or over static data (Spark's DataFrame): a source and the operators
 * applied to it. A streaming DataFrame (from `session.readStream`) runs through `writeStream`; a
 * static one (from `session.read`, `createDataFrame` or SQL over static views) through
 * `collect()`, or as the static side of a join. Operators return a new DataFrame and are checked
 * against the schema when called, so an unknown column fails at the line that names it.
 *
 * @example
 * ```ts
 * const counts = events
 *   .withWatermark('event_time', '10 minutes')
 *   .filter(col('value').gt(0))
 *   .groupBy(window('event_time', '5 minutes'), 'id')
 *   .count();
 * ```
 */
export class DataFrame {
  /** The columns the DataFrame has, with their types. */
  readonly schema: Schema;

  /** @internal */
  constructor(
    /** The session it belongs to. */
    readonly session: Session,
    /** @internal */
    readonly plan: LogicalPlan,
    /** Whether it is a stream (from readStream) rather than static data. */
    readonly isStreaming: boolean,
  ) {
    this.schema = planOutput(plan);
  }

  /** The column names, in order. */
  get columns(): string[] {
    return this.schema.map((f) => f.name);
  }

  private with(op: Op): DataFrame {
    const { chain } = this.plan;
    const last = chain?.[chain.length - 1];
    const plan = last
      ? { ...this.plan, chain: [...(chain as ChainedOperator[]).slice(0, -1), { ...last, post: [...last.post, op] }] }
      : this.plan.stateful || this.plan.exchange
        ? { ...this.plan, post: [...this.plan.post, op] }
        : { ...this.plan, ops: [...this.plan.ops, op] };
    return new DataFrame(this.session, plan, this.isStreaming);
  }

  /**
   * Spark's repartition: `repartition(n)` spreads the rows over n partitions round robin;
   * `repartition(n, ...cols)` hashes them by `cols`; `repartition(...cols)` uses the batch's
   * `sluice.sql.shuffle.partitions` (which may change at every restart, or be `auto`). Each batch's
   * offsets entry records the count it used, so a replay runs with it. A stateless query only.
   */
  repartition(...args: Array<number | Column | string>): DataFrame {
    const [first, ...rest] = args;
    const partitions = typeof first === 'number' ? first : undefined;
    const cols = (typeof first === 'number' ? rest : args) as Array<Column | string>;
    if (partitions !== undefined && !(Number.isInteger(partitions) && partitions > 0)) {
      throw new SluiceError('INVALID_OPTION', `repartition needs a positive number of partitions, got ${partitions}`, { option: 'numPartitions' });
    }
    if (partitions === undefined && cols.length === 0)
      throw new SluiceError('INVALID_OPTION', 'repartition needs a number of partitions or columns', { option: 'numPartitions' });
    if (!this.isStreaming || this.plan.stateful || this.plan.exchange || this.plan.inputs) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'repartition is supported once, in a stateless streaming query without union (an aggregation shuffles by its keys already)',
      );
    }
    const keys = cols.map((c) => toColumn(c).expr);
    for (const k of keys) exprType(k, this.schema);
    return new DataFrame(this.session, { ...this.plan, exchange: { keys, ...(partitions !== undefined && { partitions }) } }, true);
  }

  /** @internal A new DataFrame with `op` as its stateful operator. */
  withStateful(op: StatefulOp): DataFrame {
    if (this.plan.exchange) throw new SluiceError('UNSUPPORTED_OPERATION', 'a query with repartition cannot aggregate or deduplicate yet');
    // Past a first stateful operator, the next ones chain (Spark's multiple stateful operators).
    if (this.plan.stateful)
      return new DataFrame(this.session, { ...this.plan, chain: [...(this.plan.chain ?? []), { stateful: op, post: [] }] }, this.isStreaming);
    return new DataFrame(this.session, { ...this.plan, stateful: op }, this.isStreaming);
  }

  /**
   * Groups the rows by columns or expressions (a name, `window(...)`, `session_window(...)`) for
   * an aggregation or a stateful processor (Spark's groupBy).
   *
   * @example
   * ```ts
   * df.groupBy(window('event_time', '5 minutes'), 'id').agg(count('*').alias('n'), avg('value'));
   * ```
   */
  groupBy(...cols: Array<Column | string>): GroupedData {
    return new GroupedData(
      this,
      cols.map((c) => toColumn(c)),
    );
  }

  /** Drops rows whose `cols` (default: all columns) were seen before; see docs/guides/stateful-operators.md. */
  dropDuplicates(cols?: string[]): DataFrame {
    const columns = this.dedupColumns(cols, 'dropDuplicates');
    const eventTime = eventTimeColumns(this.plan);
    const eventTimeColumn = columns.find((c) => eventTime.has(c)) ?? null;
    return this.withStateful({ kind: 'dropDuplicates', columns, eventTimeColumn });
  }

  /**
   * Drops rows whose `cols` were seen within the watermark delay; needs withWatermark. After another
   * stateful operator it deduplicates that one's output, by the event-time column it carries.
   */
  dropDuplicatesWithinWatermark(cols?: string[]): DataFrame {
    const columns = this.dedupColumns(cols, 'dropDuplicatesWithinWatermark');
    const wm = watermarkOf(this.plan);
    if (!wm) throw new SluiceError('UNSUPPORTED_OPERATION', 'dropDuplicatesWithinWatermark needs withWatermark before it');
    const eventTime = eventTimeColumns(this.plan);
    const timed = this.schema.filter((f) => eventTime.has(f.name));
    const eventTimeColumn = timed.find((f) => f.type === 'timestamp')?.name;
    if (eventTimeColumn === undefined) {
      const window = timed[0]?.name;
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        window === undefined
          ? `dropDuplicatesWithinWatermark needs the watermarked column ${wm.column}, or an alias of it, among its input columns`
          : `dropDuplicatesWithinWatermark needs a TIMESTAMP event-time column; ${window} is a window: select window_time(${window}) first`,
        { column: window ?? wm.column },
      );
    }
    if (this.plan.stateful && timed.length > 1) {
      // Spark's rule (WatermarkSupport.findEventTimeColumn): one event-time column per stream.
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        `More than one event time columns are available. Please ensure there is at most one event time column per stream. event time columns: ${timed.map((f) => f.name).join(', ')}`,
        { column: timed[1]?.name as string },
      );
    }
    const delayMs = watermarkDelayOf(this.plan, eventTimeColumn) ?? wm.delayMs;
    return this.withStateful({ kind: 'dropDuplicatesWithinWatermark', columns, eventTimeColumn, delayMs });
  }

  private dedupColumns(cols: string[] | undefined, what: string): string[] {
    const names = cols ?? this.columns;
    for (const c of names) {
      if (!this.schema.some((f) => f.name === c)) {
        const suggestions = suggest(c, this.columns);
        throw new SluiceError('UNRESOLVED_COLUMN', `${what}: no column ${c}.${didYouMean(suggestions)} Columns: ${this.columns.join(', ')}`, {
          column: c,
          suggestions,
        });
      }
    }
    return names;
  }

  /**
   * Spark's select; one item may be a generator (explode, posexplode, inline), which gives a row per
   * element. `'*'` is every column, and `'s.*'` (or col('s.*')) every field of the struct column s,
   * each a column named by its field.
   */
  select(...cols: Array<Column | string>): DataFrame {
    const exprs: Expr[] = cols.flatMap((c) => {
      const e = c === '*' ? ({ op: 'col', name: '*' } as const) : toColumn(c).expr;
      if (e.op !== 'col' || !(e.name === '*' || e.name.endsWith('.*'))) return [e];
      return e.name === '*' ? this.schema.map((f): Expr => ({ op: 'col', name: f.name })) : expandStar(e.name.slice(0, -2), this.schema);
    });
    const generated = generatorOf(exprs, this.schema);
    if (generated === undefined) return this.with({ kind: 'project', exprs });
    return this.with(generated.op).with({ kind: 'project', exprs: generated.exprs });
  }

  /** Registers this DataFrame as a temporary view of its session, for session.sql; replaces one of that name. */
  createOrReplaceTempView(name: string): void {
    this.session.registerTempView(name, this, true);
  }

  /** As createOrReplaceTempView, but a view of that name is TEMP_TABLE_OR_VIEW_ALREADY_EXISTS. */
  createTempView(name: string): void {
    this.session.registerTempView(name, this, false);
  }

  /** Spark's selectExpr: each text an SQL expression with an optional alias (`'v * 2 AS twice'`, `'*'`, `'s.*'`). */
  selectExpr(...exprs: string[]): DataFrame {
    return this.select(...exprs.map((e) => (typeof e === 'string' ? (starTarget(e) ?? parseColumn(e, 'selectExpr')) : parseColumn(e, 'selectExpr'))));
  }

  /** Keeps the rows where `condition` holds: a Column, or SQL text (`"v > 10 AND name IS NOT NULL"`). */
  filter(condition: Column | string): DataFrame {
    const cond = typeof condition === 'string' ? parseColumn(condition, 'filter') : condition;
    return this.with({ kind: 'filter', cond: cond.expr });
  }

  /** Same as filter. */
  where(condition: Column | string): DataFrame {
    return this.filter(condition);
  }

  /** Replaces the column of that name in place, or appends it (Spark's withColumn); a generator gives a row per element. */
  withColumn(name: string, column: Column): DataFrame {
    const named: Expr = { op: 'alias', expr: column.expr, name };
    const exprs: Expr[] = this.schema.map((f): Expr => (f.name === name ? named : { op: 'col', name: f.name }));
    if (!this.schema.some((f) => f.name === name)) exprs.push(named);
    return this.select(...exprs.map((e) => new Column(e)));
  }

  /** Spark's drop: every column but those named (a name it does not have is ignored, as in Spark). */
  drop(...names: string[]): DataFrame {
    const gone = new Set(names.map((n) => n.toLowerCase()));
    return this.select(...this.schema.filter((f) => !gone.has(f.name.toLowerCase())).map((f) => new Column({ op: 'col', name: f.name })));
  }

  /**
   * Declares `eventTime` (a TIMESTAMP column) the event time, with a watermark that trails the
   * greatest event time seen by `delayThreshold` (`'10 minutes'`, or milliseconds): stateful
   * operators drop rows older than it and evict state it has passed (Spark's withWatermark).
   */
  withWatermark(eventTime: string, delayThreshold: string | number): DataFrame {
    if (this.plan.stateful) {
      throw new SluiceError('UNSUPPORTED_OPERATION', 'withWatermark must come before the aggregation or deduplication', {
        column: eventTime,
      });
    }
    const field = this.schema.find((f) => f.name === eventTime);
    if (!field) {
      const suggestions = suggest(eventTime, this.columns);
      throw new SluiceError('UNRESOLVED_COLUMN', `withWatermark: no column ${eventTime}.${didYouMean(suggestions)} Columns: ${this.columns.join(', ')}`, {
        column: eventTime,
        suggestions,
      });
    }
    if (field.type !== 'timestamp') {
      throw new SluiceError('INVALID_EVENT_TIME_COLUMN', `withWatermark: column ${eventTime} must be a TIMESTAMP`, {
        column: eventTime,
      });
    }
    // As in Spark, a watermark delay may be months or years (a month counts 31 days).
    const delayMs = parseDuration(delayThreshold, 'delayThreshold', { months: true });
    return this.with({ kind: 'watermark', column: eventTime, delayMs });
  }

  /**
   * Spark's union of streams with the same columns (by position, names and types alike): the
   * query reads every input, each with its own offsets in `offsets/N` and its own `sources/i/`
   * log. Each input may carry its own withWatermark; the query's watermark then combines them by
   * `sluice.sql.streaming.multipleWatermarkPolicy` (min, the default, or max), as in Spark.
   */
  union(...others: DataFrame[]): DataFrame {
    const all: DataFrame[] = [this, ...others];
    for (const df of all) {
      if (!df.isStreaming) throw new SluiceError('UNSUPPORTED_OPERATION', 'union combines streaming DataFrames; a static side belongs in a join');
      if (df.plan.stateful || df.plan.exchange)
        throw new SluiceError('UNSUPPORTED_OPERATION', 'union must come before repartition, aggregation or deduplication');
    }
    for (const other of others) {
      const a = this.schema.map((f) => `${f.name} ${typeName(f.type)}`);
      const b = other.schema.map((f) => `${f.name} ${typeName(f.type)}`);
      const at = a.findIndex((x, i) => x !== b[i]);
      if (a.length !== b.length || at >= 0) {
        const i = at >= 0 ? at : Math.min(a.length, b.length);
        throw new SluiceError(
          'INVALID_SCHEMA',
          `union needs the same columns in the same order: column ${i + 1} is ${a[i] ?? 'missing'} on one side and ${b[i] ?? 'missing'} on the other`,
          {
            column: (this.schema[i] ?? other.schema[i])?.name as string,
          },
        );
      }
    }
    // Operators past an earlier union go into each of its inputs (stateless operators distribute over a union).
    const inputs = all.flatMap((df) => {
      if (df.plan.inputs && df.plan.ops.some((o) => o.kind === 'watermark')) {
        throw new SluiceError(
          'UNSUPPORTED_OPERATION',
          'a union of a union that has a withWatermark after it: put withWatermark on its inputs, or after the last union',
        );
      }
      return planInputs(df.plan).map((i) => ({ source: i.source, ops: [...i.ops, ...df.plan.ops] }));
    });
    const watermarked = inputs.filter((i) => i.ops.some((o) => o.kind === 'watermark'));
    const columns = new Set(watermarked.map((i) => i.ops.findLast((o) => o.kind === 'watermark')).map((o) => (o?.kind === 'watermark' ? o.column : '')));
    if (columns.size > 1) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        `the inputs of a union watermark different columns (${[...columns].join(', ')}): watermark the same event-time column on each`,
      );
    }
    const statics = all.flatMap((df) => df.plan.statics ?? []);
    return new DataFrame(this.session, { source: (inputs[0] as PlanInput).source, inputs, ops: [], post: [], ...(statics.length > 0 && { statics }) }, true);
  }

  /**
   * A stream-static join on equal columns, as Spark's `join(other, usingColumns, how)`: `on` is a
   * column name or an array of names, present on both sides with the same type; `how` is inner
   * (the default), left_outer (left, leftouter), left_semi (semi, leftsemi) or left_anti (anti,
   * leftanti). The output is the keys, the stream's other columns, then the static side's. The
   * static side is read once per query run (a restart reads it again) and sent to every worker
   * once, in a SharedArrayBuffer.
   */
  join(other: DataFrame, on: string | string[] | Column, how = 'inner'): DataFrame {
    if (on instanceof Column) {
      const keyed = withExpressionKeys(this, other, on.expr);
      if (keyed) return keyed.left.join(keyed.right, new Column(keyed.cond), how).drop(...keyed.hidden);
    }
    if (this.isStreaming && other.isStreaming) return this.streamJoin(other, on, how);
    if (!this.isStreaming) {
      throw new SluiceError('UNSUPPORTED_OPERATION', 'join takes a stream on the left and a static DataFrame (session.read) or another stream on the right');
    }
    if (this.plan.stateful) throw new SluiceError('UNSUPPORTED_OPERATION', 'join must come before the aggregation or deduplication');
    const id = `static-${randomUUID()}`;
    const common = { kind: 'join' as const, how: joinType(how), rightSchema: other.schema, broadcastId: id };
    const { keys, rightKeys, residual } = joinOn(on, this.schema, other.schema);
    const op: Op = { ...common, keys, ...(rightKeys !== undefined && { rightKeys }), ...(residual !== undefined && { residual }) };
    const joined = this.with(op);
    return new DataFrame(this.session, { ...joined.plan, statics: [...(this.plan.statics ?? []), { id, plan: other.plan }] }, true);
  }

  /**
   * A join of two streams (Spark's stream-stream join): each side's rows are kept in state until
   * the watermark says no row of the other side can match them (docs/guides/joins.md). The
   * query reads both sides' sources, the left's first; each side keeps its own operators.
   */
  private streamJoin(other: DataFrame, on: string | string[] | Column, how: string): DataFrame {
    const plan = planStreamJoin(
      { plan: this.plan, schema: this.schema },
      { plan: other.plan, schema: other.schema },
      joinOn(on, this.schema, other.schema, true),
      how,
    );
    return new DataFrame(this.session, plan, true);
  }

  /** The writer that starts a streaming DataFrame as a query; NOT_STREAMING for a static one. */
  get writeStream(): DataStreamWriter {
    if (!this.isStreaming) {
      throw new SluiceError('NOT_STREAMING', 'writeStream needs a streaming DataFrame (from session.readStream); use collect() on a static one');
    }
    return new DataStreamWriter(this);
  }

  /**
   * Runs a static DataFrame and returns its rows as JavaScript values (TIMESTAMP as Date, see
   * {@link Row}); NOT_STATIC for a streaming one.
   */
  async collect(): Promise<Row[]> {
    if (this.isStreaming) {
      throw new SluiceError('NOT_STATIC', 'collect() needs a static DataFrame (from session.read); start a streaming one with writeStream');
    }
    if (this.plan.stateful) {
      throw new SluiceError('UNSUPPORTED_OPERATION', 'aggregations and deduplications run on streaming DataFrames only');
    }
    return this.session.collectStatic(this);
  }
}

/** `df.groupBy(...)`: the aggregations of a grouping (Spark's RelationalGroupedDataset). */
export class GroupedData {
  /** The output names of the grouping keys. */
  readonly keyNames: string[];
  /** @internal The grouping keys. */
  readonly keys: Column[];

  /** @internal */
  constructor(
    /** @internal The DataFrame grouped. */
    readonly df: DataFrame,
    keys: Column[],
  ) {
    const schema = df.schema;
    this.keys = keys.map((k) => new Column(overWindowTime(k.expr, schema)));
    this.keyNames = this.keys.map((k) => {
      exprType(k.expr, schema); // unknown columns and type errors fail here
      return exprName(k.expr, schema);
    });
  }

  /** Aggregate columns: count, sum, avg, min, max, or `expr("sum(v) AS total")`. */
  agg(...aggs: Column[]): DataFrame {
    if (aggs.length === 0) throw new SluiceError('INVALID_EXPRESSION', 'agg() needs at least one aggregate');
    const specs = aggs.map((a) => {
      if (!(a instanceof AggregateColumn)) {
        throw new SluiceError('INVALID_EXPRESSION', 'agg() takes aggregate functions: count, sum, avg, min, max');
      }
      if (a.arg) exprType(a.arg, this.df.schema);
      return a.spec;
    });
    const eventTime = eventTimeColumns(this.df.plan);
    const eventTimeKey = this.keys.findIndex((k) => carriesEventTime(k.expr, eventTime));
    return this.sessionRows().withStateful({
      kind: 'aggregate',
      keys: this.keys.map((k) => k.expr),
      keyNames: this.keyNames,
      aggs: specs,
      eventTimeKey: eventTimeKey < 0 ? null : eventTimeKey,
    });
  }

  /**
   * The rows that open a session, when a key is a session window (Spark's SessionWindowing): a
   * row without a time, or whose gap (given per row) is not positive, belongs to no session.
   */
  private sessionRows(): DataFrame {
    const session = this.keys.map((k) => sessionOfKey(k.expr)).find((s) => s !== undefined);
    if (session === undefined) return this.df;
    const [time, gap] = session.args as [Expr, Expr];
    const timed: Expr = { op: 'unary', fn: 'isNotNull', expr: time };
    if (gap.op === 'lit') return this.df.filter(new Column(timed));
    const end: Expr = { op: 'binary', fn: 'plus', left: time, right: { op: 'cast', expr: gap, to: 'interval' } };
    return this.df.filter(new Column({ op: 'binary', fn: 'and', left: timed, right: { op: 'binary', fn: 'gt', left: end, right: time } }));
  }

  /** The rows of each group, in a column `count`. */
  count(): DataFrame {
    return this.agg(count('*').alias('count'));
  }

  /** The sum of each column per group, as `sum(c)`. */
  sum(...cols: string[]): DataFrame {
    return this.agg(...cols.map((c) => sum(c)));
  }

  /** The mean of each column per group, as `avg(c)`. */
  avg(...cols: string[]): DataFrame {
    return this.agg(...cols.map((c) => avg(c)));
  }

  /** The least value of each column per group, as `min(c)`. */
  min(...cols: string[]): DataFrame {
    return this.agg(...cols.map((c) => min(c)));
  }

  /** The greatest value of each column per group, as `max(c)`. */
  max(...cols: string[]): DataFrame {
    return this.agg(...cols.map((c) => max(c)));
  }

  /**
   * Spark 4.0's transformWithState: `processor` (statefulProcessor(url, exportName), a class) is
   * called with each key's rows and expired timers, and keeps typed state per key (docs/guides/arbitrary-state.md's
   * "Arbitrary state"). Options: outputSchema (DDL or a schema), outputMode ('append' or
   * 'update'), timeMode ('none', 'processingTime' or 'eventTime'; default 'none'), and
   * initialState, a static DataFrame's groupBy by keys of the same types.
   */
  transformWithState(processor: StatefulProcessorRef, options: TransformWithStateOptions): DataFrame {
    const what = 'transformWithState';
    const timeMode = timeModeOption(options?.timeMode ?? 'none');
    return this.withProcessor(this.processorOp(what, processor, options, timeMode, []), options.initialState);
  }

  /** The stream with processor `op`, and its initial state (a static DataFrame's groupBy), if any. */
  private withProcessor(op: TransformWithStateOp, initial: GroupedData | undefined): DataFrame {
    const what = op.api;
    if (initial === undefined) return this.df.withStateful(op);
    if (!(initial instanceof GroupedData) || initial.df.isStreaming) {
      throw new SluiceError('INVALID_OPTION', `${what}: initialState is a static DataFrame's groupBy(...) (session.read...groupBy(keys))`, {
        option: 'initialState',
      });
    }
    const types = (g: GroupedData): string[] => g.keys.map((k) => typeName(exprType(k.expr, g.df.schema)));
    if (JSON.stringify(types(initial)) !== JSON.stringify(types(this))) {
      throw new SluiceError(
        'DATATYPE_MISMATCH',
        `${what}: the initial state is grouped by ${types(initial).join(', ')}, the stream by ${types(this).join(', ')}: the keys must have the same types`,
        { option: 'initialState' },
      );
    }
    const id = randomUUID();
    const stateColumn = op.api === 'transformWithState' ? undefined : groupStateOfRow(op, initial);
    const withInitial: StatefulOp = {
      ...op,
      initialState: { id, schema: initial.df.schema, keys: initial.keys.map((k) => k.expr), ...(stateColumn !== undefined && { stateColumn }) },
    };
    const df = this.df.withStateful(withInitial);
    return new DataFrame(df.session, { ...df.plan, initialStates: [...(df.plan.initialStates ?? []), { id, plan: initial.df.plan }] }, true);
  }

  /**
   * Spark's flatMapGroupsWithState: `fn` (statefulProcessor(url, exportName), a function
   * `(key, rows, state) => rows`) is called with each key's rows and a GroupState, and again with
   * no rows when the key's timeout passes. Options: outputMode ('append' or 'update'),
   * timeoutConf (GroupStateTimeout; default NoTimeout), stateSchema and outputSchema.
   */
  flatMapGroupsWithState(fn: StatefulProcessorRef, options: GroupStateOptions & { outputMode: 'append' | 'update' }): DataFrame {
    return this.groupStateOp('flatMapGroupsWithState', fn, options);
  }

  /** Spark's mapGroupsWithState: as flatMapGroupsWithState, the function returning one row per call; update mode. */
  mapGroupsWithState(fn: StatefulProcessorRef, options: GroupStateOptions): DataFrame {
    return this.groupStateOp('mapGroupsWithState', fn, { ...options, outputMode: 'update' });
  }

  private groupStateOp(
    api: 'flatMapGroupsWithState' | 'mapGroupsWithState',
    fn: StatefulProcessorRef,
    options: GroupStateOptions & { outputMode: string },
  ): DataFrame {
    const timeout = options?.timeoutConf ?? GroupStateTimeout.NoTimeout;
    if (!Object.values(GroupStateTimeout).includes(timeout)) {
      throw new SluiceError(
        'INVALID_OPTION',
        `${api}: timeoutConf is GroupStateTimeout.NoTimeout, ProcessingTimeTimeout or EventTimeTimeout, got ${String(timeout)}`,
        { option: 'timeoutConf' },
      );
    }
    if (options.stateSchema === undefined)
      throw new SluiceError('INVALID_OPTION', `${api} needs a stateSchema (DDL or a type name)`, { option: 'stateSchema' });
    const schema = stateTypeOf(options.stateSchema, 'stateSchema');
    const timeMode = timeModeOfTimeout(timeout);
    return this.withProcessor({ ...this.processorOp(api, fn, options, timeMode, [{ name: GROUP_STATE, kind: 'value', schema }]), api }, options.initialState);
  }

  /** The operator of transformWithState and the GroupState APIs, its options checked. */
  private processorOp(
    what: TransformWithStateOp['api'],
    processor: StatefulProcessorRef,
    options: { outputSchema?: unknown; outputMode?: unknown },
    timeMode: TimeMode,
    variables: StateVariable[],
  ): TransformWithStateOp {
    if (processor?.kind !== 'statefulProcessor') {
      throw new SluiceError('INVALID_OPTION', `${what} takes statefulProcessor(moduleUrl, exportName)`, { option: 'processor' });
    }
    if (!this.df.isStreaming) throw new SluiceError('NOT_STREAMING', `${what} runs on a streaming DataFrame`);
    if (options?.outputSchema === undefined)
      throw new SluiceError('INVALID_OPTION', `${what} needs an outputSchema (DDL or a schema)`, { option: 'outputSchema' });
    const outputSchema = parseSchema(options.outputSchema as string, 'outputSchema');
    const mode = String(options.outputMode ?? '').toLowerCase();
    if (mode !== 'append' && mode !== 'update') {
      // Spark's words for flatMapGroupsWithState's.
      throw new SluiceError('INVALID_OPTION', `${what}: The output mode of function should be append or update, got ${String(options.outputMode)}`, {
        option: 'outputMode',
      });
    }
    const wm = watermarkOf(this.df.plan);
    const eventTime = eventTimeColumns(this.df.plan);
    const eventTimeColumn = this.df.schema.find((f) => eventTime.has(f.name) && f.type === 'timestamp')?.name ?? null;
    if (timeMode === 'eventTime' && (wm === undefined || eventTimeColumn === null)) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        what === 'transformWithState'
          ? "transformWithState with timeMode 'eventTime' needs withWatermark on a TIMESTAMP column of its input"
          : `Watermark must be specified in the query using '[Dataset/DataFrame].withWatermark()' for using event-time timeout in a [map|flatMap]GroupsWithState. Event-time timeout not supported without watermark.`,
      );
    }
    return {
      kind: 'transformWithState',
      api: what,
      processor: { moduleUrl: processor.moduleUrl, exportName: processor.exportName },
      keys: this.keys.map((k) => k.expr),
      keyNames: this.keyNames,
      outputSchema,
      outputMode: mode,
      timeMode,
      variables,
      eventTimeColumn,
    };
  }
}

/** The options of {@link GroupedData.transformWithState}. */
export interface TransformWithStateOptions {
  /** The schema of the rows the processor returns: DDL or a schema. */
  outputSchema: string | Schema;
  /** append (each row emitted once, final) or update (rows replace earlier ones of the same key). */
  outputMode: 'append' | 'update';
  /** When timers fire: `none` (the default), `processingTime` or `eventTime` (needs withWatermark); Spark's spellings too. */
  timeMode?: TimeMode | 'None' | 'ProcessingTime' | 'EventTime';
  /** A static DataFrame's groupBy by keys of the stream's key types: each row goes to handleInitialState in the first batch. */
  initialState?: GroupedData;
}

/** The options of {@link GroupedData.flatMapGroupsWithState} and {@link GroupedData.mapGroupsWithState}. */
export interface GroupStateOptions {
  /** The type of the state value: a type name (`'LONG'`), DDL of fields (a struct), or a DataType. */
  stateSchema: string | DataType;
  /** The schema of the rows the function returns: DDL or a schema. */
  outputSchema: string | Schema;
  /** When keys time out (default GroupStateTimeout.NoTimeout). */
  timeoutConf?: GroupStateTimeoutConf;
  /** A static DataFrame's groupBy(keys): each key's initial state, from its row (the stateSchema's fields, or its one column besides the keys). */
  initialState?: GroupedData;
}

/**
 * Checks that a GroupState's initial state rows can give its state: a struct state takes its fields
 * from the row by name; any other state the one column that is not a grouping key.
 */
function groupStateOfRow(op: TransformWithStateOp, initial: GroupedData): string | undefined {
  const schema = (op.variables[0] as StateVariable).schema;
  const columns = initial.df.schema;
  if (isStructType(schema)) {
    const missing = schema.struct.find((f) => !columns.some((c) => c.name === f.name));
    if (missing !== undefined) {
      throw new SluiceError('UNRESOLVED_COLUMN', `${op.api}: the initial state has no column ${missing.name} of the state's fields`, { column: missing.name });
    }
    return undefined;
  }
  const values = columns.filter((c) => !initial.keyNames.includes(c.name));
  if (values.length !== 1) {
    throw new SluiceError('INVALID_OPTION', `${op.api}: an initial state of one value has one column besides its grouping keys, not ${values.length}`, {
      option: 'initialState',
    });
  }
  return (values[0] as (typeof values)[number]).name;
}

/** Spark's TimeMode names, in any case. */
function timeModeOption(v: unknown): TimeMode {
  const t = String(v).toLowerCase().replaceAll('_', '');
  if (t === 'none') return 'none';
  if (t === 'processingtime') return 'processingTime';
  if (t === 'eventtime') return 'eventTime';
  throw new SluiceError('INVALID_OPTION', `transformWithState: timeMode is 'none', 'processingTime' or 'eventTime', got ${String(v)}`, { option: 'timeMode' });
}

/**
 * `window(w, ...)` over a window column (an earlier aggregation's, as Spark allows): over its
 * event time, window_time(w). Other expressions as they are.
 */
function overWindowTime(e: Expr, schema: Schema): Expr {
  if (e.op === 'alias') return { ...e, expr: overWindowTime(e.expr, schema) };
  if (e.op !== 'window' || !isStructType(exprType(e.expr, schema))) return e;
  return { ...e, expr: { op: 'call', fn: 'window_time', args: [e.expr] } };
}

const JOIN_TYPES: Record<string, JoinType> = {
  inner: 'inner',
  left: 'left_outer',
  leftouter: 'left_outer',
  semi: 'left_semi',
  leftsemi: 'left_semi',
  anti: 'left_anti',
  leftanti: 'left_anti',
};

/** Spark's join type names, in any case, with or without underscores. */
function joinType(how: string): JoinType {
  const t = JOIN_TYPES[String(how).toLowerCase().replaceAll('_', '')];
  if (t === undefined) {
    throw new SluiceError('UNSUPPORTED_OPERATION', `join type ${how}: a stream joins a static side as inner, left_outer, left_semi or left_anti`, {
      option: 'how',
    });
  }
  return t;
}

/** A join's `on`: names (a join on equal columns of those names), or a condition whose equalities of a left and a right column are the keys. */
function joinOn(
  on: string | string[] | Column,
  left: Schema,
  right: Schema,
  streams = false,
): { keys: string[]; rightKeys?: string[]; nullSafe?: boolean[]; residual?: Expr } {
  if (on instanceof Column) return equiJoinKeys(on.expr, left, right, streams);
  if (typeof on === 'string' || (Array.isArray(on) && on.length > 0 && on.every((k) => typeof k === 'string')))
    return { keys: typeof on === 'string' ? [on] : on };
  throw new SluiceError('INVALID_OPTION', 'join on: a column name, an array of names, or a Column condition', { option: 'on' });
}

/**
 * A join condition as Spark plans it: the equalities of a left column and a right column among its
 * `and`-ed parts are the keys (for two streams also a null-safe `<=>` one, under which null matches
 * null); the other parts (any boolean expression over both sides) are the residual, checked on each
 * pair of rows with equal keys. A condition without such an equality would join every pair (a
 * cross join): refused, as is a name on both sides (there is no way to say which side it means).
 */
function equiJoinKeys(
  cond: Expr,
  left: Schema,
  right: Schema,
  streams: boolean,
): { keys: string[]; rightKeys: string[]; nullSafe?: boolean[]; residual?: Expr } {
  const inLeft = (name: string): boolean => left.some((f) => f.name === name);
  const inRight = (name: string): boolean => right.some((f) => f.name === name);
  for (const name of new Set(exprColumns(cond))) {
    if (inLeft(name) && inRight(name)) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        `column ${name} is on both sides of the join: join on its name (on = '${name}'), or rename one side's first`,
        { column: name },
      );
    }
    if (!inLeft(name) && !inRight(name)) {
      const suggestions = suggest(
        name,
        [...left, ...right].map((f) => f.name),
      );
      throw new SluiceError('UNRESOLVED_COLUMN', `join condition: no column ${name} on either side.${didYouMean(suggestions)}`, { column: name, suggestions });
    }
  }
  const keys: string[] = [];
  const rightKeys: string[] = [];
  const nullSafe: boolean[] = [];
  const rest: Expr[] = [];
  /** The pair [left column, right column] of two operands that are columns of different sides. */
  const pairOf = (a: Expr, b: Expr): [string, string] | undefined => {
    if (a.op !== 'col' || b.op !== 'col' || inLeft(a.name) === inLeft(b.name)) return undefined;
    return inLeft(a.name) ? [a.name, b.name] : [b.name, a.name];
  };
  const visit = (expr: Expr): void => {
    let e = expr;
    while (e.op === 'alias') e = e.expr; // expr('a <=> b') names its result
    if (e.op === 'binary' && e.fn === 'and') {
      visit(e.left);
      visit(e.right);
      return;
    }
    const safe = streams ? nullSafeOperands(e) : undefined;
    const pair = e.op === 'binary' && e.fn === 'equalTo' ? pairOf(e.left, e.right) : safe && pairOf(...safe);
    if (pair === undefined) {
      rest.push(e);
      return;
    }
    keys.push(pair[0]);
    rightKeys.push(pair[1]);
    nullSafe.push(safe !== undefined);
  };
  visit(cond);
  if (keys.length === 0) {
    throw streams
      ? new SluiceError('UNSUPPORTED_OPERATION', 'Stream-stream join without equality predicate is not supported', { option: 'on' })
      : new SluiceError('UNSUPPORTED_OPERATION', 'a join condition needs an equality of a stream column and a static column (without one it is a cross join)', {
          option: 'on',
        });
  }
  const residual = andAll(rest);
  return { keys, rightKeys, ...(nullSafe.some((x) => x) && { nullSafe }), ...(residual !== undefined && { residual }) };
}

/**
 * A condition's equalities of an expression of one side's columns and one of the other's
 * (`mod(auction, 10000) = key`), as Spark's optimizer plans them: each expression becomes a
 * column of its side (`__join_key_<i>_l`, `__join_key_<i>_r`), their equality a key, and the join
 * drops them again. Undefined when every equality is of plain columns already.
 */
function withExpressionKeys(left: DataFrame, right: DataFrame, cond: Expr): { left: DataFrame; right: DataFrame; cond: Expr; hidden: string[] } | undefined {
  const sideOf = (e: Expr): 'l' | 'r' | undefined => {
    const names = exprColumns(e);
    if (names.length === 0) return undefined;
    if (names.every((n) => left.schema.some((f) => f.name === n))) return 'l';
    if (names.every((n) => right.schema.some((f) => f.name === n))) return 'r';
    return undefined;
  };
  const hidden: string[] = [];
  let l = left;
  let r = right;
  const rewrite = (expr: Expr): Expr => {
    let e = expr;
    while (e.op === 'alias') e = e.expr;
    if (e.op === 'binary' && e.fn === 'and') return { ...e, left: rewrite(e.left), right: rewrite(e.right) };
    if (e.op !== 'binary' || e.fn !== 'equalTo' || (e.left.op === 'col' && e.right.op === 'col')) return e;
    const [a, b] = [sideOf(e.left), sideOf(e.right)];
    if (a === undefined || b === undefined || a === b) return e;
    const [onLeft, onRight] = a === 'l' ? [e.left, e.right] : [e.right, e.left];
    const i = hidden.length / 2;
    const [ln, rn] = [`__join_key_${i}_l`, `__join_key_${i}_r`];
    hidden.push(ln, rn);
    l = l.withColumn(ln, new Column(onLeft));
    r = r.withColumn(rn, new Column(onRight));
    return { ...e, left: { op: 'col', name: ln }, right: { op: 'col', name: rn } };
  };
  const rewritten = rewrite(cond);
  return hidden.length === 0 ? undefined : { left: l, right: r, cond: rewritten, hidden };
}

/** The operands of `a <=> b` (Column.eqNullSafe and the SQL operator build the same CASE WHEN), if `e` is one. */
function nullSafeOperands(e: Expr): [Expr, Expr] | undefined {
  if (e.op !== 'when' || e.branches.length !== 2 || e.otherwise?.op !== 'binary' || e.otherwise.fn !== 'equalTo') return undefined;
  const [a, b] = [e.otherwise.left, e.otherwise.right];
  const isNullOf = (x: Expr, of: Expr): boolean => x.op === 'unary' && x.fn === 'isNull' && JSON.stringify(x.expr) === JSON.stringify(of);
  const [first, second] = e.branches as [{ cond: Expr; value: Expr }, { cond: Expr; value: Expr }];
  const falseLit = second.value.op === 'lit' && second.value.value === false;
  return isNullOf(first.cond, a) && isNullOf(first.value, b) && isNullOf(second.cond, b) && falseLit ? [a, b] : undefined;
}
