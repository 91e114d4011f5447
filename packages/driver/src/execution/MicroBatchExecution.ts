/**
 * Runs one streaming query: the micro-batch loop on the driver. nextBatch.ts decides what runs
 * next from the checkpoint's tail; BatchTransaction writes each batch's checkpoint steps; this
 * loop carries the decisions out.
 *
 * Before the first trigger the loop finishes what the checkpoint leaves: an uncommitted data batch
 * is replayed with exactly its offsets, timestamp and watermark, then REPARTITION control batches
 * move the state to the layout the conf asks for. Each trigger then asks every source for its
 * latest offset (admission control) and runs a data batch when there is new data, or a no-data
 * batch when one is due.
 */
import { decodeRows, indexTimeOf, rowsInOf, type Row, type Schema, type StateOperatorMetrics, type StateTask } from '@sluice/executor';
import { CONF_KEYS, SluiceError } from '@sluice/state';
import type { BatchTransaction } from '../checkpoint/BatchTransaction.js';
import { layoutConf, type DataOffsetSeq, type SourceOffset } from '../checkpoint/OffsetLog.js';
import { statefulOperators, watermarkInputs, watermarkOf, type LogicalPlan, type PlannedOperator } from '../plan/LogicalPlan.js';
import type { StateOperatorProgress } from '../events/progress.js';
import type { QuerySpec } from '../plan/QuerySpec.js';
import { sameOffset, type StreamSource } from '../sources/Source.js';
import { clock } from './clock.js';
import { IncrementalExecution, inputBytes, type SplitOfSource } from './IncrementalExecution.js';
import { committedEnds, lateWatermark, nextBatch, nextWatermark, type NextBatch, type RunSettings } from './nextBatch.js';
import { openQuery, WATERMARK_POLICY_CONF, type OpenedQuery } from './openQuery.js';
import { ProgressReporter } from './ProgressReporter.js';
import { runControlBatch, shardMarkersOf } from './Repartition.js';
import { closeShardsInWorkers, explainLeftOpen, forgetLeftOpen, recordRelease, type NotClosed } from './StateShards.js';
import { readStaticSides, type StaticSides } from './StaticSides.js';
import { shardOptions, workerBudget, type StatefulOperatorInfo } from './StatefulOperatorInfo.js';
import { StreamExecution, type ExecutionContext } from './StreamExecution.js';
import type { TriggerExecutor } from './TriggerExecutor.js';
import { END_OF_EVENT_TIME_MS, WatermarkTracker } from './WatermarkTracker.js';

const K = CONF_KEYS;

type DataStep = Extract<NextBatch, { kind: 'replay' | 'data' | 'noData' }>;
type ControlStep = Extract<NextBatch, { kind: 'control' }>;

export class MicroBatchExecution extends StreamExecution {
  readonly id: string;
  readonly progress: ProgressReporter;

  private readonly txn: BatchTransaction;
  private readonly sources: StreamSource[];
  /** The run's settings (the layouts as they stand are the checkpoint's tail's, which a repartition updates). */
  private readonly settings: RunSettings;
  private readonly triggers: TriggerExecutor;
  private readonly watermark: WatermarkTracker;
  private readonly watermarkInputs: ReturnType<typeof watermarkInputs>;
  /** The stateful operators by id, each with the layout it runs with now (a repartition replaces one). */
  private operators: StatefulOperatorInfo[];
  /** The static sides of the joins and the batches' planner: from the first batch of the run on. */
  private statics: StaticSides | undefined;
  private execution: IncrementalExecution | undefined;
  /** The slot of state shard 0 for this run, chosen at its start. */
  private readonly firstSlot: number;
  /** What the control batches before the next data batch moved: their time, and per operator id, its counts. */
  private controlProgress: { durationMs: Record<string, number>; customMetrics: Map<number, Record<string, number>> } | undefined;

  /** Opens the checkpoint (openQuery: the lock, every check, a new checkpoint's files); start() runs the loop. */
  static open(ctx: ExecutionContext, plan: LogicalPlan, outputSchema: Schema, spec: QuerySpec, checkpointDir: string, temporary: boolean): MicroBatchExecution {
    return new MicroBatchExecution(ctx, plan, outputSchema, spec, openQuery(ctx, plan, spec, checkpointDir), temporary);
  }

  private constructor(
    ctx: ExecutionContext,
    private readonly plan: LogicalPlan,
    private readonly outputSchema: Schema,
    private readonly spec: QuerySpec,
    opened: OpenedQuery,
    temporary: boolean,
  ) {
    super(ctx, spec.queryName, opened.paths.root, opened.lock, temporary);
    spec.clock?.attach(this);
    this.id = opened.id;
    this.txn = opened.txn(() => this.assertRunning());
    this.sources = opened.sources;
    this.settings = opened.settings;
    this.triggers = opened.triggers;
    this.operators = opened.operators;
    this.watermarkInputs = watermarkInputs(plan);
    this.watermark = new WatermarkTracker(
      this.watermarkInputs.map((w) => w.delayMs),
      opened.watermarkPolicy,
    );
    const { last, committed } = this.txn.tail;
    // A replayed batch runs with its own watermark; anything after it with the last commit's.
    this.watermark.restore(last && !committed && last.kind === 'data' ? last.batchWatermarkMs : nextWatermark(this.txn.tail));
    this.progress = new ProgressReporter(this.id, this.runId, this.name, spec.pool);
    this.firstSlot = this.operators.length > 0 ? ctx.firstStateSlot(this.id) : 0;
  }

  /** The scheduler pool its tasks run in. */
  get schedulerPool(): string {
    return this.spec.pool;
  }

  /** State shards this query keeps open in the workers, every operator's (0 for a stateless query). */
  get stateShards(): number {
    return this.operators.reduce((n, info) => n + info.shards, 0);
  }

  /** The slot each state shard runs on (every operator's shards, in operator order). */
  get stateSlots(): number[] {
    return this.operators.flatMap((info) => Array.from({ length: info.shards }, (_, s) => this.slotOfShard(s)));
  }

  /** What a stop left open is remembered under the first operator's state directory (StateShards.ts), for every operator's shards. */
  private get leftOpenKey(): string | undefined {
    return this.operators[0]?.stateDir;
  }

  private slotOfShard(shard: number): number {
    return (this.firstSlot + shard) % this.ctx.scheduler.slots;
  }

  /** The batches' planner for the plan, the static sides and the stateful operators' current layouts. */
  private planExecution(statics: StaticSides): IncrementalExecution {
    const { conf, scheduler } = this.ctx;
    const slots = scheduler.slots;
    const budget = workerBudget(conf, slots);
    // Each batch takes its share of the worker budgets, every operator's shards counted, as the session's other queries stand then.
    const storeOptions = (): StateTask['storeOptions'] => shardOptions(conf, budget, this.stateShards, slots, this.ctx.otherStateShards(this.id));
    return new IncrementalExecution({
      queryId: this.id,
      runId: this.runId,
      plan: this.plan,
      sink: this.spec.sink,
      outputMode: this.spec.outputMode,
      scheduler,
      pool: this.spec.pool,
      statics,
      ...(this.operators.length > 0 && {
        stateful: {
          operators: this.operators,
          storeOptions,
          workerBudget: budget,
          hasWatermark: watermarkOf(this.plan) !== undefined,
          slotOf: (shard) => this.slotOfShard(shard),
        },
      }),
      // Adaptive execution coalesces a stateless shuffle's small partitions (never a stateful one).
      ...(conf.get(K.adaptiveStatelessEnabled) && { coalesceToBytes: conf.get(K.advisoryPartitionSizeInBytes) }),
    });
  }

  protected override async runBatches(): Promise<void> {
    // A query on a manual clock holds its advances back from its start (open) to its end.
    const manual = this.spec.clock;
    try {
      // Initial states go to the query's first batch (batch 0, run now or replayed).
      const firstBatch = this.txn.tail.last === undefined || (this.txn.tail.last.batchId === 0 && !this.txn.tail.committed);
      this.statics = await readStaticSides(this.plan, this.ctx.scheduler, this.ctx.conf, firstBatch);
      this.execution = this.planExecution(this.statics);
      // What the checkpoint leaves: a replay (with the layout it ran with), then the layout changes.
      for (let step = nextBatch(this.txn.tail, this.settings); !this.stopRequested; step = nextBatch(this.txn.tail, this.settings)) {
        if (step.kind === 'replay') await this.runDataBatch(step, clock.now(), { latestOffset: 0 }, step.batch.offsets);
        else if (step.kind === 'control') await this.runControl(step);
        else break;
      }
      await this.triggers.execute((start) => this.runTrigger(start), {
        now: manual ? () => manual.now() : clock.now,
        sleep: (ms) => this.sleep(ms, manual),
        stopRequested: () => this.stopRequested,
      });
    } finally {
      manual?.detach(this);
    }
  }

  /** One trigger: poll the sources, then run the batch nextBatch decides on. Returns whether a batch ran. */
  private async runTrigger(triggerStart: number): Promise<boolean> {
    // Progress times the trigger by the wall clock, whatever clock its batch timestamp follows.
    const wallStart = clock.now();
    const seq = ++this.triggerSeq;
    await this.driverTurn();
    this.status = { message: 'Getting offsets from sources', isDataAvailable: false, isTriggerActive: true };
    const t0 = clock.now();
    const start = committedEnds(this.txn.tail, this.sources.length);
    const latest: Array<SourceOffset | null> = [];
    for (const [i, source] of this.sources.entries()) latest.push(await source.latestOffset(start[i] ?? null, this.triggers.readLimit));
    const latestOffset = clock.now() - t0;
    const step = nextBatch(this.txn.tail, this.settings, latest, triggerStart);
    if (step.kind !== 'data' && step.kind !== 'noData') {
      this.status = { message: 'Waiting for data to arrive', isDataAvailable: false, isTriggerActive: false };
      this.onIdle(seq);
      return false;
    }
    await this.runDataBatch(step, triggerStart, { latestOffset }, latest, wallStart);
    return true;
  }

  /** A new data batch's offsets entry, with the settings it pins for a replay. */
  private dataEntry(step: Extract<NextBatch, { kind: 'data' | 'noData' }>, triggerStart: number, splits: SplitOfSource[] | undefined): DataOffsetSeq {
    const conf = layoutConf(this.txn.tail.layouts);
    if (splits) conf.shufflePartitions = this.shufflePartitionsOf(splits);
    if (this.watermark.enabled) conf[WATERMARK_POLICY_CONF] = this.watermark.policy;
    return { batchId: step.batchId, kind: 'data', batchTimestampMs: triggerStart, batchWatermarkMs: step.watermarkMs, offsets: step.offsets, conf };
  }

  private async runDataBatch(
    step: DataStep,
    triggerStart: number,
    durations: { latestOffset: number },
    latest: ReadonlyArray<SourceOffset | null>,
    wallStart = triggerStart,
  ): Promise<void> {
    const execution = this.execution as IncrementalExecution;
    const start = step.start;
    const phases = { getBatch: 0, queryPlanning: 0, tasks: 0 };
    const getBatch = async (offsets: ReadonlyArray<SourceOffset | null>): Promise<SplitOfSource[]> => {
      const g0 = clock.now();
      const got = await this.splitsOf(start, offsets);
      phases.getBatch += clock.now() - g0;
      return got;
    };
    // A stateless shuffle's count comes from the splits, planned once for the batch's entry.
    let splits = step.kind !== 'replay' && this.plan.exchange ? await getBatch(step.offsets) : undefined;
    const lateWatermarkMs = lateWatermark(this.txn.tail);
    const batch = step.kind === 'replay' ? step.batch : this.dataEntry(step, triggerStart, splits);
    const { batchId } = batch;
    this.status = { message: `Processing new data (batch ${batchId})`, isDataAvailable: true, isTriggerActive: true };
    let exec: Awaited<ReturnType<IncrementalExecution['run']>> | undefined;
    const timings = await this.txn.run(batch, async () => {
      splits ??= await getBatch(batch.offsets);
      await this.driverTurn();
      const p0 = clock.now();
      // A replay shuffles into the partitions its offsets entry recorded.
      const recorded = batch.conf.shufflePartitions;
      const shufflePartitions = this.plan.exchange ? (typeof recorded === 'number' ? recorded : this.shufflePartitionsOf(splits)) : undefined;
      const physical = execution.planBatch(
        batchId,
        batch.batchWatermarkMs,
        splits,
        shufflePartitions,
        this.expectedMarkers(),
        batch.batchTimestampMs,
        lateWatermarkMs,
      );
      phases.queryPlanning = clock.now() - p0;
      const a0 = clock.now();
      const ran = await execution.run(physical, this.sources.length);
      exec = ran;
      phases.tasks = clock.now() - a0;
      await this.driverTurn();
      const rows: Row[] = [];
      for (const r of ran.outputs) if (r.rows) for (const row of decodeRows(r.rows)) rows.push(row);
      // Each watermark input's max event time: a union input's own, or the query's; the end of
      // time once the sources it reads have ended (a bounded generator's last event).
      const ended = this.sources.map((s, i) => s.eventTimeEnded?.(batch.offsets[i] ?? null) ?? false);
      const hasEnded = (w: { input: number | undefined }): boolean => (w.input === undefined ? ended.every(Boolean) : ended[w.input] === true);
      const maxOf = (w: { input: number | undefined }): number | undefined => (w.input === undefined ? ran.eventTime : ran.eventTimeBySource[w.input])?.max;
      this.watermark.observe(this.watermarkInputs.map((w) => (hasEnded(w) ? END_OF_EVENT_TIME_MS : maxOf(w))));
      return {
        output: { batchId, schema: this.outputSchema, outputMode: this.spec.outputMode, results: ran.outputs, rows },
        commit: {
          nextBatchWatermarkMs: this.watermark.current,
          ...(ran.shardMarkers && { shardMarkers: ran.shardMarkers }),
          ...(ran.nextWakeMs !== undefined && { nextWakeMs: ran.nextWakeMs }),
        },
        afterCommit: async () => {
          for (const [i, s] of this.sources.entries()) await s.commit?.(batch.offsets[i]);
        },
      };
    });
    if (this.leftOpenKey) forgetLeftOpen(this.leftOpenKey); // its shards opened again
    await this.reportProgress(batch, start, latest, triggerStart, wallStart, exec as NonNullable<typeof exec>, {
      addBatch: phases.tasks + timings.sinkCommit,
      getBatch: phases.getBatch,
      latestOffset: durations.latestOffset,
      queryPlanning: phases.queryPlanning,
      walCommit: timings.walCommit,
      commitOffsets: timings.commitOffsets,
    });
  }

  /** Waits, while other queries' driver-side steps wait too, for the turn the pools give this query's next one. */
  private driverTurn(): Promise<void> {
    return this.ctx.scheduler.driverTurn(this.spec.pool, this.runId);
  }

  /**
   * The batch each operator's state shards last committed, as the last commit recorded it (index:
   * operator id, then shard; a new checkpoint: none yet, -1; a commit that did not record them: null).
   */
  private expectedMarkers(): Array<Array<number | null>> {
    const commit = this.txn.tail.commit;
    return this.operators.map((info) => {
      const markers = shardMarkersOf(commit, info.operatorId);
      return Array.from({ length: info.shards }, (_, s) => (commit ? (markers?.[s] ?? null) : -1));
    });
  }

  private async reportProgress(
    batch: DataOffsetSeq,
    start: ReadonlyArray<SourceOffset | null>,
    latest: ReadonlyArray<SourceOffset | null>,
    triggerStart: number,
    wallStart: number,
    exec: Awaited<ReturnType<IncrementalExecution['run']>>,
    durationMs: Record<string, number>,
  ): Promise<void> {
    const sink = this.spec.sink;
    const eventTime = exec.eventTime;
    const sourceMetrics = await Promise.all(this.sources.map((s, i) => s.metrics?.(batch.offsets[i] ?? null).catch(() => undefined)));
    const progress = this.progress.report({
      batchId: batch.batchId,
      triggerStartMs: triggerStart,
      durationMs: { ...durationMs, triggerExecution: clock.now() - wallStart, ...this.controlProgress?.durationMs },
      sources: this.sources.map((s, i) => ({
        description: s.description,
        startOffset: start[i] ?? null,
        endOffset: batch.offsets[i] ?? null,
        latestOffset: latest[i] ?? null,
        numInputRows: exec.inputRows[i] as number,
        ...(sourceMetrics[i] && { metrics: sourceMetrics[i] }),
      })),
      ...(eventTime && { eventTime: { min: eventTime.min, max: eventTime.max, avg: eventTime.sum / eventTime.count } }),
      ...(this.watermark.enabled && { watermarkMs: batch.batchWatermarkMs }),
      sink: { description: sink.description, numOutputRows: exec.outputs.reduce((s, r) => s + r.numOutputRows, 0) },
      ...(exec.states && { stateOperators: this.stateOperatorsProgress(exec.states) }),
      ...(exec.shuffle && { shuffle: exec.shuffle }),
    });
    this.controlProgress = undefined;
    this.ctx.metrics?.observe(progress);
    this.ctx.bus.post({ kind: 'onQueryProgress', event: { progress } });
  }

  /** One entry per stateful operator, nearest the sink first; each carries what a control batch moved of its state. */
  private stateOperatorsProgress(states: StateOperatorMetrics[]): StateOperatorProgress[] {
    const moved = this.controlProgress?.customMetrics;
    return states.map((metrics, k) => (this.operators[k] as StatefulOperatorInfo).progress(metrics, moved?.get(k))).reverse();
  }

  /**
   * A REPARTITION control batch (Repartition.ts): its own batch id in offsets/ and commits/, no
   * source data; the query's shards are closed in the workers first, and the move runs here. Its
   * duration and what it moved go into the next data batch's progress event.
   */
  private async runControl(step: ControlStep): Promise<void> {
    const operatorId = step.control.operatorId;
    const info = this.operators[operatorId];
    if (info === undefined) {
      throw new SluiceError('UNRESUMABLE_CONTROL_BATCH', `batch ${step.batchId} repartitions stateful operator ${operatorId}, which this query does not have`, {
        file: this.txn.offsets.pathOf(step.batchId),
      });
    }
    const t0 = clock.now();
    this.status = { message: `Repartitioning state (batch ${step.batchId})`, isDataAvailable: false, isTriggerActive: true };
    const { conf, scheduler } = this.ctx;
    const slots = scheduler.slots;
    const { from, to } = step.control;
    const storeOptions = shardOptions(conf, workerBudget(conf, slots), Math.max(from.shards, to.shards), slots, this.ctx.otherStateShards(this.id));
    try {
      const result = await runControlBatch(this.txn, step, this.sources.length, storeOptions, {
        beforeMove: async () => {
          const notClosed = await this.closeShards();
          this.assertRunning(); // a stop that timed out while the shards closed: the move waits for the next start
          if (notClosed.length > 0) {
            throw new SluiceError(
              'STATE_STORE_LOCKED',
              `cannot repartition: state shards could not be closed: ${notClosed.map((s) => `${s.dir}: ${s.error}`).join('; ')}`,
              {
                file: info.stateDir,
              },
            );
          }
          this.settleBeforeRelease = true;
        },
        checkpoint: () => this.assertRunning(),
        indexTimeOf: indexTimeOf(info.op, (statefulOperators(this.plan)[operatorId] as PlannedOperator).inputSchema, info.usesWatermark),
        ...rowsInOf(info.op),
      });
      // Control batches before one data batch (an unfinished one then the asked one, or one per operator) add up.
      const before = this.controlProgress ?? { durationMs: {}, customMetrics: new Map() };
      const add = (key: string, n: number, from: Record<string, number> | undefined): number => (from?.[key] ?? 0) + n;
      const moved = before.customMetrics.get(operatorId);
      before.customMetrics.set(operatorId, {
        numKeyGroupsMoved: add('numKeyGroupsMoved', result.numKeyGroupsMoved, moved),
        numRowsMoved: add('numRowsMoved', result.numRowsMoved, moved),
        numBytesMoved: add('numBytesMoved', result.numBytesMoved, moved),
      });
      this.controlProgress = {
        durationMs: { 'controlBatch.REPARTITION': add('controlBatch.REPARTITION', clock.now() - t0, before.durationMs) },
        customMetrics: before.customMetrics,
      };
    } finally {
      this.settleBeforeRelease = false;
    }
    this.operators = this.operators.map((o) => (o.operatorId === operatorId ? o.withLayout(to) : o));
    this.execution = this.planExecution(this.statics as StaticSides);
  }

  /** Closes the query's state shards in the workers, so that any session can reopen them at once. */
  protected override async release(): Promise<void> {
    // An aborted batch may be mid-write; the lock goes only once nothing of this run writes.
    await this.txn.settled();
    if (this.leftOpenKey) recordRelease(this.leftOpenKey, this.name ?? this.id, await this.closeShards());
    for (const s of this.sources) s.stop?.();
    this.spec.sink.close?.();
  }

  protected override explainFailure(e: unknown): unknown {
    return explainLeftOpen(e, this.leftOpenKey);
  }

  /** Closes every operator's shards in the workers (each operator's state directory in turn). */
  private async closeShards(): Promise<NotClosed[]> {
    const notClosed: NotClosed[] = [];
    for (const info of this.operators) {
      notClosed.push(
        ...(await closeShardsInWorkers(this.ctx.scheduler, { queryId: this.id, runId: this.runId }, info.stateDir, this.ctx.conf.get(K.stopTimeout))),
      );
    }
    return notClosed;
  }

  /** The batch's input splits; a source with nothing yet (one input of a union) or nothing new has none. */
  private async splitsOf(start: ReadonlyArray<SourceOffset | null>, offsets: ReadonlyArray<SourceOffset | null>): Promise<SplitOfSource[]> {
    const slots = this.ctx.scheduler.slots;
    const splits: SplitOfSource[] = [];
    for (const [i, source] of this.sources.entries()) {
      const end = offsets[i] ?? null;
      if (end === null || sameOffset(end, start[i] ?? null)) continue;
      for (const input of await source.planSplits(start[i] ?? null, end, slots)) splits.push({ source: i, input, schema: source.schema });
    }
    return splits;
  }

  /**
   * A new batch's stateless shuffle partitions: repartition(n)'s n, else this run's
   * shuffle.partitions; `auto` gives one partition per advisoryPartitionSizeInBytes of input, and
   * at least one per slot.
   */
  private shufflePartitionsOf(splits: SplitOfSource[]): number {
    const exchange = this.plan.exchange as NonNullable<LogicalPlan['exchange']>;
    if (exchange.partitions !== undefined) return exchange.partitions;
    const { conf } = this.ctx;
    const asked = conf.get(K.shufflePartitions);
    if (asked !== 'auto') return asked;
    const bytes = splits.reduce((n, s) => n + inputBytes(s.input), 0);
    return Math.max(this.ctx.scheduler.slots, Math.ceil(bytes / conf.get(K.advisoryPartitionSizeInBytes)));
  }
}
