/**
 * A DataFrame is a source, a chain of stateless operators, then stateful operators (an
 * aggregation, a deduplication or a join of two streams; plan.operators), each followed by more
 * stateless operators. Every operator is checked against the schema when it
 * is called, so an unknown column fails at the line naming it.
 */
import { randomUUID } from 'node:crypto';
import { expandStar, exprType, typeName, type Expr, type Op, type Schema, type StatefulOp, type Row } from '@sluice/executor';
import { didYouMean, SluiceError, suggest } from '@sluice/state';
import { Column, toColumn } from './Column.js';
import type { Session } from './Session.js';
import { DataStreamWriter } from './DataStreamWriter.js';
import { GroupedData } from './GroupedData.js';
import {
  eventTimeColumns,
  planInputs,
  planOutput,
  statefulOperators,
  watermarkDelayOf,
  watermarkOf,
  type ChainedOperator,
  type LogicalPlan,
  type PlanInput,
} from '../plan/LogicalPlan.js';
import { parseDuration } from '../conf/parsers.js';
import { planStreamJoin } from '../plan/StreamJoinPlanner.js';
import { equiJoinKeys, expressionKeys, joinType } from '../plan/joins.js';
import { parseColumn } from './sql/parseExpression.js';
import { generatorOf } from './generators.js';
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
    const { operators, exchange } = this.plan;
    const last = operators?.at(-1);
    const plan = last
      ? { ...this.plan, operators: [...(operators as ChainedOperator[]).slice(0, -1), { ...last, post: [...last.post, op] }] }
      : exchange
        ? { ...this.plan, exchange: { ...exchange, post: [...exchange.post, op] } }
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
    if (!this.isStreaming || this.plan.operators || this.plan.exchange || this.plan.inputs) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'repartition is supported once, in a stateless streaming query without union (an aggregation shuffles by its keys already)',
      );
    }
    const keys = cols.map((c) => toColumn(c).expr);
    for (const k of keys) exprType(k, this.schema);
    return new DataFrame(this.session, { ...this.plan, exchange: { keys, ...(partitions !== undefined && { partitions }), post: [] } }, true);
  }

  /** @internal A new DataFrame of the same session over `plan`, a stream or not as this one is. */
  withPlan(plan: LogicalPlan): DataFrame {
    return new DataFrame(this.session, plan, this.isStreaming);
  }

  /** @internal A new DataFrame with `op` as its next stateful operator. */
  withStateful(op: StatefulOp): DataFrame {
    if (this.plan.exchange) throw new SluiceError('UNSUPPORTED_OPERATION', 'a query with repartition cannot aggregate, deduplicate or limit yet');
    // Past a first stateful operator, the next ones chain (Spark's multiple stateful operators).
    return new DataFrame(this.session, { ...this.plan, operators: [...(this.plan.operators ?? []), { stateful: op, post: [] }] }, this.isStreaming);
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
   * The first `n` rows of the stream, then none (Spark's streaming limit): the count emitted so far
   * is kept in state, across batches and restarts, and rows pass in the order of the batch. In
   * Append output mode, and in Complete mode around one aggregation (after it, the limit takes
   * each batch's whole result and keeps no state). Update mode is refused, as in Spark. A static
   * DataFrame has no limit yet. See docs/guides/stateful-operators.md.
   */
  limit(n: number): DataFrame {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw new SluiceError('INVALID_OPTION', `limit needs a non-negative integer number of rows, got ${String(n)}`, { option: 'n' });
    }
    if (!this.isStreaming) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        'limit on a static DataFrame is not supported yet: limit a streaming DataFrame, or the rows collect() returns',
      );
    }
    // limit(a).limit(b) is limit(min(a, b)), as Spark's optimizer combines adjacent limits.
    const operators = this.plan.operators ?? [];
    const last = operators.at(-1);
    if (last?.stateful.kind === 'limit' && last.post.length === 0) {
      const combined = { ...last, stateful: { ...last.stateful, n: Math.min(n, last.stateful.n) } };
      return this.withPlan({ ...this.plan, operators: [...operators.slice(0, -1), combined] });
    }
    const afterAggregation = statefulOperators(this.plan).some((o) => o.stateful.kind === 'aggregate');
    return this.withStateful({ kind: 'limit', n, afterAggregation });
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
    if (this.plan.operators && timed.length > 1) {
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
    if (this.plan.operators) {
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
      if (df.plan.operators || df.plan.exchange)
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
    return new DataFrame(this.session, { source: (inputs[0] as PlanInput).source, inputs, ops: [], ...(statics.length > 0 && { statics }) }, true);
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
    const keyed = on instanceof Column ? expressionKeys(this.schema, other.schema, on.expr) : undefined;
    if (keyed) {
      const left = keyed.left.reduce<DataFrame>((df, [name, e]) => df.withColumn(name, new Column(e)), this);
      const right = keyed.right.reduce<DataFrame>((df, [name, e]) => df.withColumn(name, new Column(e)), other);
      return left.join(right, new Column(keyed.cond), how).drop(...keyed.hidden);
    }
    if (this.isStreaming && other.isStreaming) return this.streamJoin(other, on, how);
    if (!this.isStreaming) {
      throw new SluiceError('UNSUPPORTED_OPERATION', 'join takes a stream on the left and a static DataFrame (session.read) or another stream on the right');
    }
    if (this.plan.operators) throw new SluiceError('UNSUPPORTED_OPERATION', 'join must come before the aggregation or deduplication');
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
    if (this.plan.operators) {
      throw new SluiceError('UNSUPPORTED_OPERATION', 'aggregations and deduplications run on streaming DataFrames only');
    }
    return this.session.collectStatic(this);
  }
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
