/**
 * Runs one streaming query: the micro-batch loop on the driver.
 *
 * Each trigger asks every source for its latest offset (admission control), and when there is new
 * data writes `offsets/N` (the write-ahead log), runs the batch's tasks on the executors, commits
 * the sink (idempotent per batch id), then writes `commits/N`. A restart re-runs an uncommitted
 * `offsets/N` with exactly the same offsets, batch timestamp and watermark.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { decodeRows, type Row, type Schema } from '@sluice/executor';
import { CONF_KEYS, fault, SluiceError } from '@sluice/state';
import { CheckpointLock } from '../checkpoint/CheckpointLock.js';
import { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { CommitLog } from '../checkpoint/CommitLog.js';
import { OffsetLog, type OffsetSeq, type SourceOffset } from '../checkpoint/OffsetLog.js';
import { decideRecovery } from '../checkpoint/recovery.js';
import { writeVersioned } from '../checkpoint/versionedFile.js';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import { statefulInputSchema, watermarkOf, type LogicalPlan } from '../plan/LogicalPlan.js';
import { IncrementalExecution } from './IncrementalExecution.js';
import { shardOptions, StatefulOperatorInfo } from './StatefulOperatorInfo.js';
import { loadQueryMetadata } from '../checkpoint/QueryMetadata.js';
import type { QuerySpec } from '../plan/QuerySpec.js';
import type { ListenerBus } from '../events/ListenerBus.js';
import type { StreamingQueryProgress } from '../events/progress.js';
import { ProgressReporter } from './ProgressReporter.js';
import { createSource } from '../sources/createSource.js';
import { sameOffset, type StreamSource } from '../sources/Source.js';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import { WatermarkTracker } from './WatermarkTracker.js';

export interface QueryStatus {
  message: string;
  isDataAvailable: boolean;
  isTriggerActive: boolean;
}

interface Waiter {
  /** Resolve at the first idle trigger numbered at least this. */
  fromTrigger: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

export interface ExecutionContext {
  conf: RuntimeConf;
  scheduler: TaskScheduler;
  bus: ListenerBus;
  /** State shards of the session's other running queries, which share the workers' budgets. */
  activeStateShards: number;
}

function now(): number {
  return Date.now();
}

export class MicroBatchExecution {
  readonly runId = randomUUID();
  readonly id: string;
  readonly name: string | null;
  exception: SluiceError | null = null;
  status: QueryStatus = { message: 'Initializing sources', isDataAvailable: false, isTriggerActive: false };
  readonly progress: ProgressReporter;

  private readonly paths: CheckpointPaths;
  private readonly offsetLog: OffsetLog;
  private readonly commitLog: CommitLog;
  private readonly lock: CheckpointLock;
  private readonly sources: StreamSource[];
  private readonly watermark: WatermarkTracker;
  /** End offsets of the last planned (and, outside a batch, committed) batch, per source. */
  private available: Array<SourceOffset | null>;
  private nextBatchId = 0;
  private pendingReplay: { batch: OffsetSeq; start: Array<SourceOffset | null> } | undefined;
  private active = true;
  private stopRequested = false;
  private triggerSeq = 0;
  private lastIdleEventMs = Number.NEGATIVE_INFINITY;
  private waiters: Waiter[] = [];
  private wake: (() => void) | undefined;
  private readonly finished: Promise<void>;
  private readonly execution: IncrementalExecution;
  private readonly stateInfo: StatefulOperatorInfo | undefined;
  /** Watermark the last planned batch ran with: a no-data batch is due when the watermark passes it. */
  private lastBatchWatermarkMs = 0;

  constructor(
    private readonly ctx: ExecutionContext,
    plan: LogicalPlan,
    private readonly outputSchema: Schema,
    private readonly writer: QuerySpec,
    private readonly checkpointDir: string,
    private readonly temporaryCheckpoint: boolean,
  ) {
    this.paths = new CheckpointPaths(checkpointDir);
    this.lock = CheckpointLock.acquire(this.paths.lock, checkpointDir);
    try {
      const slots = ctx.scheduler.slots;
      const { meta, isNew } = loadQueryMetadata(this.paths.metadata, checkpointDir, plan.stateful !== undefined, ctx.conf, slots);
      this.id = meta.id;
      this.name = writer.queryName;
      this.offsetLog = new OffsetLog(this.paths.offsets);
      this.commitLog = new CommitLog(this.paths.commits);
      this.sources = [createSource(plan.source, this.paths.source(0), ctx.conf)];
      const wm = watermarkOf(plan);
      this.watermark = new WatermarkTracker(
        wm ? [wm.delayMs] : [],
        ctx.conf.get<'min' | 'max'>(CONF_KEYS.multipleWatermarkPolicy),
      );
      this.stateInfo = plan.stateful && meta.stateLayout ? new StatefulOperatorInfo(plan.stateful, meta.stateLayout, this.paths.state(0)) : undefined;
      const info = this.stateInfo;
      this.execution = new IncrementalExecution(
        this.id,
        plan,
        writer.sink,
        writer.outputMode,
        ctx.scheduler,
        info && {
          layout: info.layout,
          shardDir: (shard) => info.shardDir(shard),
          storeOptions: shardOptions(ctx.conf, info.layout, slots, ctx.activeStateShards),
          stateInputSchema: statefulInputSchema(plan),
          hasWatermark: wm !== undefined,
          dedupLateThreshold: info.op.kind !== 'aggregate' && info.usesWatermark(wm !== undefined),
        },
      );
      // A new checkpoint is written only once everything above was validated.
      if (isNew) writeVersioned(this.paths.metadata, meta);
      this.available = this.sources.map(() => null);
      this.recover();
      if (writer.trigger.kind === 'AvailableNow') for (const s of this.sources) s.prepareForAvailableNow?.();
    } catch (e) {
      this.lock.release();
      throw e;
    }
    this.progress = new ProgressReporter(this.id, this.runId, this.name);
    this.ctx.bus.post({
      kind: 'onQueryStarted',
      event: { id: this.id, runId: this.runId, name: this.name, timestamp: new Date().toISOString() },
    });
    this.finished = this.runLoop();
  }

  private recover(): void {
    const latest = this.offsetLog.getLatest();
    const previous = latest ? this.offsetLog.get(latest.batchId - 1) : undefined;
    const commitId = this.commitLog.latestId();
    const commit = commitId === undefined ? undefined : { batchId: commitId, ...(this.commitLog.get(commitId) as { nextBatchWatermarkMs: number }) };
    const decision = decideRecovery(latest?.value, previous, commit, this.paths.offsets);
    if (decision.kind === 'resume') {
      this.available = [...decision.last.offsets];
      this.nextBatchId = decision.last.batchId + 1;
      this.watermark.restore(decision.watermarkMs);
      // From the checkpoint: a no-data batch due before a restart is still due after it.
      this.lastBatchWatermarkMs = decision.last.batchWatermarkMs;
    } else if (decision.kind === 'replay') {
      const start = decision.previous ? [...decision.previous.offsets] : this.sources.map(() => null);
      this.pendingReplay = { batch: decision.batch, start };
      this.available = start;
      this.nextBatchId = decision.batch.batchId;
      this.watermark.restore(decision.batch.batchWatermarkMs);
    }
  }

  get isActive(): boolean {
    return this.active;
  }

  /** State shards this query keeps open in the workers (0 for a stateless query). */
  get stateShards(): number {
    return this.stateInfo?.shards ?? 0;
  }

  // ---- the loop ----------------------------------------------------------------------------

  private async runLoop(): Promise<void> {
    await Promise.resolve(); // let start() return the query before the first trigger runs
    let error: unknown = null;
    try {
      if (this.pendingReplay) {
        const { batch, start } = this.pendingReplay;
        this.pendingReplay = undefined;
        await this.runBatch(batch, start, now(), { latestOffset: 0 }, batch.offsets);
      }
      const trig = this.writer.trigger;
      while (!this.stopRequested) {
        const triggerStart = now();
        const ran = await this.runTrigger(triggerStart);
        if (trig.kind === 'Once' || (trig.kind === 'AvailableNow' && !ran)) break;
        if (this.stopRequested) break;
        const interval = trig.kind === 'ProcessingTime' ? trig.intervalMs : 0;
        const wait = interval > 0 ? triggerStart + interval - now() : ran ? 0 : this.ctx.conf.get<number>(CONF_KEYS.pollingDelay);
        if (wait > 0) await this.sleep(wait);
      }
    } catch (e) {
      error = e;
    }
    await this.releaseState();
    this.terminate(error);
  }

  /** Closes the query's state shards in the workers, so that any session can reopen them at once. */
  private async releaseState(): Promise<void> {
    if (!this.stateInfo) return;
    const slots = this.ctx.scheduler.slots;
    const stateDir = this.stateInfo.stateDir;
    const tasks = Array.from({ length: slots }, (_, slot) => ({
      kind: 'release' as const,
      queryId: this.id,
      batchId: -1,
      partition: slot,
      attempt: 0,
      stateDir,
    }));
    await this.ctx.scheduler.runTasks(tasks, (t) => t.partition).catch(() => {});
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  /** One trigger: plan the next batch and run it. Returns whether a batch ran. */
  private async runTrigger(triggerStart: number): Promise<boolean> {
    const seq = ++this.triggerSeq;
    this.status = { message: 'Getting offsets from sources', isDataAvailable: false, isTriggerActive: true };
    const ignoreLimits = this.writer.trigger.kind === 'Once';
    const t0 = now();
    const ends: Array<SourceOffset | null> = [];
    for (const [i, source] of this.sources.entries()) {
      ends.push(await source.latestOffset(this.available[i] ?? null, { ignoreLimits }));
    }
    const latestOffsetMs = now() - t0;
    const hasData = ends.some((e, i) => e !== null && !sameOffset(e, this.available[i] ?? null));
    if (!hasData && !this.noDataBatchDue()) {
      this.status = { message: 'Waiting for data to arrive', isDataAvailable: false, isTriggerActive: false };
      this.onIdle(seq);
      return false;
    }
    const batch: OffsetSeq = {
      batchId: this.nextBatchId,
      batchTimestampMs: triggerStart,
      batchWatermarkMs: this.watermark.current,
      // A no-data batch keeps the previous end offsets: it reads nothing.
      offsets: hasData ? ends : [...this.available],
      conf: this.stateInfo ? { ...this.stateInfo.layout } : {},
    };
    const walStart = now();
    this.offsetLog.add(batch.batchId, batch);
    const walCommit = now() - walStart;
    fault('after-offsets-write');
    await this.runBatch(batch, [...this.available], triggerStart, { latestOffset: latestOffsetMs, walCommit }, ends);
    return true;
  }

  /**
   * Spark's rule: run a batch without new data when the watermark has moved past the one the last
   * batch ran with and the stateful operator uses it (to evict state and emit appended rows).
   */
  private noDataBatchDue(): boolean {
    if (this.writer.trigger.kind === 'Once') return false;
    if (!this.ctx.conf.get<boolean>(CONF_KEYS.noDataMicroBatchesEnabled)) return false;
    if (!this.stateInfo?.usesWatermark(this.watermark.enabled)) return false;
    return this.watermark.current > this.lastBatchWatermarkMs;
  }

  private async runBatch(
    batch: OffsetSeq,
    start: Array<SourceOffset | null>,
    triggerStart: number,
    durations: Record<string, number>,
    latest: Array<SourceOffset | null>,
  ): Promise<void> {
    const { batchId } = batch;
    this.status = { message: `Processing new data (batch ${batchId})`, isDataAvailable: true, isTriggerActive: true };
    const slots = this.ctx.scheduler.slots;

    const g0 = now();
    const sink = this.writer.sink;
    const splits = this.sources.flatMap((source, i) =>
      source.planSplits(start[i] ?? null, batch.offsets[i], slots).map((input) => ({ source: i, input, schema: source.schema })),
    );
    const getBatch = now() - g0;

    const a0 = now();
    const exec = await this.execution.run(batchId, batch.batchWatermarkMs, splits, this.sources.length);
    const results = exec.outputs;
    const rows: Row[] = [];
    for (const r of results) if (r.rows) for (const row of decodeRows(r.rows)) rows.push(row);
    await sink.addBatch({ batchId, schema: this.outputSchema, outputMode: this.writer.outputMode, results, rows });
    fault('after-sink-commit');
    const addBatch = now() - a0;

    const eventTime = exec.eventTime;
    this.watermark.observe(eventTime ? [eventTime.max] : []);
    fault('before-commit-log');
    const c0 = now();
    this.commitLog.add(batchId, { nextBatchWatermarkMs: this.watermark.current });
    for (const [i, s] of this.sources.entries()) await s.commit?.(batch.offsets[i]);
    this.purgeLogs(batchId);
    const commitOffsets = now() - c0;

    this.available = [...batch.offsets];
    this.nextBatchId = batchId + 1;
    const inputRows = exec.inputRows;
    this.lastBatchWatermarkMs = batch.batchWatermarkMs;
    const progress = this.progress.report({
      batchId,
      triggerStartMs: triggerStart,
      durationMs: {
        addBatch,
        getBatch,
        latestOffset: durations['latestOffset'] ?? 0,
        queryPlanning: 0,
        triggerExecution: now() - triggerStart,
        walCommit: durations['walCommit'] ?? 0,
        commitOffsets,
      },
      sources: this.sources.map((s, i) => ({
        description: s.description,
        startOffset: start[i] ?? null,
        endOffset: batch.offsets[i] ?? null,
        latestOffset: latest[i] ?? null,
        numInputRows: inputRows[i] as number,
      })),
      ...(eventTime && { eventTime: { min: eventTime.min, max: eventTime.max, avg: eventTime.sum / eventTime.count } }),
      ...(this.watermark.enabled && { watermarkMs: batch.batchWatermarkMs }),
      sink: { description: sink.description, numOutputRows: results.reduce((s, r) => s + r.numOutputRows, 0) },
      ...(exec.state && this.stateInfo && { stateOperators: [this.stateInfo.progress(exec.state)] }),
    });
    this.ctx.bus.post({ kind: 'onQueryProgress', event: { progress } });
  }

  private purgeLogs(batchId: number): void {
    const keep = this.ctx.conf.get<number>(CONF_KEYS.minBatchesToRetain);
    const threshold = batchId + 1 - keep;
    if (threshold <= 0) return;
    this.offsetLog.purge(threshold);
    this.commitLog.purge(threshold);
  }

  private onIdle(seq: number): void {
    const due = this.waiters.filter((w) => w.fromTrigger <= seq);
    this.waiters = this.waiters.filter((w) => w.fromTrigger > seq);
    for (const w of due) w.resolve();
    const interval = this.ctx.conf.get<number>(CONF_KEYS.noDataProgressEventInterval);
    const t = now();
    if (t - this.lastIdleEventMs >= interval) {
      this.lastIdleEventMs = t;
      this.ctx.bus.post({ kind: 'onQueryIdle', event: { id: this.id, runId: this.runId, timestamp: new Date(t).toISOString() } });
    }
  }

  private terminate(error: unknown): void {
    this.active = false;
    if (error !== null) {
      this.exception =
        error instanceof SluiceError
          ? error
          : new SluiceError('STREAMING_QUERY_FAILED', `query ${this.name ?? this.id} failed: ${(error as Error)?.message ?? String(error)}`, {
              cause: error,
            });
    }
    this.status = { message: 'Stopped', isDataAvailable: false, isTriggerActive: false };
    for (const s of this.sources) s.stop?.();
    this.lock.release();
    if (this.temporaryCheckpoint) rmSync(this.checkpointDir, { recursive: true, force: true });
    for (const w of this.waiters) {
      if (this.exception) w.reject(this.exception);
      else w.resolve();
    }
    this.waiters = [];
    this.ctx.bus.post({
      kind: 'onQueryTerminated',
      event: {
        id: this.id,
        runId: this.runId,
        exception: this.exception?.message ?? null,
        errorClassOnException: this.exception?.code ?? null,
        error: this.exception,
      },
    });
  }

  // ---- public control ----------------------------------------------------------------------

  /** Resolves when the loop has ended (never rejects). */
  whenFinished(): Promise<void> {
    return this.finished;
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    this.wake?.();
    await this.finished;
  }

  processAllAvailable(): Promise<void> {
    if (!this.active) return this.exception ? Promise.reject(this.exception) : Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ fromTrigger: this.triggerSeq + 1, resolve, reject });
    });
  }

  get lastProgress(): StreamingQueryProgress | null {
    return this.progress.last;
  }
}
