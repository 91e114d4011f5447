/**
 * Delivers query events to listeners off the batch loop. Events wait in a bounded queue drained
 * asynchronously; a slow listener delays only later events, a throwing one is logged, and when the
 * queue is full new events are dropped and counted (`listenerBus.numDroppedEvents`).
 */
import { warn } from '@sluice/state';
import type { StreamingQueryProgress } from './progress.js';

export interface QueryStartedEvent {
  id: string;
  runId: string;
  name: string | null;
  timestamp: string;
}
export interface QueryProgressEvent {
  progress: StreamingQueryProgress;
}
export interface QueryIdleEvent {
  id: string;
  runId: string;
  timestamp: string;
}
export interface QueryTerminatedEvent {
  id: string;
  runId: string;
  /** The error's message, as in Spark; null after a clean stop. */
  exception: string | null;
  /** The error's stable code, null after a clean stop. */
  errorClassOnException: string | null;
  /** The error itself. */
  error: Error | null;
}

export interface StreamingQueryListener {
  onQueryStarted?(event: QueryStartedEvent): unknown;
  onQueryProgress?(event: QueryProgressEvent): unknown;
  onQueryIdle?(event: QueryIdleEvent): unknown;
  onQueryTerminated?(event: QueryTerminatedEvent): unknown;
}

type Posted =
  | { kind: 'onQueryStarted'; event: QueryStartedEvent }
  | { kind: 'onQueryProgress'; event: QueryProgressEvent }
  | { kind: 'onQueryIdle'; event: QueryIdleEvent }
  | { kind: 'onQueryTerminated'; event: QueryTerminatedEvent };

export class ListenerBus {
  private readonly listeners = new Set<StreamingQueryListener>();
  private readonly queue: Posted[] = [];
  private draining: Promise<void> | undefined;
  private dropped = 0;
  private warnedAt = 0;

  constructor(private readonly capacity: number) {}

  get numDroppedEvents(): number {
    return this.dropped;
  }

  addListener(l: StreamingQueryListener): void {
    this.listeners.add(l);
  }

  removeListener(l: StreamingQueryListener): void {
    this.listeners.delete(l);
  }

  post(p: Posted): void {
    if (this.listeners.size === 0) return;
    if (this.queue.length >= this.capacity) {
      this.dropped += 1;
      if (this.dropped >= this.warnedAt * 2 || this.warnedAt === 0) {
        this.warnedAt = this.dropped;
        warn('SLUICE_LISTENER_EVENTS_DROPPED', `listener bus queue is full (capacity ${this.capacity}); ${this.dropped} events dropped so far`);
      }
      return;
    }
    this.queue.push(p);
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      for (let p = this.queue.shift(); p; p = this.queue.shift()) {
        for (const l of [...this.listeners]) {
          const handler = l[p.kind] as ((e: unknown) => unknown) | undefined;
          if (!handler) continue;
          try {
            await handler.call(l, p.event);
          } catch (e) {
            warn('SLUICE_LISTENER_ERROR', `streaming query listener ${p.kind} threw: ${(e as Error)?.message ?? String(e)}`);
          }
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Resolves once every queued event was delivered. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }
}
