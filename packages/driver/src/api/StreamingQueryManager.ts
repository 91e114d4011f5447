/** `session.streams`: the active queries of a session, and the listener bus. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SluiceError } from '@sluice/state';
import { planInputs } from '../plan/LogicalPlan.js';
import { checkRedisSource } from '../sources/RedisStreamSource.js';
import type { DataFrame } from './DataFrame.js';
import type { QuerySpec } from '../plan/QuerySpec.js';
import type { StreamingQueryListener } from '../events/ListenerBus.js';
import { resolveProcessors } from '../plan/processors.js';
import { MicroBatchExecution } from '../execution/MicroBatchExecution.js';
import { firstStateSlot } from '../execution/StateShards.js';
import type { Session } from './Session.js';
import { StreamingQuery } from './StreamingQuery.js';

/**
 * `session.streams` (Spark's StreamingQueryManager): the session's active queries, waiting for
 * their end, and the query listeners.
 */
export class StreamingQueryManager {
  private readonly queries = new Map<string, StreamingQuery>();
  private terminatedWaiters: Array<(q: StreamingQuery) => void> = [];
  private lastTerminated: StreamingQuery | undefined;

  /** @internal */
  constructor(private readonly session: Session) {}

  /** The queries running now. */
  get active(): StreamingQuery[] {
    return [...this.queries.values()].filter((q) => q.isActive);
  }

  /** The running query with this id, or null. */
  get(id: string): StreamingQuery | null {
    return this.queries.get(id) ?? null;
  }

  /**
   * Adds a listener of every query's start, progress, idleness and end. Listeners are called off
   * the batch loop: a slow or throwing one never delays or fails a query.
   */
  addListener(listener: StreamingQueryListener): void {
    this.session.listenerBus.addListener(listener);
  }

  /** Removes a listener added by {@link StreamingQueryManager.addListener}. */
  removeListener(listener: StreamingQueryListener): void {
    this.session.listenerBus.removeListener(listener);
  }

  /**
   * Resolves (true) when any query of the session ends, or has ended since the last
   * resetTerminated; false after `timeoutMs`. Rejects with the error of a query that failed.
   */
  async awaitAnyTermination(timeoutMs?: number): Promise<boolean> {
    const q =
      this.lastTerminated ??
      (await new Promise<StreamingQuery | undefined>((resolve) => {
        this.terminatedWaiters.push(resolve);
        if (timeoutMs !== undefined) setTimeout(() => resolve(undefined), timeoutMs).unref();
      }));
    if (!q) return false;
    if (q.exception) throw q.exception;
    return true;
  }

  /** Forgets past terminations so that awaitAnyTermination waits for a new one. */
  resetTerminated(): void {
    this.lastTerminated = undefined;
  }

  /** @internal Starts `df` as `spec` says (DataStreamWriter.start and toTable call this). */
  async startQuery(df: DataFrame, spec: QuerySpec): Promise<StreamingQuery> {
    this.session.assertOpen();
    if (spec.queryName !== null && this.active.some((q) => q.name === spec.queryName)) {
      throw new SluiceError('QUERY_NAME_IN_USE', `a query named ${spec.queryName} is already active`, { option: 'queryName' });
    }
    // A broker source is checked before anything starts: reachable, streams that exist and are streams.
    for (const input of planInputs(df.plan)) if (input.source.format === 'redis') await checkRedisSource(input.source.redis);
    const temporary = spec.checkpointLocation === undefined;
    const checkpointDir = spec.checkpointLocation ?? mkdtempSync(join(tmpdir(), 'sluice-checkpoint-'));
    const ctx = {
      conf: this.session.conf.snapshot(),
      scheduler: this.session.scheduler(),
      bus: this.session.listenerBus,
      otherStateShards: (id: string) => this.active.reduce((n, q) => n + (q.id === id ? 0 : q.stateShards), 0),
      firstStateSlot: (id: string) =>
        firstStateSlot(
          this.active.flatMap((q) => (q.id === id ? [] : q.stateSlots)),
          this.session.scheduler().slots,
        ),
      metrics: this.session.queryMetrics,
    };
    // transformWithState processors declare their state variables: their modules load here first.
    const plan = await resolveProcessors(df.plan);
    const execution = MicroBatchExecution.open(ctx, plan, df.schema, spec, checkpointDir, temporary);
    const query = new StreamingQuery(execution);
    this.queries.set(query.id, query);
    execution.start();
    void execution.whenFinished().then(() => {
      this.queries.delete(query.id);
      this.lastTerminated = query;
      const waiters = this.terminatedWaiters;
      this.terminatedWaiters = [];
      for (const w of waiters) w(query);
    });
    return query;
  }

  /** @internal Stops every active query (Session.close). */
  async stopAll(): Promise<void> {
    await Promise.all(this.active.map((q) => q.stop()));
  }
}
