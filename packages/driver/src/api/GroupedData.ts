/**
 * `df.groupBy(...)`'s GroupedData: the aggregations of a grouping, and the stateful processors
 * (transformWithState, flatMapGroupsWithState, mapGroupsWithState) with their options and
 * initial state.
 */
import { randomUUID } from 'node:crypto';
import {
  GROUP_STATE,
  GroupStateTimeout,
  parseSchema,
  stateTypeOf,
  timeModeOfTimeout,
  exprName,
  exprType,
  isStructType,
  sessionOfKey,
  typeName,
  type Expr,
  type Schema,
  type StatefulOp,
  type DataType,
  type GroupStateTimeoutConf,
  type StateVariable,
  type TimeMode,
  type TransformWithStateOp,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column } from './Column.js';
import { AggregateColumn, avg, count, max, min, sum } from './aggregates.js';
import type { DataFrame } from './DataFrame.js';
import { carriesEventTime, eventTimeColumns, watermarkOf } from '../plan/LogicalPlan.js';
import type { StatefulProcessorRef } from './functions.js';

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
    return df.withPlan({ ...df.plan, initialStates: [...(df.plan.initialStates ?? []), { id, plan: initial.df.plan }] });
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
