/**
 * Plans and runs the tasks of one micro-batch (Spark's IncrementalExecution). A stateless batch
 * without a shuffle is one stage: each task reads a split, runs the operators and delivers its
 * rows to the sink. A stateless shuffle (repartition, or a join too large to broadcast) is two:
 * exchange tasks hash rows into partition blocks, then reduce tasks, over adaptively coalesced
 * partitions, run the operators after it into the sink. A stateful batch is two: map tasks (any
 * slot) shuffle partial results into blocks per partition; then one state task per shard, on the
 * slot owning the shard, merges them into the state store and delivers the operator's output. The
 * shuffle exchange holds the blocks until the second stage is done, so a retried task reads them
 * again. A small batch of a query with one stateful operator (of any kind) is fused: shard 0's
 * state task runs the map tasks first and hands the other shards their blocks, so the batch costs
 * one round trip a shard (a one-shard query: one, not three).
 * With several stateful operators, each one's state tasks run in turn (in id order, so after the
 * operators that feed it), on the blocks the tasks before made of the rows they emit.
 */
import { statSync } from 'node:fs';
import { mapTaskCallsUdfs, planOutputSchema } from '@sluice/executor';
import type {
  EventTimeStats,
  ExchangeResult,
  ExchangeTask,
  InputSplit,
  MapFacts,
  MapResult,
  MapTask,
  Op,
  OutputResult,
  Schema,
  StatefulOp,
  StateOperatorMetrics,
  StateResult,
  StateTask,
  StatelessResult,
  StatelessTask,
} from '@sluice/executor';
import { layoutCounts } from '../checkpoint/StateLayoutFile.js';
import { consumersOf, sourceRoutes, statefulInputSchema, statefulOperators, type LogicalPlan, type PlannedOperator } from '../plan/LogicalPlan.js';
import type { OutputMode } from '../plan/QuerySpec.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import type { StreamSink } from '../sinks/Sink.js';
import { inputFacts, nextWake, stateFacts, sumStateMetrics } from './batchFacts.js';
import { coalescePartitions } from './ShuffleCoalescer.js';
import { ShuffleExchange } from './ShuffleExchange.js';
import { WatermarkPropagator } from './WatermarkPropagator.js';
import type { StatefulOperatorInfo } from './StatefulOperatorInfo.js';
import type { StaticSides } from './StaticSides.js';
import type { WorkerBudget } from '@sluice/state';

export interface SplitOfSource {
  source: number;
  input: InputSplit;
  schema: Schema;
}

/** What the state stages of a stateful query's operators run with. */
export interface StatefulStages {
  /** The stateful operators by id, each with the layout it runs with now. */
  operators: StatefulOperatorInfo[];
  /** The shard options of a batch (its share of the worker budgets). */
  storeOptions: () => StateTask['storeOptions'];
  workerBudget: WorkerBudget;
  hasWatermark: boolean;
  /** The slot owning each shard (its state task runs there). */
  slotOf: (shard: number) => number;
}

/** One stateful operator's stage: the plan's operator (its input schema, `post` and feeds) and its layout and shards now. */
interface OperatorStage extends PlannedOperator {
  info: StatefulOperatorInfo;
}

/** A batch's physical plan: its first stage's tasks, and the partitions of each state task. */
export interface BatchPlan {
  batchId: number;
  watermarkMs: number;
  /** The watermark of the batch before (Spark's watermark for late events). */
  lateWatermarkMs: number;
  /** The batch's timestamp from its offsets entry: current_timestamp() of every row, in a replay too. */
  batchTimestampMs: number;
  /** The sink already holds this batch (a replay): tasks compute but write nothing. */
  committed: boolean;
  splits: SplitOfSource[];
  firstStage: Array<StatelessTask | MapTask | ExchangeTask>;
  /** A fused batch's partitions of each shard (index: shard); empty otherwise. */
  shardPartitions: number[][];
  /** The batch each shard last committed, as the commit log says (index: operator id, then shard; null: not recorded). */
  expectedMarkers: Array<Array<number | null>>;
  /** A stateless shuffle's partitions (repartition), when the plan has one. */
  shufflePartitions?: number;
  /** A small input to a query's one stateful operator: shard 0's state task runs the map tasks itself (runFused). */
  fused: boolean;
}

/**
 * A stateful batch whose input is at most this many bytes (inputBytes: 65,536 generated rows)
 * runs its map tasks inside its first shard's state task. Above it the map tasks spread over the
 * slots.
 */
const FUSED_BATCH_MAX_BYTES = 1 << 20;

/** About how many bytes a split reads: its files' sizes, its encoded rows, 16 bytes a generated row (a Nexmark event 100). */
export function inputBytes(input: InputSplit): number {
  switch (input.type) {
    case 'files':
      return input.files.reduce((n, f) => n + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    case 'rows':
      return input.data.byteLength;
    case 'blocks':
      return input.blocks.reduce((n, b) => n + b.byteLength, 0);
    case 'nexmark':
      return 100 * Math.max(0, input.endEvent - input.startEvent);
    default:
      return 16 * Math.max(0, input.endValue - input.startValue);
  }
}

/**
 * Whether a stateful batch is fused (runFused): map tasks only, no udf or join before the shuffle
 * (their cost a row is the user's, and fused map tasks run one after another), no files (sizing
 * them would stat every file each batch) and a small input.
 */
function fusible(firstStage: BatchPlan['firstStage'], splits: readonly SplitOfSource[]): boolean {
  if (!firstStage.every((t) => t.kind === 'map' && !mapTaskCallsUdfs(t) && !t.ops.some((o) => o.kind === 'join'))) return false;
  if (splits.some((s) => s.input.type === 'files')) return false;
  return splits.reduce((n, s) => n + inputBytes(s.input), 0) <= FUSED_BATCH_MAX_BYTES;
}

/** A stateless shuffle's partitions, and the reduce tasks they were coalesced into. */
export interface ShuffleStats {
  numShufflePartitions: number;
  numCoalescedPartitions: number;
}

export interface BatchExecution {
  /** Tasks that delivered output to the sink (stateless tasks or state tasks). */
  outputs: OutputResult[];
  inputRows: number[];
  eventTime: EventTimeStats | undefined;
  /** The same, per source (a union's watermark inputs). */
  eventTimeBySource: Array<EventTimeStats | undefined>;
  /** Stateful queries: each operator's metrics, by operator id. */
  states?: StateOperatorMetrics[];
  /** Stateful queries: the batch each shard last committed after this one, by operator id, then shard. */
  shardMarkers?: number[][];
  /** The least time a processor's shard next needs a batch (StateResult.nextWakeMs), over every shard. */
  nextWakeMs?: number;
  shuffle?: ShuffleStats;
}

export interface ExecutionOptions {
  queryId: string;
  runId: string;
  plan: LogicalPlan;
  sink: StreamSink;
  outputMode: OutputMode;
  scheduler: TaskScheduler;
  pool: string;
  stateful?: StatefulStages;
  /** The static sides of the plan's joins, as this run read them. */
  statics: StaticSides;
  /** Coalescing of a stateless shuffle's partitions (adaptive execution): the target bytes, or undefined when off. */
  coalesceToBytes?: number;
}

export class IncrementalExecution {
  private readonly plan: LogicalPlan;
  private readonly sink: StreamSink;
  /** Each stateful operator's stage by id, the operator whose map side reads each input, and the one each operator's rows go to. */
  private readonly stages: OperatorStage[];
  private readonly routes: ReturnType<typeof sourceRoutes>;
  private readonly consumers: ReturnType<typeof consumersOf>;
  private readonly watermarks: WatermarkPropagator;

  constructor(private readonly o: ExecutionOptions) {
    this.plan = o.plan;
    this.sink = o.sink;
    const infos = o.stateful?.operators ?? [];
    this.stages = statefulOperators(o.plan).map((op, k) => ({ ...op, info: infos[k] as StatefulOperatorInfo }));
    this.routes = sourceRoutes(this.stages);
    this.consumers = consumersOf(this.stages);
    this.watermarks = new WatermarkPropagator(this.stages, (k) => this.stageOf(k).info);
  }

  /** The tasks of batch `batchId` over `splits`, before any of them runs. */
  planBatch(
    batchId: number,
    watermarkMs: number,
    splits: SplitOfSource[],
    shufflePartitions?: number,
    expectedMarkers: Array<Array<number | null>> = [],
    batchTimestampMs: number = Date.now(),
    lateWatermarkMs: number = watermarkMs,
  ): BatchPlan {
    const committed = this.sink.isCommitted(batchId);
    const join = this.o.statics.joinShuffle;
    const exchange = this.plan.exchange ?? (join && { keys: join.keys });
    const partitions = join ? join.partitions : shufflePartitions;
    const mapOps = this.bindJoins(join ? this.plan.ops.slice(0, join.at) : this.plan.ops);
    const firstStage = splits.map((s, partition): BatchPlan['firstStage'][number] =>
      exchange && partitions !== undefined
        ? {
            kind: 'exchange',
            queryId: this.o.queryId,
            runId: this.o.runId,
            batchId,
            batchTimestampMs,
            partition,
            attempt: 0,
            input: s.input,
            inputSchema: s.schema,
            ops: mapOps,
            keys: exchange.keys,
            partitions,
          }
        : this.firstStageTask(batchId, batchTimestampMs, partition, s, committed, lateWatermarkMs),
    );
    // A query with one stateful operator, whatever its kind, fuses a small batch.
    const only = this.stages.length === 1 ? this.stageOf(0).info : undefined;
    const fused = only !== undefined && fusible(firstStage, splits);
    return {
      batchId,
      watermarkMs,
      lateWatermarkMs,
      batchTimestampMs,
      committed,
      splits,
      firstStage,
      shardPartitions: fused ? Array.from({ length: only.shards }, (_, shard) => only.partitionsOf(shard)) : [],
      expectedMarkers,
      ...(exchange && partitions !== undefined && { shufflePartitions: partitions }),
      fused,
    };
  }

  /**
   * The reduce side of a stateless shuffle: the map side's blocks by partition, adjacent small
   * partitions coalesced up to `coalesceToBytes` (ShuffleCoalescer.ts; never a stateful shuffle),
   * each group one task running the operators after the repartition into the sink.
   */
  private async reduceShuffle(batch: BatchPlan, first: ExchangeResult[]): Promise<{ outputs: StatelessResult[]; shuffle: ShuffleStats }> {
    const n = batch.shufflePartitions as number;
    const blocks: Uint8Array[][] = Array.from({ length: n }, () => []);
    for (const r of first) for (const b of r.blocks) (blocks[b.partition] as Uint8Array[]).push(b.data);
    const join = this.o.statics.joinShuffle;
    // A join's partitions each meet their own part of the static side: never coalesced.
    const groups =
      this.o.coalesceToBytes === undefined || join ? blocks : coalescePartitions(blocks, this.o.coalesceToBytes, (this.plan.exchange?.keys.length ?? 0) === 0);
    const schema = join ? planOutputSchema(this.plan.ops.slice(0, join.at), this.plan.source.schema) : statefulInputSchema(this.plan);
    const post = this.bindJoins(this.plan.exchange?.post ?? []);
    const opsOf = (partition: number): Op[] => {
      if (!join) return post;
      const op = this.plan.ops[join.at] as Extract<Op, { kind: 'join' }>;
      const part = { ...op, broadcastId: `${this.o.runId}:${op.broadcastId}:${partition}`, broadcast: join.parts[partition] as SharedArrayBuffer };
      return [part, ...this.bindJoins(this.plan.ops.slice(join.at + 1))];
    };
    const tasks: StatelessTask[] = groups.map((group, partition) => ({
      kind: 'stateless',
      queryId: this.o.queryId,
      runId: this.o.runId,
      batchId: batch.batchId,
      batchTimestampMs: batch.batchTimestampMs,
      partition,
      attempt: 0,
      input: { type: 'blocks', blocks: group },
      inputSchema: schema,
      ops: opsOf(partition),
      output: this.sink.taskOutput(batch.batchId, partition, batch.committed),
    }));
    const outputs = await this.o.scheduler.runTasks(tasks, undefined, this.o.pool);
    return { outputs, shuffle: { numShufflePartitions: n, numCoalescedPartitions: groups.length } };
  }

  async run(batch: BatchPlan, numSources: number): Promise<BatchExecution> {
    if (batch.fused) return this.runFused(batch, numSources);
    const { scheduler, pool } = this.o;
    const first = await scheduler.runTasks(batch.firstStage, undefined, pool);
    const facts = inputFacts(batch, first, numSources);
    if (batch.shufflePartitions !== undefined) return { ...facts, ...(await this.reduceShuffle(batch, first as ExchangeResult[])) };
    if (!this.o.stateful) return { ...facts, outputs: first as StatelessResult[] };

    // Each operator, in id order (an operator's feeds come before it), takes the blocks its map
    // side made: of the map tasks reading its inputs, and of the state tasks of the operators feeding it.
    const maps = first as MapResult[];
    const { slotOf } = this.o.stateful;
    const results: StateResult[][] = [];
    const states: StateOperatorMetrics[] = [];
    for (const [k, { feeds, info }] of this.stages.entries()) {
      const read = maps.filter((_, t) => this.routeOf((batch.splits[t] as SplitOfSource).source).operator === k);
      const fed = feeds.flatMap((f) => ('operator' in f ? (results[f.operator] as StateResult[]) : []));
      const blocks = new ShuffleExchange([...read, ...fed.map((r) => ({ blocks: r.blocks ?? [] }))]);
      const tasks = Array.from({ length: info.shards }, (_, shard) => {
        const partitions = info.partitionsOf(shard);
        return this.stateTask(batch, k, shard, partitions, blocks.blocksOf(partitions));
      });
      const out: StateResult[] = await scheduler.runTasks(tasks, (t) => slotOf(t.partition), pool);
      const metrics = sumStateMetrics(out);
      // The late rows its map side dropped (in the map tasks, or in the state tasks before it).
      for (const r of [...read, ...fed]) metrics.numRowsDroppedByWatermark += r.numLateRows ?? 0;
      states.push(metrics);
      results.push(out);
    }
    const markers = results.map((out) => out.map((r) => r.shardMarker));
    return {
      ...facts,
      ...nextWake(results.flat()),
      outputs: results.at(-1) as StateResult[],
      states,
      shardMarkers: markers,
    };
  }

  /**
   * A fused batch: shard 0's state task, on its slot, runs the batch's map tasks first and hands
   * back the blocks of the other shards' partitions; then the other shards' state tasks run on
   * theirs. One round trip a shard, instead of one a split and one a shard.
   */
  private async runFused(batch: BatchPlan, numSources: number): Promise<BatchExecution> {
    const { scheduler, pool } = this.o;
    const { slotOf } = this.o.stateful as StatefulStages;
    const [partitions0, ...others] = batch.shardPartitions as [number[], ...number[][]];
    const first = { ...this.stateTask(batch, 0, 0, partitions0, []), maps: batch.firstStage as MapTask[] };
    const [out] = (await scheduler.runTasks([first], () => slotOf(0), pool)) as [StateResult];
    const exchange = new ShuffleExchange([{ blocks: out.otherBlocks ?? [] }]);
    const rest = others.map((partitions, i) => this.stateTask(batch, 0, i + 1, partitions, exchange.blocksOf(partitions)));
    const outputs = [out, ...(await scheduler.runTasks(rest, (t) => slotOf(t.partition), pool))];
    const maps = out.maps as MapFacts[];
    return { ...inputFacts(batch, maps, numSources), ...stateFacts(maps, outputs) };
  }

  /** Joins get the static side this run read, under an id of the run (workers index it once per id). */
  private bindJoins(ops: Op[]): Op[] {
    if (!ops.some((o) => o.kind === 'join')) return ops;
    return ops.map((o) => {
      if (o.kind !== 'join') return o;
      const broadcast = this.o.statics.broadcasts.get(o.broadcastId);
      return { ...o, broadcastId: `${this.o.runId}:${o.broadcastId}`, ...(broadcast !== undefined && { broadcast }) };
    });
  }

  private firstStageTask(
    batchId: number,
    batchTimestampMs: number,
    partition: number,
    split: SplitOfSource,
    committed: boolean,
    lateWatermarkMs: number,
  ): StatelessTask | MapTask {
    const common = {
      queryId: this.o.queryId,
      runId: this.o.runId,
      batchId,
      batchTimestampMs,
      partition,
      attempt: 0,
      input: split.input,
      inputSchema: split.schema,
    };
    // A union input's own operators come first.
    const ops = this.bindJoins(this.plan.inputs ? [...(this.plan.inputs[split.source]?.ops ?? []), ...this.plan.ops] : this.plan.ops);
    if (!this.o.stateful) {
      const task: StatelessTask = {
        kind: 'stateless',
        ...common,
        ops,
        output: this.sink.taskOutput(batchId, partition, committed),
      };
      return task;
    }
    // The operator whose map side reads this input, with its watermarks (a join before it passes on its own).
    const route = this.routeOf(split.source);
    const { info } = this.stageOf(route.operator);
    const task: MapTask = {
      kind: 'map',
      ...common,
      ops,
      stateful: info.op,
      layout: layoutCounts(info.layout),
      lateThresholdMs: this.watermarks.lateThreshold(route.operator, lateWatermarkMs),
      ...(route.side !== undefined && { joinSide: route.side }),
    };
    return task;
  }

  private routeOf(source: number): { operator: number; side?: 0 | 1 } {
    return this.routes[source] ?? { operator: 0 };
  }

  private stageOf(k: number): OperatorStage {
    return this.stages[k] as OperatorStage;
  }

  /** The `next` of operator `k`'s state tasks: the map side of the operator its rows go to, if any. */
  private nextOf(k: number, batch: BatchPlan): Pick<StateTask, 'next'> {
    const consumer = this.consumers[k];
    if (consumer === undefined) return {};
    const { info } = this.stageOf(consumer.operator);
    const lateThresholdMs = this.watermarks.lateThreshold(consumer.operator, batch.lateWatermarkMs);
    return { next: { stateful: info.op, layout: layoutCounts(info.layout), lateThresholdMs, ...(consumer.side !== undefined && { joinSide: consumer.side }) } };
  }

  /** A processor's operator in the query's first batch carries its initial state's rows. */
  private withInitialState(op: StatefulOp, batchId: number): StatefulOp {
    if (batchId !== 0 || op.kind !== 'transformWithState' || op.initialState === undefined) return op;
    const rows = this.o.statics.initialStates?.get(op.initialState.id);
    return rows === undefined ? op : { ...op, initialState: { ...op.initialState, rows } };
  }

  /** The state task of operator `k` on `shard`. */
  private stateTask(batch: BatchPlan, k: number, shard: number, partitions: number[], blocks: StateTask['blocks']): StateTask {
    const ctx = this.o.stateful as StatefulStages;
    const { info, inputSchema, post } = this.stageOf(k);
    // Its watermarks as the operators before it pass them on (an operator reading the inputs has
    // the batch's; a join passes on its state's); late rows by the batch before's (Spark's
    // watermark for late events).
    const eviction = this.watermarks.inputWatermark(k, batch.watermarkMs);
    const late = this.watermarks.inputWatermark(k, batch.lateWatermarkMs);
    return {
      ...this.nextOf(k, batch),
      kind: 'state',
      queryId: this.o.queryId,
      runId: this.o.runId,
      batchId: batch.batchId,
      batchTimestampMs: batch.batchTimestampMs,
      attempt: 0,
      partition: shard,
      operatorId: info.operatorId,
      shardDir: info.shardDir(shard),
      storeOptions: ctx.storeOptions(),
      workerBudget: ctx.workerBudget,
      layout: layoutCounts(info.layout),
      partitions,
      blocks,
      stateful: this.withInitialState(info.op, batch.batchId),
      stateInputSchema: inputSchema,
      outputMode: this.o.outputMode,
      watermarkMs: eviction ?? 0,
      hasWatermark: ctx.hasWatermark && eviction !== undefined,
      lateWatermarkMs: late ?? 0,
      post,
      output: this.sink.taskOutput(batch.batchId, shard, batch.committed),
      // commits/N-1 is durable before batch N starts, so undo records below N are not needed.
      pruneUndoBelow: batch.batchId,
      expectedMarker: batch.expectedMarkers[k]?.[shard] ?? null,
    };
  }
}
