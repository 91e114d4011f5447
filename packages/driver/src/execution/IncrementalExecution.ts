/**
 * Runs the tasks of one micro-batch (Spark's IncrementalExecution). A stateless batch is one stage:
 * each task reads a split, runs the operators and delivers its rows to the sink. A stateful batch
 * is two: map tasks (any slot) shuffle partial results into blocks per partition; then one state
 * task per shard, on the slot owning the shard, merges them into the state store and delivers the
 * operator's output. The driver holds the blocks until the state stage is done, so a retried
 * state task reads them again.
 */
import type {
  EventTimeStats,
  InputSplit,
  MapTask,
  Schema,
  ShuffleBlock,
  StateOperatorMetrics,
  StateTask,
  StatelessTask,
  TaskRequest,
  TaskSuccess,
} from '@sluice/executor';
import { partitionsOfShard, type StateLayout } from '@sluice/state';
import type { LogicalPlan } from '../plan/LogicalPlan.js';
import type { StreamSink } from '../sinks/Sink.js';
import type { OutputMode } from '../plan/QuerySpec.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import { ShuffleExchange } from './ShuffleExchange.js';

export interface SplitOfSource {
  source: number;
  input: InputSplit;
  schema: Schema;
}

export interface StatefulContext {
  layout: StateLayout;
  shardDir(shard: number): string;
  storeOptions: StateTask['storeOptions'];
  stateInputSchema: Schema;
  hasWatermark: boolean;
  /** A deduplication that drops late rows: its map tasks filter them first. */
  dedupLateThreshold: boolean;
}

export interface BatchExecution {
  /** Tasks that delivered output to the sink (stateless tasks or state tasks). */
  outputs: TaskSuccess[];
  inputRows: number[];
  eventTime: EventTimeStats | undefined;
  state: StateOperatorMetrics | undefined;
}

export class IncrementalExecution {
  constructor(
    private readonly queryId: string,
    private readonly plan: LogicalPlan,
    private readonly sink: StreamSink,
    private readonly outputMode: OutputMode,
    private readonly scheduler: TaskScheduler,
    private readonly stateful: StatefulContext | undefined,
  ) {}

  async run(batchId: number, watermarkMs: number, splits: SplitOfSource[], numSources: number): Promise<BatchExecution> {
    const committed = this.sink.isCommitted(batchId);
    const inputRows = Array.from({ length: numSources }, () => 0);
    const first = await this.scheduler.runTasks(
      splits.map((s, partition) => this.firstStageTask(batchId, partition, s, committed, watermarkMs)),
    );
    first.forEach((r, t) => {
      const i = (splits[t] as SplitOfSource).source;
      inputRows[i] = (inputRows[i] as number) + r.numInputRows;
    });
    const eventTime = mergeEventTime(first);
    if (!this.stateful) return { outputs: first, inputRows, eventTime, state: undefined };

    const { layout } = this.stateful;
    const exchange = new ShuffleExchange(first);
    // Every shard runs each batch: eviction and complete output touch shards without new data.
    const stateTasks = Array.from({ length: layout.shards }, (_, shard) => {
      const partitions = partitionsOfShard(shard, layout);
      return this.stateTask(batchId, shard, partitions, exchange.blocksOf(partitions), watermarkMs, committed);
    });
    const slots = this.scheduler.slots;
    const outputs = await this.scheduler.runTasks(stateTasks, (t) => (t as StateTask).partition % slots);
    const state = sumStateMetrics(outputs);
    // A deduplication's map tasks drop late rows before they keep a first row per key.
    for (const r of first) state.numRowsDroppedByWatermark += r.numLateRows ?? 0;
    return { outputs, inputRows, eventTime, state };
  }

  private firstStageTask(batchId: number, partition: number, split: SplitOfSource, committed: boolean, watermarkMs: number): TaskRequest {
    const common = { queryId: this.queryId, batchId, partition, attempt: 0, input: split.input, inputSchema: split.schema };
    if (!this.stateful) {
      const task: StatelessTask = {
        kind: 'stateless',
        ...common,
        ops: this.plan.ops,
        output: this.sink.taskOutput(batchId, partition, committed),
      };
      return task;
    }
    const task: MapTask = {
      kind: 'map',
      ...common,
      ops: this.plan.ops,
      stateful: this.plan.stateful as NonNullable<LogicalPlan['stateful']>,
      layout: this.stateful.layout,
      lateThresholdMs: this.stateful.dedupLateThreshold ? watermarkMs : null,
    };
    return task;
  }

  private stateTask(
    batchId: number,
    shard: number,
    partitions: number[],
    blocks: ShuffleBlock[],
    watermarkMs: number,
    committed: boolean,
  ): StateTask {
    const ctx = this.stateful as StatefulContext;
    return {
      kind: 'state',
      queryId: this.queryId,
      batchId,
      attempt: 0,
      partition: shard,
      operatorId: 0,
      shardDir: ctx.shardDir(shard),
      storeOptions: ctx.storeOptions,
      layout: ctx.layout,
      partitions,
      blocks,
      stateful: this.plan.stateful as NonNullable<LogicalPlan['stateful']>,
      stateInputSchema: ctx.stateInputSchema,
      outputMode: this.outputMode,
      watermarkMs,
      hasWatermark: ctx.hasWatermark,
      post: this.plan.post,
      output: this.sink.taskOutput(batchId, shard, committed),
      // commits/N-1 is durable before batch N starts, so undo records below N are not needed.
      pruneUndoBelow: batchId,
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
