/**
 * The contract every stateful operator kind implements, in two parts. An operator is plain data in
 * the plan (StatefulOp, types.ts); its kind gives what the engine does with it:
 *
 * - OperatorPlan: what the driver plans with (registry.ts finds it by kind): its names, whether
 *   it uses the watermark, its output schema and event-time columns, the expressions its map side
 *   evaluates, and what its stored values say to a repartition. It lives in `<kind>/plan.ts`,
 *   which imports none of the kind's task code, so the engine library (the package entry) never
 *   loads a batch.
 * - OperatorTask: what runs in a worker thread (tasks.ts finds it by kind): the map side that
 *   turns a task's rows into shuffle records, and the batch that runs on the shard owning those
 *   records' keys. It lives in `<kind>/task.ts`.
 *
 * A kind's batch (`run`) gets a StateContext (stateContext.ts), which owns what every operator
 * needs alike: the late-row test, paged eviction through the time index, the writer that records
 * undo priors, the counters, and the decoded-value cache. docs/internals/operators.md tells how to
 * add a kind.
 */
import type { IndexTimeOf, ShardStore } from '@sluice/state';
import type { ColumnBatch } from '../columns/vectors.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import type { Expr } from '../expressions/types.js';
import type { Row, Schema } from '../schema/types.js';
import type { ShuffleBlock, StateLayoutMsg } from '../task/messages.js';
import type { StateContext } from './stateContext.js';
import type { StatefulOp } from './types.js';

/**
 * The kinds of stateful operators. Two plan operators carry two kinds each: an aggregation grouped
 * by a session window is a session window, and a transformWithState operator of the GroupState API
 * is flatMapGroupsWithState (Spark's execs of their own, with their own names and state).
 */
export type OperatorKind =
  | 'aggregate'
  | 'sessionWindow'
  | 'dropDuplicates'
  | 'dropDuplicatesWithinWatermark'
  | 'streamJoin'
  | 'transformWithState'
  | 'flatMapGroupsWithState'
  | 'limit';

export interface PartitionedPartials {
  /** One block per partition that has records, in partition order. */
  blocks: ShuffleBlock[];
  /** Records over all blocks: distinct keys of the task (rows, for a kind that sends every row). */
  numRecords: number;
  /** Late rows dropped before keys were combined. */
  numLate: number;
}

/** A map task's side of the operator, fed one row at a time (synchronous: udfs are loaded before). */
export interface Partials {
  add(row: Row): void;
  finish(): PartitionedPartials;
}

/** A map side fed column batches (of the schema entering the operator; a batch is valid only during the call). */
export interface ColumnPartials {
  addBatch(batch: ColumnBatch): void;
  finish(): PartitionedPartials;
}

export interface MapSideInput {
  /** The rows' schema, entering the operator. */
  schema: Schema;
  layout: StateLayoutMsg;
  udfs: UdfRegistry;
  /** Rows whose event time is at or below it are late (null: none is). */
  lateThresholdMs: number | null;
  /** A join of two streams: the side this task's rows are on. */
  joinSide: 0 | 1;
}

/** The plan part of a kind: what the driver asks of it (a module that does not import the kind's task). */
export interface OperatorPlan<O extends StatefulOp = StatefulOp> {
  readonly kind: OperatorKind;
  /** Spark's name of the operator: progress's `stateOperators[].operatorName`, and the state layout file's record. */
  readonly progressName: string;
  /** Whether it drops late rows and evicts by the watermark, in a query that has one and is not in complete mode. */
  usesWatermark(op: O): boolean;
  /**
   * Whether its map side drops late rows (by the task's late threshold), before it combines rows:
   * a deduplication, so that a late row cannot hide an on-time one, and a join. The others drop
   * late keys in the batch (StateContext.isLate).
   */
  readonly lateOnMapSide: boolean;
  /** The watermark it passes on to the operator after it, from its own (Spark's produceOutputWatermark); absent: its own. */
  outputWatermark?(op: O, watermarkMs: number): number | undefined;
  /** The columns of its output that carry event time, given those of its input (a watermark after it is on them). */
  eventTimeColumnsOut(op: O, input: ReadonlySet<string>): Set<string>;
  /** The rows it emits, from rows of `input` (it checks the columns it names). */
  outputSchema(op: O, input: Schema): Schema;
  /** The expressions its map side evaluates (their udfs are loaded first). */
  mapSideExprs(op: O): Expr[];
  /**
   * Its values as written before the state value header (@sluice/state stateValue.ts), which tells
   * a value's index time and rows itself: what a repartition needs of them. A kind newer than the
   * header has none.
   */
  oldValues?: {
    /** A stored row's eviction index time, read from the row (a repartition writes its index entry beside it). */
    indexTimeOf(op: O, inputSchema: Schema, usesWatermark: boolean): IndexTimeOf;
    /** The rows a stored value holds, for a kind whose value holds several (a repartition counts rows, not keys). */
    rowsIn?(value: Uint8Array): number;
  };
}

/** The task part of a kind: what runs in a worker thread, in map tasks and in the state task of a shard. */
export interface OperatorTask<O extends StatefulOp = StatefulOp> {
  mapSide(op: O, input: MapSideInput): Partials;
  /** Its map side over column batches, for a kind whose map side takes them (a map task whose operators run on columns then feeds it batches). */
  mapSideColumns?(op: O, input: MapSideInput): ColumnPartials;
  /** The aggregation its map side runs, when it runs one: a map task over column batches then runs it on columns. */
  mapSideAggregation?(op: O): Extract<StatefulOp, { kind: 'aggregate' }>;
  /** A batch of one shard: reads and changes state through `ctx`, fills its counters, returns the rows it emits. */
  run(ctx: StateContext, op: O): Promise<Row[]>;
  /** After a batch's commit: when the shard next needs a batch without data (processing-time timers); undefined: never. */
  wakeMs?(store: ShardStore, op: O): Promise<number | undefined>;
}

/** A kind whole: its plan part (registry.ts) and its task part (tasks.ts). */
export type StatefulOperator<O extends StatefulOp = StatefulOp> = OperatorPlan<O> & OperatorTask<O>;
