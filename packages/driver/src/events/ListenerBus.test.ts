import { describe, expect, it, vi } from 'vitest';
import { ListenerBus } from './ListenerBus.js';

const idle = (n: number) => ({ kind: 'onQueryIdle' as const, event: { id: 'q', runId: 'r', timestamp: String(n) } });

describe('ListenerBus', () => {
  it('delivers events in order, off the caller, to every listener', async () => {
    const bus = new ListenerBus(100);
    const got: string[] = [];
    bus.addListener({ onQueryIdle: (e) => void got.push(`a${e.timestamp}`) });
    bus.addListener({ onQueryIdle: (e) => void got.push(`b${e.timestamp}`) });
    bus.post(idle(1));
    bus.post(idle(2));
    expect(got).toEqual([]); // post never runs a listener inline
    await bus.idle();
    expect(got).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('drops and counts events beyond its capacity while a listener is slow', async () => {
    const bus = new ListenerBus(3);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const got: string[] = [];
    bus.addListener({
      onQueryIdle: async (e) => {
        got.push(e.timestamp);
        await gate;
      },
    });
    for (let i = 0; i < 10; i++) bus.post(idle(i));
    expect(bus.numDroppedEvents).toBe(7);
    release();
    await bus.idle();
    expect(got).toEqual(['0', '1', '2']);
  });

  it('close() stops delivering once its wait is over: what was queued is counted, never delivered later', async () => {
    const bus = new ListenerBus(100);
    const got: string[] = [];
    bus.addListener({
      onQueryIdle: async (e) => {
        got.push(e.timestamp);
        await new Promise((r) => setTimeout(r, 50));
      },
    });
    for (let i = 0; i < 10; i++) bus.post(idle(i));
    await bus.close(75);
    expect(got).toEqual(['0', '1']);
    expect(bus.numUndeliveredEvents).toBe(9);
    // The event being delivered finishes; nothing after it, nothing posted later.
    bus.post(idle(10));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual(['0', '1']);
  });

  it('a throwing listener does not stop delivery to others', async () => {
    const bus = new ListenerBus(10);
    const got: string[] = [];
    bus.addListener({
      onQueryIdle: () => {
        throw new Error('boom');
      },
    });
    bus.addListener({ onQueryIdle: (e) => void got.push(e.timestamp) });
    bus.post(idle(1));
    bus.post(idle(2));
    await bus.idle();
    expect(got).toEqual(['1', '2']);
  });

  it('when full, drops idle events first, then the oldest progress, never started or terminated', async () => {
    const bus = new ListenerBus(4);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const got: string[] = [];
    const record = (name: string) => async () => {
      got.push(name);
      await gate;
    };
    bus.addListener({
      onQueryStarted: record('started'),
      onQueryIdle: async (e) => record(`idle${e.timestamp}`)(),
      onQueryProgress: async (e) => record(`progress${e.progress.batchId}`)(),
      onQueryTerminated: record('terminated'),
    });
    const progress = (batchId: number) => ({ kind: 'onQueryProgress' as const, event: { progress: { batchId } as never } });
    const lifecycle = (kind: 'onQueryStarted' | 'onQueryTerminated') => ({ kind, event: { id: 'q', runId: 'r' } as never });
    bus.post(lifecycle('onQueryStarted'));
    bus.post(idle(1));
    bus.post(progress(0));
    bus.post(idle(2)); // full now: started, idle1, progress0, idle2
    bus.post(idle(3)); // an idle event goes first: this one
    bus.post(progress(1)); // displaces idle1
    bus.post(progress(2)); // displaces idle2
    bus.post(progress(3)); // no idle left: displaces the oldest progress, 0
    bus.post(lifecycle('onQueryTerminated')); // displaces progress 1: never dropped
    expect(bus.numDroppedEventsByKind).toEqual({ onQueryStarted: 0, onQueryTerminated: 0, onQueryIdle: 3, onQueryProgress: 2 });
    expect(bus.numDroppedEvents).toBe(5);
    release();
    await bus.idle();
    expect(got).toEqual(['started', 'progress2', 'progress3', 'terminated']);
  });

  it('gives started and terminated a place beyond the capacity when nothing else can go', async () => {
    const bus = new ListenerBus(1);
    const got: string[] = [];
    bus.addListener({ onQueryStarted: (e) => void got.push(`s${e.id}`), onQueryTerminated: (e) => void got.push(`t${e.id}`) });
    for (const id of ['a', 'b', 'c']) bus.post({ kind: 'onQueryStarted', event: { id, runId: id, name: null, timestamp: '' } });
    bus.post({ kind: 'onQueryTerminated', event: { id: 'a', runId: 'a', exception: null, errorClassOnException: null, error: null } });
    await bus.idle();
    expect(got).toEqual(['sa', 'sb', 'sc', 'ta']);
    expect(bus.numDroppedEvents).toBe(0);
  });

  it('stops waiting for a listener that never settles after the timeout, and counts what it left', async () => {
    const bus = new ListenerBus(10);
    bus.addListener({ onQueryIdle: () => new Promise(() => {}) });
    bus.post(idle(1));
    bus.post(idle(2));
    bus.post(idle(3));
    vi.useFakeTimers();
    try {
      let done = false;
      const waiting = bus.idle(200).then(() => (done = true));
      await vi.advanceTimersByTimeAsync(199);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
      expect(done).toBe(true);
    } finally {
      vi.useRealTimers();
    }
    expect(bus.numUndeliveredEvents).toBe(3); // one being delivered, two queued
  });
});
