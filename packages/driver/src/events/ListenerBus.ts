/**
 * Delivers query events to listeners off the batch loop. Events wait in a bounded queue drained
 * asynchronously; a slow listener delays only later events, and a throwing one is logged.
 *
 * When the queue is full, the events that matter most are kept: `onQueryStarted` and
 * `onQueryTerminated` are never dropped; `onQueryIdle` events go first, then the oldest progress
 * events (a newer progress event says more than an older one). Drops are counted per kind.
 */
import { warn } from '@sluice/state';
import type { StreamingQueryProgress } from './progress.js';
import { withTimeout } from '../execution/timeouts.js';

/** A query started (Spark's QueryStartedEvent). */
export interface QueryStartedEvent {
  /** The query's id, stable across restarts. */
  id: string;
  /** The id of this run. */
  runId: string;
  /** The query's name, or null. */
  name: string | null;
  /** When it started, ISO-8601 UTC. */
  timestamp: string;
}
/** A batch ended (Spark's QueryProgressEvent). */
export interface QueryProgressEvent {
  /** The batch's progress. */
  progress: StreamingQueryProgress;
}
/** A trigger found nothing to do (Spark's QueryIdleEvent); sent at most every `sluice.sql.streaming.noDataProgressEventInterval`. */
export interface QueryIdleEvent {
  /** The query's id. */
  id: string;
  /** The id of this run. */
  runId: string;
  /** When, ISO-8601 UTC. */
  timestamp: string;
}
/** A query ended, stopped or failed (Spark's QueryTerminatedEvent). */
export interface QueryTerminatedEvent {
  /** The query's id. */
  id: string;
  /** The id of this run. */
  runId: string;
  /** The error's message, as in Spark; null after a clean stop. */
  exception: string | null;
  /** The error's stable code, null after a clean stop. */
  errorClassOnException: string | null;
  /** The error itself. */
  error: Error | null;
}

/**
 * Hears every query of a session (Spark's StreamingQueryListener), added with
 * `session.streams.addListener`. Each method is optional and may return a promise. Listeners are
 * called off the batch loop, in order, through a bounded queue: a slow or throwing listener
 * never delays or fails a query (when the queue is full, idle and then old progress events are
 * dropped, and counted in `session.metrics()`).
 *
 * @example
 * ```ts
 * session.streams.addListener({
 *   onQueryProgress: ({ progress }) => console.log(progress.batchId, progress.numInputRows),
 *   onQueryTerminated: (e) => { if (e.exception) console.error(e.errorClassOnException, e.exception); },
 * });
 * ```
 */
export interface StreamingQueryListener {
  /** A query started. */
  onQueryStarted?(event: QueryStartedEvent): unknown;
  /** A batch of a query ended. */
  onQueryProgress?(event: QueryProgressEvent): unknown;
  /** A query's trigger found no new data and no batch was due. */
  onQueryIdle?(event: QueryIdleEvent): unknown;
  /** A query ended: stopped, done (AvailableNow, Once) or failed. */
  onQueryTerminated?(event: QueryTerminatedEvent): unknown;
}

type Posted =
  | { kind: 'onQueryStarted'; event: QueryStartedEvent }
  | { kind: 'onQueryProgress'; event: QueryProgressEvent }
  | { kind: 'onQueryIdle'; event: QueryIdleEvent }
  | { kind: 'onQueryTerminated'; event: QueryTerminatedEvent };

/** The kinds of listener events, by the listener method that takes them. */
export type EventKind = keyof StreamingQueryListener;

/** Droppable kinds, in the order they are dropped when the queue is full. */
const DROP_ORDER = ['onQueryIdle', 'onQueryProgress'] as const;

interface Queued {
  seq: number;
  posted: Posted;
}

export class ListenerBus {
  private readonly listeners = new Set<StreamingQueryListener>();
  /** One FIFO per kind; delivery merges them by post order (`seq`). */
  private readonly queues: Record<EventKind, Queued[]> = {
    onQueryStarted: [],
    onQueryProgress: [],
    onQueryIdle: [],
    onQueryTerminated: [],
  };
  private size = 0;
  private seq = 0;
  private draining: Promise<void> | undefined;
  /** The event being delivered, until every listener has settled on it. */
  private delivering = false;
  private readonly dropped: Record<EventKind, number> = { onQueryStarted: 0, onQueryProgress: 0, onQueryIdle: 0, onQueryTerminated: 0 };
  private warnedAt = 0;
  private undelivered = 0;
  private closed = false;

  constructor(private readonly capacity: number) {}

  get numDroppedEvents(): number {
    return Object.values(this.dropped).reduce((a, b) => a + b, 0);
  }

  /** Events dropped because the queue was full, per kind (started and terminated are never). */
  get numDroppedEventsByKind(): Record<EventKind, number> {
    return { ...this.dropped };
  }

  /** Events waiting for the listeners now. */
  get queueSize(): number {
    return this.size;
  }

  /** Events still queued (or being delivered) when the last `drain` gave up waiting. */
  get numUndeliveredEvents(): number {
    return this.undelivered;
  }

  addListener(l: StreamingQueryListener): void {
    this.listeners.add(l);
  }

  removeListener(l: StreamingQueryListener): void {
    this.listeners.delete(l);
  }

  post(p: Posted): void {
    if (this.listeners.size === 0 || this.closed) return;
    if (this.size >= this.capacity && !this.makeRoom(p.kind)) {
      this.countDrop(p.kind);
      return;
    }
    this.queues[p.kind].push({ seq: this.seq++, posted: p });
    this.size += 1;
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /**
   * Frees one place for an event of `kind`, dropping a less important queued event; false when
   * the incoming event is the one to drop. Lifecycle events always get a place, beyond the
   * capacity if every queued event is a lifecycle event too.
   */
  private makeRoom(kind: EventKind): boolean {
    // An incoming idle event is the first to go; any other displaces a queued idle event, then the
    // oldest progress event.
    if (kind === 'onQueryIdle') return false;
    for (const victim of DROP_ORDER) {
      const q = this.queues[victim];
      if (q.length > 0) {
        q.shift();
        this.size -= 1;
        this.countDrop(victim);
        return true;
      }
    }
    return kind !== 'onQueryProgress';
  }

  private countDrop(kind: EventKind): void {
    this.dropped[kind] += 1;
    const total = this.numDroppedEvents;
    if (this.warnedAt === 0 || total >= this.warnedAt * 2) {
      this.warnedAt = total;
      warn(
        'SLUICE_LISTENER_EVENTS_DROPPED',
        `listener bus queue is full (capacity ${this.capacity}); ${total} events dropped so far (idle first, then the oldest progress)`,
      );
    }
  }

  /** The queued event posted first, removed from its queue. */
  private next(): Posted | undefined {
    let best: Queued[] | undefined;
    for (const q of Object.values(this.queues)) {
      const head = q[0];
      if (head && (!best || head.seq < (best[0] as Queued).seq)) best = q;
    }
    const item = best?.shift();
    if (item) this.size -= 1;
    return item?.posted;
  }

  private async drain(): Promise<void> {
    try {
      for (let p = this.next(); p; p = this.next()) {
        this.delivering = true;
        for (const l of [...this.listeners]) {
          const handler = l[p.kind] as ((e: unknown) => unknown) | undefined;
          if (!handler) continue;
          try {
            await handler.call(l, p.event);
          } catch (e) {
            warn('SLUICE_LISTENER_ERROR', `streaming query listener ${p.kind} threw: ${(e as Error)?.message ?? String(e)}`);
          }
        }
        this.delivering = false;
      }
    } finally {
      this.draining = undefined;
    }
  }

  /**
   * Resolves once every queued event was delivered, or after `timeoutMs` (a listener that never
   * settles must not hold its session open); then `numUndeliveredEvents` says how many were left.
   */
  async idle(timeoutMs = Number.POSITIVE_INFINITY): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.draining) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await withTimeout(this.draining, left);
    }
    this.undelivered = this.size + (this.delivering ? 1 : 0);
  }

  /**
   * Waits as `idle` does, then drops what is still queued (counted in numUndeliveredEvents), so
   * that listeners stop being called: a slow one, left with a long queue, would otherwise keep
   * the process alive long after its session closed.
   */
  async close(timeoutMs: number): Promise<void> {
    await this.idle(timeoutMs);
    this.closed = true;
    for (const q of Object.values(this.queues)) q.length = 0;
    this.size = 0;
  }
}
