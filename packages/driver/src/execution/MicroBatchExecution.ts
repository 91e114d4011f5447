/**
 * Runs one streaming query: the micro-batch loop on the driver.
 *
 * Each trigger asks every source for its latest offset (admission control), and when there is new
 * data, or a no-data batch is due, writes `offsets/N` (the write-ahead log), plans and runs the
 * batch's tasks on the executors, commits the sink (idempotent per batch id), then writes
 * `commits/N`. A restart re-runs an uncommitted `offsets/N` with exactly the same offsets, batch
 * timestamp and watermark. A control batch (kind `control` in its offsets entry) reads no source
 * data: it runs an operation on the checkpoint itself, such as a state repartition, and a restart
 * finishes an unfinished one before any data batch.
 */
import { statSync } from 'node:fs';
import { broadcastRows, decodeRows, type Expr, type InputSplit, type Row, type Schema } from '@sluice/executor';
import { CONF_KEYS, fault, murmur3_x86_32, planRepartition, SluiceError, warn, type StateLayout } from '@sluice/state';
import { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { CommitLog } from '../checkpoint/CommitLog.js';
import { OffsetLog, type DataOffsetSeq, type SourceOffset } from '../checkpoint/OffsetLog.js';
import { loadQueryMetadata } from '../checkpoint/QueryMetadata.js';
import { readRecovery } from '../checkpoint/recovery.js';
import { layoutCounts, writeStateLayout } from '../checkpoint/StateLayoutFile.js';
import { writeVersioned } from '../checkpoint/versionedFile.js';
import { planInputs, statefulInputSchema, watermarkInputs, watermarkOf, type LogicalPlan } from '../plan/LogicalPlan.js';
import type { QuerySpec } from '../plan/QuerySpec.js';
import { createSource } from '../sources/createSource.js';
import { sameOffset, type StreamSource } from '../sources/Source.js';
import { clock } from './clock.js';
import { IncrementalExecution, type SplitOfSource } from './IncrementalExecution.js';
import { closeShardsInWorkers, explainLeftOpen, forgetLeftOpen, recordRelease, type NotClosed } from './StateShards.js';
import { ProgressReporter } from './ProgressReporter.js';
import { StreamExecution, type ExecutionContext } from './StreamExecution.js';
import {
  checkResumable,
  finishByStart,
  isRepartition,
  markersAfter,
  repartitionCommit,
  repartitionEntry,
  runRepartition,
  type RepartitionControl,
  type RepartitionResult,
} from './Repartition.js';
import { askedCounts, loadStateLayout, shardOptions, StatefulOperatorInfo, workerBudget } from './StatefulOperatorInfo.js';
import { triggerExecutorOf, type TriggerExecutor } from './TriggerExecutor.js';
import { WatermarkTracker } from './WatermarkTracker.js';
import { staticRows } from './staticRows.js';

const K = CONF_KEYS;

export class MicroBatchExecution extends StreamExecution {
  readonly id: string;
  readonly progress: ProgressReporter;

  private readonly paths: CheckpointPaths;
  private readonly offsetLog: OffsetLog;
  private readonly commitLog: CommitLog;
  private readonly sources: StreamSource[];
  private readonly watermark: WatermarkTracker;
  private readonly watermarkInputs: ReturnType<typeof watermarkInputs>;
  private readonly triggers: TriggerExecutor;
  /** End offsets of the last planned (and, outside a batch, committed) batch, per source. */
  private available: Array<SourceOffset | null>;
  private nextBatchId = 0;
  /** An uncommitted data batch found at start, replayed before any new batch. */
  private pendingReplay: { batch: DataOffsetSeq; start: Array<SourceOffset | null> } | undefined;
  private execution: IncrementalExecution;
  /** The stateful operator and the layout it runs with now (a repartition replaces it). */
  private stateInfo: StatefulOperatorInfo | undefined;
  /** A REPARTITION control batch to run, or to finish, before any new data batch. */
  private pendingControl: { control: RepartitionControl; batchId: number | undefined } | undefined;
  /** What the control batch just run adds to the next progress event. */
  private controlProgress: { durationMs: Record<string, number>; customMetrics: Record<string, number> } | undefined;
  private readonly plan: LogicalPlan;
  /** Watermark the last planned data batch ran with: a no-data batch is due when the watermark passes it. */
  private lastBatchWatermarkMs = 0;

  constructor(
    ctx: ExecutionContext,
    plan: LogicalPlan,
    private readonly outputSchema: Schema,
    private readonly spec: QuerySpec,
    checkpointDir: string,
    temporaryCheckpoint: boolean,
  ) {
    const paths = new CheckpointPaths(checkpointDir);
    super(ctx, spec.queryName, checkpointDir, paths.lock, temporaryCheckpoint);
    this.paths = paths;
    this.plan = plan;
    try {
      const slots = ctx.scheduler.slots;
      const conf = ctx.conf;
      const inputs = planInputs(plan);
      const loaded = loadQueryMetadata(
        this.paths.metadata,
        checkpointDir,
        plan.stateful !== undefined,
        conf.get(K.stateStoreKeyGroups),
        inputs.map(({ source }) => ({ format: source.format, ...('file' in source && { path: source.file.path }) })),
      );
      this.id = loaded.meta.id;
      this.offsetLog = new OffsetLog(this.paths.offsets);
      this.commitLog = new CommitLog(this.paths.commits);
      this.sources = inputs.map(({ source }, i) => createSource(source, this.paths.source(i), conf));
      const wm = watermarkOf(plan);
      this.watermarkInputs = watermarkInputs(plan);
      this.watermark = new WatermarkTracker(
        this.watermarkInputs.map((w) => w.delayMs),
        conf.get(K.multipleWatermarkPolicy),
      );
      this.triggers = triggerExecutorOf(spec.trigger, conf.get(K.pollingDelay));

      let layoutToWrite = false;
      /** The counts the conf asks the state to be repartitioned to, when they differ. */
      let target: StateLayout | undefined;
      if (plan.stateful) {
        const { decision, onDisk } = loadStateLayout(this.paths, loaded.legacyLayout, loaded.meta.keyGroups as number, conf, slots, this.offsetLog.latestId() !== undefined);
        for (const w of decision.warnings) warn('SLUICE_CONF_IGNORED', w);
        layoutToWrite = !onDisk;
        target = decision.target;
        this.stateInfo = new StatefulOperatorInfo(plan.stateful, decision.current, this.paths, wm !== undefined, spec.outputMode);
      }
      const info = this.stateInfo;
      this.execution = this.planExecution();
      this.available = this.sources.map(() => null);
      this.recover();
      // An unfinished repartition (recover) goes first; the conf's counts must be the ones it finishes.
      if (info && target && !this.pendingControl) {
        this.pendingControl = {
          control: { type: 'REPARTITION', operatorId: info.operatorId, from: info.layout, to: planRepartition(info.layout, target).layout },
          batchId: undefined,
        };
      }
      const layout = this.pendingControl?.control.to ?? info?.layout;
      if (layout && layout.shards < slots) {
        warn(
          'SLUICE_STATE_SHARDS_BELOW_SLOTS',
          `query ${this.name ?? this.id} keeps its state in ${layout.shards} shard(s) on ${slots} slots, so its state stage uses only ${layout.shards} of them; ` +
            `set ${K.stateStoreShards} to ${slots} (or 'auto') to spread the state over every slot (it is repartitioned at the next start)`,
        );
      }
      // A replayed batch's end offsets are at or past those before it: checking them checks both.
      const planned = this.pendingReplay?.batch.offsets ?? this.available;
      this.sources.forEach((s, i) => s.verifyOffset?.(planned[i] ?? null));
      spec.sink.prepare?.({
        queryId: this.id,
        lastCommittedBatchId: (this.pendingReplay?.batch.batchId ?? this.pendingControl?.batchId ?? this.nextBatchId) - 1,
        isControlBatch: (id) => this.offsetLog.get(id)?.kind === 'control',
      });
      // Files are written only once everything above was validated, so a refused start leaves no
      // checkpoint behind. The layout goes first: metadata on disk implies a layout file.
      if (info && layoutToWrite) writeStateLayout(this.paths.stateLayout(0), info.layout);
      if (loaded.write) writeVersioned(this.paths.metadata, loaded.meta);
      if (this.triggers.pinsAvailableData) for (const s of this.sources) s.prepareForAvailableNow?.();
    } catch (e) {
      spec.sink.close?.();
      this.lock.release();
      throw e;
    }
    this.progress = new ProgressReporter(this.id, this.runId, this.name, this.spec.pool);
    this.start();
  }

  private recover(): void {
    const { decision, lastCommit } = readRecovery(this.offsetLog, this.commitLog);
    // What each shard must hold: from the last commit, or not known (an earlier Sluice's commit).
    if (this.stateInfo && lastCommit) {
      const markers = lastCommit.stateShardMarkers;
      this.stateInfo.shardMarkers = this.stateInfo.shardMarkers.map((_, s) => markers?.[s] ?? null);
    }
    switch (decision.kind) {
      case 'fresh':
        return;
      case 'resume':
        this.available = [...decision.last.offsets];
        this.nextBatchId = decision.last.batchId + 1;
        this.watermark.restore(decision.watermarkMs);
        // From the checkpoint: a no-data batch due before a restart is still due after it.
        this.lastBatchWatermarkMs = decision.last.batchWatermarkMs;
        return;
      case 'replay': {
        const start = decision.previous ? [...decision.previous.offsets] : this.sources.map(() => null);
        this.pendingReplay = { batch: decision.batch, start };
        this.available = start;
        this.nextBatchId = decision.batch.batchId;
        this.watermark.restore(decision.batch.batchWatermarkMs);
        return;
      }
      case 'resumeControl': {
        const { batch } = decision;
        const file = this.offsetLog.pathOf(batch.batchId);
        if (!isRepartition(batch.control) || !this.stateInfo) {
          throw new SluiceError('UNRESUMABLE_CONTROL_BATCH', `batch ${batch.batchId} is an unfinished ${batch.control.type} control batch, which this query cannot finish`, {
            file,
          });
        }
        const asked = askedCounts(this.ctx.conf, this.ctx.scheduler.slots, batch.control.to);
        checkResumable(batch.batchId, batch.control, asked, { file, ...finishByStart });
        this.pendingControl = { control: batch.control, batchId: batch.batchId };
        this.available = [...batch.offsets];
        this.nextBatchId = batch.batchId;
        this.watermark.restore(decision.watermarkMs);
        this.lastBatchWatermarkMs = batch.batchWatermarkMs;
        return;
      }
    }
  }

  /** The scheduler pool its tasks run in. */
  get schedulerPool(): string {
    return this.spec.pool;
  }

  /** The batches' planner for the query's plan and its stateful operator's current layout. */
  private planExecution(): IncrementalExecution {
    const info = this.stateInfo;
    const slots = this.ctx.scheduler.slots;
    const budget = workerBudget(this.ctx.conf, slots);
    // Each batch takes its share of the worker budgets as the session's other queries stand then.
    const storeOptions = (check = false) => shardOptions(this.ctx.conf, budget, info?.shards ?? 0, slots, this.ctx.otherStateShards(this.id), check);
    // A budget that cannot hold this query beside the others is refused at start.
    if (info) storeOptions(true);
    return new IncrementalExecution(
      this.id,
      this.runId,
      this.plan,
      this.spec.sink,
      this.spec.outputMode,
      this.ctx.scheduler,
      info && {
        info,
        storeOptions,
        workerBudget: budget,
        stateInputSchema: statefulInputSchema(this.plan),
        hasWatermark: watermarkOf(this.plan) !== undefined,
      },
      this.spec.pool,
      // Adaptive execution coalesces a stateless shuffle's small partitions (never a stateful one).
      this.ctx.conf.get(K.adaptiveStatelessEnabled) ? this.ctx.conf.get(K.advisoryPartitionSizeInBytes) : undefined,
    );
  }

  /**
   * The REPARTITION control batch (Repartition.ts): its own batch id in offsets/ and commits/, no
   * source data; the query's shards are closed in the workers first, and the move runs here. Its
   * duration and what it moved go into the next data batch's progress event.
   */
  private async runControlBatch(): Promise<void> {
    const pending = this.pendingControl;
    const info = this.stateInfo;
    if (!pending || !info) return;
    this.pendingControl = undefined;
    const { control } = pending;
    const batchId = pending.batchId ?? this.nextBatchId;
    const t0 = clock.now();
    this.status = { message: `Repartitioning state (batch ${batchId})`, isDataAvailable: false, isTriggerActive: true };
    if (pending.batchId === undefined) {
      this.assertRunning();
      this.offsetLog.add(batchId, repartitionEntry(batchId, control, { offsets: this.available, batchWatermarkMs: this.lastBatchWatermarkMs }));
    }
    const notClosed = await this.closeShards();
    this.assertRunning(); // a stop that timed out while the shards closed: the move waits for the next start
    if (notClosed.length > 0) {
      throw new SluiceError('STATE_STORE_LOCKED', `cannot repartition: state shards could not be closed: ${notClosed.map((s) => `${s.dir}: ${s.error}`).join('; ')}`, {
        file: info.stateDir,
      });
    }
    const slots = this.ctx.scheduler.slots;
    const storeOptions = shardOptions(this.ctx.conf, workerBudget(this.ctx.conf, slots), Math.max(control.from.shards, control.to.shards), slots, this.ctx.otherStateShards(this.id));
    this.settleBeforeRelease = true;
    let result: RepartitionResult;
    try {
      result = await runRepartition(this.paths, control, batchId, storeOptions, { checkpoint: () => this.assertRunning() });
    } finally {
      this.settleBeforeRelease = false;
    }
    this.assertRunning();
    this.spec.sink.commitControlBatch?.(batchId);
    const markers = markersAfter(result, control.to, info.shardMarkers, batchId);
    this.commitLog.add(batchId, repartitionCommit(markers, this.watermark.current));
    this.purgeLogs(batchId);
    this.stateInfo = info.withLayout(control.to, markers);
    const joinShuffle = this.execution.joinShuffle;
    this.execution = this.planExecution();
    this.execution.broadcasts = this.broadcasts;
    this.execution.joinShuffle = joinShuffle;
    this.nextBatchId = batchId + 1;
    this.controlProgress = {
      durationMs: { 'controlBatch.REPARTITION': clock.now() - t0 },
      customMetrics: { numKeyGroupsMoved: result.numKeyGroupsMoved, numRowsMoved: result.numRowsMoved, numBytesMoved: result.numBytesMoved },
    };
  }

  /** State shards this query keeps open in the workers (0 for a stateless query). */
  get stateShards(): number {
    return this.stateInfo?.shards ?? 0;
  }

  /** The static sides of the plan's joins: read once per run, before its first batch. */
  private readonly broadcasts = new Map<string, SharedArrayBuffer>();

  private async readStatics(): Promise<void> {
    const threshold = this.ctx.conf.get(K.autoBroadcastJoinThreshold);
    for (const s of this.plan.statics ?? []) {
      if (this.broadcasts.has(s.id) || this.execution.joinShuffle) continue;
      const rows = await staticRows(this.ctx.scheduler, s.plan);
      const shared = broadcastRows(rows);
      if (threshold >= 0 && shared.byteLength <= threshold) {
        this.broadcasts.set(s.id, shared);
        continue;
      }
      // Too large to broadcast: shuffle the stream by the join keys, in a stateless query with
      // this one join and no other shuffle; elsewhere it is broadcast all the same.
      const at = this.plan.ops.findIndex((o) => o.kind === 'join' && o.broadcastId === s.id);
      const join = this.plan.ops[at];
      const alone = at >= 0 && !this.plan.stateful && !this.plan.exchange && !this.plan.inputs && (this.plan.statics?.length ?? 0) === 1;
      if (!alone || join?.kind !== 'join') {
        warn(
          'SLUICE_BROADCAST_OVER_THRESHOLD',
          `the static side of a join is ${shared.byteLength} bytes, over ${K.autoBroadcastJoinThreshold}=${threshold}, but this query cannot shuffle for it (an aggregation, a repartition, a union or another join): it is broadcast`,
        );
        this.broadcasts.set(s.id, shared);
        continue;
      }
      const conf = this.ctx.conf.get(K.shufflePartitions);
      const slots = this.ctx.scheduler.slots;
      const partitions = conf === 'auto' ? Math.max(slots, Math.ceil(shared.byteLength / this.ctx.conf.get(K.advisoryPartitionSizeInBytes))) : conf;
      const rightKeys = join.rightKeys ?? join.keys;
      const parts: Row[][] = Array.from({ length: partitions }, () => []);
      for (const r of rows) {
        // As the map tasks hash the stream's keys (runExchange in the executor).
        const p = murmur3_x86_32(Buffer.from(JSON.stringify(rightKeys.map((k) => r[k] ?? null)))) % partitions;
        (parts[p] as Row[]).push(r);
      }
      this.execution.joinShuffle = { at, keys: join.keys.map((name): Expr => ({ op: 'col', name })), partitions, parts: parts.map((p) => broadcastRows(p)) };
    }
    this.execution.broadcasts = this.broadcasts;
  }

  protected override async runBatches(): Promise<void> {
    await this.readStatics();
    if (this.pendingReplay) {
      const { batch, start } = this.pendingReplay;
      this.pendingReplay = undefined;
      await this.runBatch(batch, start, clock.now(), { latestOffset: 0 }, batch.offsets);
    }
    // The last planned batch has committed (with the old layout): now the layout may change.
    if (!this.stopRequested) await this.runControlBatch();
    await this.triggers.execute((start) => this.runTrigger(start), {
      now: clock.now,
      sleep: (ms) => this.sleep(ms),
      stopRequested: () => this.stopRequested,
    });
  }

  /** Closes the query's state shards in the workers, so that any session can reopen them at once. */
  protected override async release(): Promise<void> {
    if (this.stateInfo) recordRelease(this.stateInfo.stateDir, this.name ?? this.id, await this.closeShards());
    for (const s of this.sources) s.stop?.();
    this.spec.sink.close?.();
  }

  protected override explainFailure(e: unknown): unknown {
    return explainLeftOpen(e, this.stateInfo?.stateDir);
  }

  private closeShards(): Promise<NotClosed[]> {
    const stateDir = (this.stateInfo as StatefulOperatorInfo).stateDir;
    return closeShardsInWorkers(this.ctx.scheduler, { queryId: this.id, runId: this.runId }, stateDir, this.ctx.conf.get(K.stopTimeout));
  }

  /** One trigger: plan the next batch and run it. Returns whether a batch ran. */
  private async runTrigger(triggerStart: number): Promise<boolean> {
    const seq = ++this.triggerSeq;
    this.status = { message: 'Getting offsets from sources', isDataAvailable: false, isTriggerActive: true };
    const t0 = clock.now();
    const ends: Array<SourceOffset | null> = [];
    for (const [i, source] of this.sources.entries()) {
      ends.push(await source.latestOffset(this.available[i] ?? null, this.triggers.readLimit));
    }
    const latestOffsetMs = clock.now() - t0;
    const hasData = ends.some((e, i) => e !== null && !sameOffset(e, this.available[i] ?? null));
    if (!hasData && !this.noDataBatchDue()) {
      this.status = { message: 'Waiting for data to arrive', isDataAvailable: false, isTriggerActive: false };
      this.onIdle(seq);
      return false;
    }
    // A no-data batch keeps the previous end offsets: it reads nothing.
    const offsets = hasData ? ends : [...this.available];
    // A stateless shuffle's count comes from the splits, planned once here for the batch.
    const splits = this.plan.exchange ? await this.splitsOf(this.available, offsets) : undefined;
    const batch: DataOffsetSeq = {
      batchId: this.nextBatchId,
      kind: 'data',
      batchTimestampMs: triggerStart,
      batchWatermarkMs: this.watermark.current,
      offsets,
      conf: this.stateInfo ? layoutCounts(this.stateInfo.layout) : splits ? { shufflePartitions: this.shufflePartitionsOf(splits) } : {},
    };
    this.assertRunning();
    const walStart = clock.now();
    this.offsetLog.add(batch.batchId, batch);
    const walCommit = clock.now() - walStart;
    fault('after-offsets-write');
    await this.runBatch(batch, [...this.available], triggerStart, { latestOffset: latestOffsetMs, walCommit }, ends, splits);
    return true;
  }

  /** The batch's input splits; a source with nothing yet (one input of a union) or nothing new has none. */
  private async splitsOf(start: Array<SourceOffset | null>, offsets: Array<SourceOffset | null>): Promise<SplitOfSource[]> {
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
    const conf = this.ctx.conf.get(K.shufflePartitions);
    if (conf !== 'auto') return conf;
    const bytes = splits.reduce((n, s) => n + inputBytes(s.input), 0);
    return Math.max(this.ctx.scheduler.slots, Math.ceil(bytes / this.ctx.conf.get(K.advisoryPartitionSizeInBytes)));
  }

  /**
   * Spark's rule: run a batch without new data when the watermark has moved past the one the last
   * batch ran with and the stateful operator uses it (to evict state and emit appended rows).
   */
  private noDataBatchDue(): boolean {
    if (!this.triggers.runsNoDataBatches) return false;
    if (!this.ctx.conf.get(K.noDataMicroBatchesEnabled)) return false;
    if (!this.stateInfo?.usesWatermark) return false;
    return this.watermark.current > this.lastBatchWatermarkMs;
  }

  private async runBatch(
    batch: DataOffsetSeq,
    start: Array<SourceOffset | null>,
    triggerStart: number,
    durations: { latestOffset: number; walCommit?: number },
    latest: Array<SourceOffset | null>,
    /** The splits, when the trigger planned them already. */
    planned?: SplitOfSource[],
  ): Promise<void> {
    const { batchId } = batch;
    this.status = { message: `Processing new data (batch ${batchId})`, isDataAvailable: true, isTriggerActive: true };

    const g0 = clock.now();
    const sink = this.spec.sink;
    const splits = planned ?? (await this.splitsOf(start, batch.offsets));
    const getBatch = clock.now() - g0;

    const p0 = clock.now();
    // A replay shuffles into the partitions its offsets entry recorded.
    const recorded = batch.conf['shufflePartitions'];
    const shufflePartitions = this.plan.exchange ? (typeof recorded === 'number' ? recorded : this.shufflePartitionsOf(splits)) : undefined;
    const physical = this.execution.planBatch(batchId, batch.batchWatermarkMs, splits, shufflePartitions);
    const queryPlanning = clock.now() - p0;

    const a0 = clock.now();
    const exec = await this.execution.run(physical, this.sources.length);
    const results = exec.outputs;
    const rows: Row[] = [];
    for (const r of results) if (r.rows) for (const row of decodeRows(r.rows)) rows.push(row);
    this.assertRunning();
    await sink.addBatch({ batchId, schema: this.outputSchema, outputMode: this.spec.outputMode, results, rows });
    fault('after-sink-commit');
    const addBatch = clock.now() - a0;
    if (this.stateInfo) forgetLeftOpen(this.stateInfo.stateDir); // its shards opened again

    const eventTime = exec.eventTime;
    // Each watermark input's max event time: a union input's own, or the query's.
    this.watermark.observe(this.watermarkInputs.map((w) => (w.input === undefined ? eventTime : exec.eventTimeBySource[w.input])?.max));
    fault('before-commit-log');
    this.assertRunning();
    const c0 = clock.now();
    const markers = this.stateInfo?.shardMarkers;
    this.commitLog.add(batchId, {
      nextBatchWatermarkMs: this.watermark.current,
      ...(markers?.every((m) => m !== null) && { stateShardMarkers: markers as number[] }),
    });
    for (const [i, s] of this.sources.entries()) await s.commit?.(batch.offsets[i]);
    this.purgeLogs(batchId);
    const commitOffsets = clock.now() - c0;

    this.available = [...batch.offsets];
    this.nextBatchId = batchId + 1;
    const inputRows = exec.inputRows;
    this.lastBatchWatermarkMs = batch.batchWatermarkMs;
    const sourceMetrics = await Promise.all(this.sources.map((s, i) => s.metrics?.(batch.offsets[i] ?? null).catch(() => undefined)));
    const progress = this.progress.report({
      batchId,
      triggerStartMs: triggerStart,
      durationMs: {
        addBatch,
        getBatch,
        latestOffset: durations.latestOffset,
        queryPlanning,
        triggerExecution: clock.now() - triggerStart,
        walCommit: durations.walCommit ?? 0,
        commitOffsets,
        ...this.controlProgress?.durationMs,
      },
      sources: this.sources.map((s, i) => ({
        description: s.description,
        startOffset: start[i] ?? null,
        endOffset: batch.offsets[i] ?? null,
        latestOffset: latest[i] ?? null,
        numInputRows: inputRows[i] as number,
        ...(sourceMetrics[i] && { metrics: sourceMetrics[i] }),
      })),
      ...(eventTime && { eventTime: { min: eventTime.min, max: eventTime.max, avg: eventTime.sum / eventTime.count } }),
      ...(this.watermark.enabled && { watermarkMs: batch.batchWatermarkMs }),
      sink: { description: sink.description, numOutputRows: results.reduce((s, r) => s + r.numOutputRows, 0) },
      ...(exec.state && this.stateInfo && { stateOperators: [this.stateInfo.progress(exec.state, this.controlProgress?.customMetrics)] }),
      ...(exec.shuffle && { shuffle: exec.shuffle }),
    });
    this.controlProgress = undefined;
    this.ctx.metrics?.observe(progress);
    this.ctx.bus.post({ kind: 'onQueryProgress', event: { progress } });
  }

  private purgeLogs(batchId: number): void {
    const keep = this.ctx.conf.get(K.minBatchesToRetain);
    const threshold = batchId + 1 - keep;
    if (threshold <= 0) return;
    this.offsetLog.purge(threshold);
    this.commitLog.purge(threshold);
  }
}

/** About how many bytes a split reads: its files' sizes, its encoded rows, 16 bytes a generated row. */
function inputBytes(input: InputSplit): number {
  switch (input.type) {
    case 'files':
      return input.files.reduce((n, f) => n + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    case 'rows':
      return input.data.byteLength;
    case 'blocks':
      return input.blocks.reduce((n, b) => n + b.byteLength, 0);
    default:
      return 16 * Math.max(0, input.endValue - input.startValue);
  }
}
