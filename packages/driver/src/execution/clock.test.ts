/**
 * The manual clock (clock.ts): `advance` waits for every query on it to wait, moves the time,
 * wakes the sleepers now due, and resolves once they wait again or leave.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';

describe('ManualClock', () => {
  it('wakes a sleeper once the time reaches it, and resolves when it sleeps again', async () => {
    const clock = new ManualClock(0);
    const loop = {};
    const log: string[] = [];
    clock.attach(loop);
    const sleep = (ms: number) => new Promise<void>((resolve) => clock.sleep(loop, ms, resolve));
    const running = (async () => {
      for (let i = 0; i < 3; i++) {
        log.push(`trigger at ${clock.now()}`);
        await sleep(1000);
      }
      clock.detach(loop);
    })();
    await clock.allWaiting();
    expect(log).toEqual(['trigger at 0']);
    await clock.advance(500);
    expect(log).toEqual(['trigger at 0']); // not due yet
    await clock.advance(500);
    expect(log).toEqual(['trigger at 0', 'trigger at 1000']);
    await clock.advance(5000);
    expect(log).toEqual(['trigger at 0', 'trigger at 1000', 'trigger at 6000']);
    await clock.advance(1000); // the loop left after its third trigger
    await running;
    expect(clock.getTimeMillis()).toBe(7000);
  });

  it('refuses a negative or non-finite step', async () => {
    const clock = new ManualClock();
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
    expect(() => new ManualClock(Number.NaN)).toThrow(RangeError);
  });
});
