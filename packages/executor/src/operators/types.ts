/** Operators of a plan, stateless and stateful: plain data that crosses to the workers. */
import type { Expr, GeneratorName } from '../expressions/types.js';
import type { DataType, Schema } from '../schema/types.js';

/** The joins of a stream with a static table (Spark's names; the stream is the left side). */
export type JoinType = 'inner' | 'left_outer' | 'left_semi' | 'left_anti';

/** The joins of two streams (Spark's names; left anti is refused, as in Spark). */
export type StreamJoinType = 'inner' | 'left_outer' | 'right_outer' | 'full_outer' | 'left_semi' | 'left_anti';

/** One side of a join of two streams: its rows' schema, and what of them carries event time. */
export interface StreamJoinSide {
  schema: Schema;
  /** The side's columns that carry its watermark (the watermarked column, and windows or aliases of it). */
  watermarked: string[];
  /**
   * The watermarked column itself (a TIMESTAMP, or a window over it): a row at or below the late
   * watermark is dropped, and a value-evicted side's rows expire by it. Null without a watermark.
   */
  eventTime: string | null;
  /**
   * How the side's state rows expire (Spark's state watermark predicates): `key`, when one of its
   * join keys carries the watermark (a row goes once that key's time is at or below the watermark);
   * `value`, when the condition bounds its event time by the other side's watermark
   * (stateValueWatermark); null: the side's state is kept for ever.
   */
  eviction: { kind: 'key'; key: number } | { kind: 'value' } | null;
}

/** Stateless operators, applied in order to every row of a task. */
export type Op =
  | { kind: 'filter'; cond: Expr }
  /** Each expression's output name is its alias, else its column name, else its printed form. */
  | { kind: 'project'; exprs: Expr[] }
  /**
   * A generator over `expr` (an array or a map): each row becomes one row per element, with the
   * generator's columns, named `names`, after the row's own (none for an empty or null value unless
   * the generator is an `_outer` one, which gives one row of nulls).
   */
  | { kind: 'generate'; fn: GeneratorName; expr: Expr; names: string[] }
  /** withWatermark: rows pass unchanged; the task reports min/max/avg of `column` here. */
  | { kind: 'watermark'; column: string; delayMs: number }
  /**
   * A join with a static table on equal `keys` (Spark's `join(other, usingColumns, how)`): the
   * output is the keys, the stream's other columns, then the table's (none for semi and anti).
   * With `rightKeys` (a condition `streamKey = tableKey AND …`), stream column `keys[i]` matches
   * table column `rightKeys[i]`, and the output is every stream column, then every table column.
   * The table's rows (engine form, msgpack) come in `broadcast`, shared by every task of a run;
   * a worker indexes them once per `broadcastId`.
   */
  | {
      kind: 'join';
      how: JoinType;
      keys: string[];
      rightKeys?: string[];
      /** The rest of a join condition: a pair of rows with equal keys matches only where it is true. */
      residual?: Expr;
      rightSchema: Schema;
      broadcastId: string;
      broadcast?: SharedArrayBuffer;
    };

export type AggFn =
  | 'count'
  | 'sum'
  | 'avg'
  | 'min'
  | 'max'
  | 'first'
  | 'last'
  | 'collect_list'
  | 'collect_set'
  | 'var_samp'
  | 'var_pop'
  | 'stddev_samp'
  | 'stddev_pop'
  | 'min_by'
  | 'max_by'
  | 'approx_count_distinct'
  | 'percentile_approx'
  | 'percentile';

/** One aggregate of groupBy(...).agg(...); `arg` null is count(*); min_by and max_by take named_struct(value, ordering). */
export interface AggSpec {
  fn: AggFn;
  arg: Expr | null;
  name: string;
  /** first and last: skip nulls. */
  ignoreNulls?: boolean;
  /** approx_count_distinct: the relative standard deviation (Spark's default 0.05). */
  rsd?: number;
  /** percentile and percentile_approx: the percentages, and whether they were given as an array (the result is then an array). */
  percentages?: number[];
  percentagesArray?: boolean;
  /** percentile_approx: the accuracy (Spark's default 10000); 1/accuracy is the relative error. */
  accuracy?: number;
}

/** The stateful operator of a query (one per query). */
export type StatefulOp =
  | {
      kind: 'aggregate';
      /** Grouping expressions, named by `keyNames`; a window expression among them is a struct key. */
      keys: Expr[];
      keyNames: string[];
      aggs: AggSpec[];
      /** Index in `keys` of the event-time key (a window, a session window, or the watermarked column), if any. */
      eventTimeKey: number | null;
      /**
       * Only the first `routeKeys` keys choose a partial's key group (all of them when absent): the
       * map side of a session window, whose partials of one key and several session starts must
       * meet in one state task (sessionWindow/task.ts).
       */
      routeKeys?: number;
    }
  | {
      kind: 'dropDuplicates';
      columns: string[];
      /** The watermarked column when it is among `columns`: late rows drop, state expires. */
      eventTimeColumn: string | null;
    }
  | {
      kind: 'dropDuplicatesWithinWatermark';
      columns: string[];
      eventTimeColumn: string;
      delayMs: number;
    }
  /**
   * A join of two streams (Spark's symmetric hash join): left column `leftKeys[i]` equals right
   * column `rightKeys[i]`, and `residual` holds of the pair. `using` (a join on names): the keys
   * once, then each side's other columns; else every left column, then every right column.
   */
  | {
      kind: 'streamJoin';
      how: Exclude<StreamJoinType, 'left_anti'>;
      leftKeys: string[];
      rightKeys: string[];
      /** Keys compared null-safely (`<=>`): a null there matches a null. */
      nullSafe?: boolean[];
      using: boolean;
      residual?: Expr;
      left: StreamJoinSide;
      right: StreamJoinSide;
    }
  /**
   * Spark's streaming limit (StreamingGlobalLimitExec): the first `n` rows of the stream, then
   * none; the count emitted so far is its state, one value under one key. After an aggregation in
   * complete mode (`afterAggregation`, the query's mode Complete) it limits each batch's whole
   * result instead, and keeps no state.
   */
  | { kind: 'limit'; n: number; afterAggregation: boolean }
  | TransformWithStateOp;

/**
 * How a processor's time advances (Spark's TimeMode): `none` (no timers), `processingTime` (timers
 * fire by batch timestamps) or `eventTime` (by the watermark). flatMapGroupsWithState's timeouts map onto it.
 */
export type TimeMode = 'none' | 'processingTime' | 'eventTime';

/**
 * A state variable of a processor, as its init declares it (the driver runs init once to learn
 * them): a value, a list of values, or a map, each with the type of what it holds and an optional
 * time to live (processing time, from the batch that wrote the value).
 */
export type StateVariable =
  | { name: string; kind: 'value' | 'list'; schema: DataType; ttlMs?: number }
  | { name: string; kind: 'map'; keySchema: DataType; schema: DataType; ttlMs?: number };

/**
 * Arbitrary state per key (Spark's transformWithState, and the GroupState API of
 * flatMapGroupsWithState and mapGroupsWithState): a user processor, loaded from `processor` in
 * every worker, is called with each key's rows and its expired timers, and keeps typed state
 * variables per key (processor/).
 */
export interface TransformWithStateOp {
  kind: 'transformWithState';
  api: 'transformWithState' | 'flatMapGroupsWithState' | 'mapGroupsWithState';
  processor: { moduleUrl: string; exportName: string };
  /** Grouping expressions, named by `keyNames`: the key the processor is called with has them as fields. */
  keys: Expr[];
  keyNames: string[];
  /** Rows the processor emits, in this schema. */
  outputSchema: Schema;
  /** The processor's output mode, as Spark's transformWithState and flatMapGroupsWithState take it. */
  outputMode: 'append' | 'update';
  timeMode: TimeMode;
  /** Declared by the processor's init (transformWithState), or the one GroupState value (`state`). */
  variables: StateVariable[];
  /** The watermarked input column: in eventTime mode, rows at or below the late watermark are dropped. */
  eventTimeColumn: string | null;
  /**
   * Initial state (transformWithState's initialState): rows of a static DataFrame grouped by
   * `keys` over `schema`, given to handleInitialState in the query's first batch (`rows`: set by the
   * driver for that batch only, msgpack of engine-form rows). A GroupState's initial value is the
   * row's `stateColumn`, or without one the row's fields of its struct state.
   */
  initialState?: { id: string; schema: Schema; keys: Expr[]; rows?: Uint8Array; stateColumn?: string };
}

/**
 * How a streaming query writes its result each batch (Spark's OutputMode): `append` only rows
 * that are final (a window's count once the watermark passes its end), `update` the rows that
 * changed, `complete` the whole result.
 */
export type OutputMode = 'append' | 'update' | 'complete';
