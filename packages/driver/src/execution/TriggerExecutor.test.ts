import { describe, expect, it } from 'vitest';
import { MultiBatchExecutor, ProcessingTimeExecutor, SingleBatchExecutor, triggerExecutorOf, type TriggerLoop } from './TriggerExecutor.js';

/** A loop on a fake clock: sleeps advance time; `ranPerTrigger` scripts what each trigger does. */
function fakeLoop(ranPerTrigger: boolean[], batchMs = 3) {
  let t = 1000;
  const triggers: number[] = [];
  const sleeps: number[] = [];
  let stop = false;
  const loop: TriggerLoop = {
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
    stopRequested: () => stop,
  };
  const trigger = async (start: number) => {
    triggers.push(start);
    t += batchMs;
    const ran = ranPerTrigger[triggers.length - 1];
    if (ran === undefined) {
      stop = true;
      return false;
    }
    return ran;
  };
  return { loop, trigger, triggers, sleeps };
}

describe('TriggerExecutor', () => {
  it('processing time: a trigger every interval, measured from each trigger start', async () => {
    const f = fakeLoop([true, false, true]);
    await new ProcessingTimeExecutor(100, 10).execute(f.trigger, f.loop);
    expect(f.triggers).toEqual([1000, 1100, 1200, 1300]);
    expect(f.sleeps).toEqual([97, 97, 97]);
  });

  it('processing time 0: back to back after a batch, the polling delay after an idle trigger', async () => {
    const f = fakeLoop([true, true, false, true]);
    await new ProcessingTimeExecutor(0, 10).execute(f.trigger, f.loop);
    expect(f.sleeps).toEqual([10]);
    expect(f.triggers).toHaveLength(5);
  });

  it('once: one trigger, everything available, no no-data batches', async () => {
    const f = fakeLoop([true, true]);
    const once = new SingleBatchExecutor();
    await once.execute(f.trigger, f.loop);
    expect(f.triggers).toHaveLength(1);
    expect(once.readLimit).toEqual({ ignoreLimits: true });
    expect(once.runsNoDataBatches).toBe(false);
  });

  it('available now: batches within the limits until a trigger runs none, then the query ends', async () => {
    const f = fakeLoop([true, true, true, false, true]);
    const now = new MultiBatchExecutor();
    await now.execute(f.trigger, f.loop);
    expect(f.triggers).toHaveLength(4);
    expect(f.sleeps).toEqual([]);
    expect(now.pinsAvailableData).toBe(true);
    expect(now.readLimit).toEqual({ ignoreLimits: false });
  });

  it('is chosen by the trigger of the query', () => {
    expect(triggerExecutorOf({ kind: 'ProcessingTime', intervalMs: 5 }, 10)).toBeInstanceOf(ProcessingTimeExecutor);
    expect(triggerExecutorOf({ kind: 'Once' }, 10)).toBeInstanceOf(SingleBatchExecutor);
    expect(triggerExecutorOf({ kind: 'AvailableNow' }, 10)).toBeInstanceOf(MultiBatchExecutor);
  });
});
