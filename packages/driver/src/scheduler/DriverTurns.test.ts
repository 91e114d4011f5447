/**
 * The driver's turns alone: queries' steps waiting for the event loop, granted one a turn in the
 * order the pools give. Slots are held busy through the arbiter, as running tasks would hold them.
 */
import { describe, expect, it } from 'vitest';
import { DriverTurns } from './DriverTurns.js';
import { SlotArbiter, type PoolSettings } from './SlotArbiter.js';

const FAIR: PoolSettings = {
  mode: 'FAIR',
  pools: {
    critical: { schedulingMode: 'FIFO', weight: 10, minShare: 1 },
    busy: { schedulingMode: 'FAIR', weight: 1, minShare: 0 },
  },
};

/** Queues one step per [pool, name] behind a first step that takes the driver; the names in the order granted. */
async function grantOrder(settings: PoolSettings, steps: Array<[pool: string, name: string]>, busyTasks = 2): Promise<string[]> {
  const arbiter = new SlotArbiter(2, settings);
  for (let i = 0; i < busyTasks; i++) arbiter.start({ pool: 'busy', runId: 'busy-0', wanted: undefined });
  const turns = new DriverTurns(arbiter);
  const order: string[] = [];
  await turns.turn('busy', 'busy-0'); // the driver is taken for this turn of the loop
  await Promise.all(steps.map(([pool, name]) => turns.turn(pool, `${pool}-${name}`).then(() => order.push(name))));
  expect(turns.waitingTurns).toBe(0);
  return order;
}

describe('DriverTurns', () => {
  it('FAIR: a critical pool step goes before the busy pool steps that waited longer', async () => {
    const order = await grantOrder(FAIR, [
      ['busy', 'b1'],
      ['busy', 'b2'],
      ['critical', 'c'],
      ['busy', 'b3'],
    ]);
    expect(order).toEqual(['c', 'b1', 'b2', 'b3']);
  });

  it('FAIR: among one pool, the run with fewer running tasks first', async () => {
    const order = await grantOrder(FAIR, [
      ['busy', '0'],
      ['busy', 'idle'],
    ]);
    // busy-0 has the 2 running tasks, busy-idle none.
    expect(order).toEqual(['idle', '0']);
  });

  it('FIFO: the steps go in the order they arrived, whatever their pools', async () => {
    const order = await grantOrder({ ...FAIR, mode: 'FIFO' }, [
      ['busy', 'b1'],
      ['critical', 'c'],
      ['busy', 'b2'],
    ]);
    expect(order).toEqual(['b1', 'c', 'b2']);
  });

  it('grants one step a turn of the event loop, and a step arriving while none waits at once', async () => {
    const turns = new DriverTurns(new SlotArbiter(1, FAIR));
    const seen: string[] = [];
    const immediate = new Promise<void>((resolve) =>
      setImmediate(() => {
        seen.push('immediate');
        resolve();
      }),
    );
    await turns.turn('busy', 'a').then(() => seen.push('a'));
    const b = turns.turn('busy', 'b').then(() => seen.push('b'));
    const c = turns.turn('busy', 'c').then(() => seen.push('c'));
    await Promise.all([immediate, b, c]);
    expect(seen).toEqual(['a', 'immediate', 'b', 'c']);
    // Once none waits, the next step runs without waiting for a turn.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const late: string[] = [];
    const after = new Promise<void>((resolve) =>
      setImmediate(() => {
        late.push('immediate');
        resolve();
      }),
    );
    await turns.turn('busy', 'd').then(() => late.push('d'));
    await after;
    expect(late).toEqual(['d', 'immediate']);
  });
});
