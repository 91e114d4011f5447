/**
 * Plans and runs the tasks of one micro-batch (Spark's IncrementalExecution). A stateless batch is
 * one stage: each task reads a split, runs the operators and delivers its rows to the sink. A
 * stateful batch is two: map tasks (any slot) shuffle partial results into blocks per partition;
 * then one state task per shard, on the slot owning the shard, merges them into the state store
 * and delivers the operator's output. The shuffle exchange holds the blocks until the state stage
 * is done, so a retried state task reads them again.
 */
import { planOutputSchema } from '@sluice/executor';
import type {
  Expr,
  Op,
  EventTimeStats,
  InputSplit,
  MapTask,
  Schema,
  StateOperatorMetrics,
  StateTask,
  StatelessTask,
  TaskRequest,
  TaskSuccess,
} from '@sluice/executor';
import { layoutCounts } from '../checkpoint/StateLayoutFile.js';
import { statefulInputSchema, type LogicalPlan } from '../plan/LogicalPlan.js';
import type { OutputMode } from '../plan/QuerySpec.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import type { StreamSink } from '../sinks/Sink.js';
import { ShuffleExchange } from './ShuffleExchange.js';
import type { StatefulOperatorInfo } from './StatefulOperatorInfo.js';
import type { WorkerBudget } from '@sluice/state';

export interface SplitOfSource {
  source: number;
  input: InputSplit;
  schema: Schema;
}

/** The state stage of a stateful query. */
export interface StatefulStage {
  info: StatefulOperatorInfo;
  /** The shard options of a batch (its share of the worker budgets); `check`: refuse a share too small. */
  storeOptions: (check?: boolean) => StateTask['storeOptions'];
  workerBudget: WorkerBudget;
  /** Schema of the rows entering the stateful operator. */
  stateInputSchema: Schema;
  hasWatermark: boolean;
}

/** A batch's physical plan: its first stage's tasks, and the partitions of each state task. */
export interface BatchPlan {
  batchId: number;
  watermarkMs: number;
  /** The sink already holds this batch (a replay): tasks compute but write nothing. */
  committed: boolean;
  splits: SplitOfSource[];
  firstStage: TaskRequest[];
  /** Index: shard. Empty for a stateless query. */
  shardPartitions: number[][];
  /** A stateless shuffle's partitions (repartition), when the plan has one. */
  shufflePartitions?: number;
}

/** A stateless shuffle's partitions, and the reduce tasks they were coalesced into. */
export interface ShuffleStats {
  numShufflePartitions: number;
  numCoalescedPartitions: number;
}

export interface BatchExecution {
  /** Tasks that delivered output to the sink (stateless tasks or state tasks). */
  outputs: TaskSuccess[];
  inputRows: number[];
  eventTime: EventTimeStats | undefined;
  /** The same, per source (a union's watermark inputs). */
  eventTimeBySource: Array<EventTimeStats | undefined>;
  state: StateOperatorMetrics | undefined;
  shuffle?: ShuffleStats;
}

/**
 * A join whose static side is too large to broadcast (autoBroadcastJoinThreshold): the stream is
 * shuffled by the join keys, and each reduce task joins its partition with that partition of the
 * static side.
 */
export interface JoinShuffle {
  /** Index in `plan.ops` of the join. */
  at: number;
  keys: Expr[];
  partitions: number;
  /** The static side's rows, by partition (hashed as the stream's rows are). */
  parts: SharedArrayBuffer[];
}

export class IncrementalExecution {
  /** The static sides of the plan's joins, by their plan id, as this run read them. */
  broadcasts: ReadonlyMap<string, SharedArrayBuffer> = new Map();
  /** The join this run shuffles for, if its static side is too large to broadcast. */
  joinShuffle: JoinShuffle | undefined;

  constructor(
    private readonly queryId: string,
    private readonly runId: string,
    private readonly plan: LogicalPlan,
    private readonly sink: StreamSink,
    private readonly outputMode: OutputMode,
    private readonly scheduler: TaskScheduler,
    private readonly stateful: StatefulStage | undefined,
    private readonly pool: string,
    /** Coalescing of a stateless shuffle's partitions (adaptive execution): the target bytes, or undefined when off. */
    private readonly coalesceToBytes?: number,
  ) {}

  /** The tasks of batch `batchId` over `splits`, before any of them runs. */
  planBatch(batchId: number, watermarkMs: number, splits: SplitOfSource[], shufflePartitions?: number): BatchPlan {
    const committed = this.sink.isCommitted(batchId);
    const join = this.joinShuffle;
    const exchange = this.plan.exchange ?? (join && { keys: join.keys });
    const partitions = join ? join.partitions : shufflePartitions;
    const mapOps = this.bindJoins(join ? this.plan.ops.slice(0, join.at) : this.plan.ops);
    const firstStage = splits.map((s, partition): TaskRequest =>
      exchange && partitions !== undefined
        ? {
            kind: 'exchange',
            queryId: this.queryId,
            runId: this.runId,
            batchId,
            partition,
            attempt: 0,
            input: s.input,
            inputSchema: s.schema,
            ops: mapOps,
            keys: exchange.keys,
            partitions,
          }
        : this.firstStageTask(batchId, partition, s, committed, watermarkMs),
    );
    const info = this.stateful?.info;
    const shardPartitions = info ? Array.from({ length: info.shards }, (_, shard) => info.partitionsOf(shard)) : [];
    return { batchId, watermarkMs, committed, splits, firstStage, shardPartitions, ...(exchange && partitions !== undefined && { shufflePartitions: partitions }) };
  }

  /**
   * The reduce side of a stateless shuffle: the map side's blocks by partition, adjacent small
   * partitions coalesced up to `coalesceToBytes` (never a stateful shuffle), each group one task
   * running the operators after the repartition into the sink. A round-robin repartition's
   * partition over that size is split at its blocks (its rows need not stay together; rows
   * hashed by key do).
   */
  private async reduceShuffle(batch: BatchPlan, first: TaskSuccess[]): Promise<{ outputs: TaskSuccess[]; shuffle: ShuffleStats }> {
    const n = batch.shufflePartitions as number;
    const blocks: Uint8Array[][] = Array.from({ length: n }, () => []);
    for (const r of first) for (const b of r.blocks ?? []) (blocks[b.partition] as Uint8Array[]).push(b.data);
    const groups: Uint8Array[][] = [];
    const join = this.joinShuffle;
    // A join's partitions each meet their own part of the static side: never coalesced.
    if (this.coalesceToBytes === undefined || join) groups.push(...blocks);
    else {
      let current: Uint8Array[] = [];
      let bytes = 0;
      const target = this.coalesceToBytes;
      const splittable = (this.plan.exchange?.keys.length ?? 0) === 0;
      for (const p of blocks) {
        const size = p.reduce((s, b) => s + b.byteLength, 0);
        if (current.length > 0 && bytes + size > target) {
          groups.push(current);
          current = [];
          bytes = 0;
        }
        if (splittable && size > target) {
          for (const b of p) {
            if (current.length > 0 && bytes + b.byteLength > target) {
              groups.push(current);
              current = [];
              bytes = 0;
            }
            current.push(b);
            bytes += b.byteLength;
          }
          continue;
        }
        current.push(...p);
        bytes += size;
      }
      groups.push(current);
    }
    const schema = join ? planOutputSchema(this.plan.ops.slice(0, join.at), this.plan.source.schema) : statefulInputSchema(this.plan);
    const post = this.bindJoins(this.plan.post);
    const opsOf = (partition: number): Op[] => {
      if (!join) return post;
      const op = this.plan.ops[join.at] as Extract<Op, { kind: 'join' }>;
      const part = { ...op, broadcastId: `${this.runId}:${op.broadcastId}:${partition}`, broadcast: join.parts[partition] as SharedArrayBuffer };
      return [part, ...this.bindJoins(this.plan.ops.slice(join.at + 1))];
    };
    const tasks: StatelessTask[] = groups.map((group, partition) => ({
      kind: 'stateless',
      queryId: this.queryId,
      runId: this.runId,
      batchId: batch.batchId,
      partition,
      attempt: 0,
      input: { type: 'blocks', blocks: group },
      inputSchema: schema,
      ops: opsOf(partition),
      output: this.sink.taskOutput(batch.batchId, partition, batch.committed),
    }));
    const outputs = await this.scheduler.runTasks(tasks, undefined, this.pool);
    return { outputs, shuffle: { numShufflePartitions: n, numCoalescedPartitions: groups.length } };
  }

  async run(batch: BatchPlan, numSources: number): Promise<BatchExecution> {
    const inputRows = Array.from({ length: numSources }, () => 0);
    const first = await this.scheduler.runTasks(batch.firstStage, undefined, this.pool);
    first.forEach((r, t) => {
      const i = (batch.splits[t] as SplitOfSource).source;
      inputRows[i] = (inputRows[i] as number) + r.numInputRows;
    });
    const eventTime = mergeEventTime(first);
    const eventTimeBySource = inputRows.map((_, i) => mergeEventTime(first.filter((_, t) => (batch.splits[t] as SplitOfSource).source === i)));
    if (batch.shufflePartitions !== undefined) {
      const { outputs, shuffle } = await this.reduceShuffle(batch, first);
      return { outputs, inputRows, eventTime, eventTimeBySource, state: undefined, shuffle };
    }
    if (!this.stateful) return { outputs: first, inputRows, eventTime, eventTimeBySource, state: undefined };

    const exchange = new ShuffleExchange(first);
    // Every shard runs each batch: eviction and complete output touch shards without new data.
    const stateTasks = batch.shardPartitions.map((partitions, shard) =>
      this.stateTask(batch, shard, partitions, exchange.blocksOf(partitions)),
    );
    const slots = this.scheduler.slots;
    const outputs = await this.scheduler.runTasks(stateTasks, (t) => (t as StateTask).partition % slots, this.pool);
    outputs.forEach((r, shard) => {
      if (r.shardMarker !== undefined) this.stateful?.info.shardMarkers.splice(shard, 1, r.shardMarker);
    });
    const state = sumStateMetrics(outputs);
    // A deduplication's map tasks drop late rows before they keep a first row per key.
    for (const r of first) state.numRowsDroppedByWatermark += r.numLateRows ?? 0;
    return { outputs, inputRows, eventTime, eventTimeBySource, state };
  }

  /** Joins get the static side this run read, under an id of the run (workers index it once per id). */
  private bindJoins(ops: Op[]): Op[] {
    if (!ops.some((o) => o.kind === 'join')) return ops;
    return ops.map((o) => {
      if (o.kind !== 'join') return o;
      const broadcast = this.broadcasts.get(o.broadcastId);
      return { ...o, broadcastId: `${this.runId}:${o.broadcastId}`, ...(broadcast !== undefined && { broadcast }) };
    });
  }

  private firstStageTask(batchId: number, partition: number, split: SplitOfSource, committed: boolean, watermarkMs: number): TaskRequest {
    const common = { queryId: this.queryId, runId: this.runId, batchId, partition, attempt: 0, input: split.input, inputSchema: split.schema };
    // A union input's own operators come first.
    const ops = this.bindJoins(this.plan.inputs ? [...(this.plan.inputs[split.source]?.ops ?? []), ...this.plan.ops] : this.plan.ops);
    if (!this.stateful) {
      const task: StatelessTask = {
        kind: 'stateless',
        ...common,
        ops,
        output: this.sink.taskOutput(batchId, partition, committed),
      };
      return task;
    }
    const { info } = this.stateful;
    const task: MapTask = {
      kind: 'map',
      ...common,
      ops,
      stateful: info.op,
      layout: layoutCounts(info.layout),
      // A deduplication that uses the watermark drops late rows before it keeps a first row per key.
      lateThresholdMs: info.op.kind !== 'aggregate' && info.usesWatermark ? watermarkMs : null,
    };
    return task;
  }

  private stateTask(batch: BatchPlan, shard: number, partitions: number[], blocks: StateTask['blocks']): StateTask {
    const ctx = this.stateful as StatefulStage;
    const { info } = ctx;
    return {
      kind: 'state',
      queryId: this.queryId,
      runId: this.runId,
      batchId: batch.batchId,
      attempt: 0,
      partition: shard,
      operatorId: info.operatorId,
      shardDir: info.shardDir(shard),
      storeOptions: ctx.storeOptions(),
      workerBudget: ctx.workerBudget,
      layout: layoutCounts(info.layout),
      partitions,
      blocks,
      stateful: info.op,
      stateInputSchema: ctx.stateInputSchema,
      outputMode: this.outputMode,
      watermarkMs: batch.watermarkMs,
      hasWatermark: ctx.hasWatermark,
      post: this.plan.post,
      output: this.sink.taskOutput(batch.batchId, shard, batch.committed),
      // commits/N-1 is durable before batch N starts, so undo records below N are not needed.
      pruneUndoBelow: batch.batchId,
      expectedMarker: info.shardMarkers[shard] ?? null,
    };
  }
}

export function mergeEventTime(results: TaskSuccess[]): EventTimeStats | undefined {
  let merged: EventTimeStats | undefined;
  for (const r of results) {
    const e = r.eventTime;
    if (!e) continue;
    merged ??= { min: Infinity, max: -Infinity, sum: 0, count: 0 };
    merged.min = Math.min(merged.min, e.min);
    merged.max = Math.max(merged.max, e.max);
    merged.sum += e.sum;
    merged.count += e.count;
  }
  return merged;
}

function sumStateMetrics(results: TaskSuccess[]): StateOperatorMetrics {
  const total: StateOperatorMetrics = {
    numRowsTotal: 0,
    numRowsUpdated: 0,
    numRowsRemoved: 0,
    numRowsDroppedByWatermark: 0,
    memoryUsedBytes: 0,
    commitTimeMs: 0,
  };
  for (const r of results) {
    const m = r.state;
    if (!m) continue;
    total.numRowsTotal += m.numRowsTotal;
    total.numRowsUpdated += m.numRowsUpdated;
    total.numRowsRemoved += m.numRowsRemoved;
    total.numRowsDroppedByWatermark += m.numRowsDroppedByWatermark;
    total.memoryUsedBytes += m.memoryUsedBytes;
    total.commitTimeMs += m.commitTimeMs;
  }
  return total;
}
