import { describe, expect, it } from 'vitest';
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
});
