/**
 * The arbiter alone, as the scheduler drives it: slots start busy or free, tasks wait in
 * submission order, and each freed slot goes to the task `pick` chooses. No workers, no timing.
 */
import { describe, expect, it } from 'vitest';
import { SlotArbiter, type Candidate, type PoolSettings } from './SlotArbiter.js';

const task = (pool: string, runId = `run-${pool}`, wanted?: number): Candidate => ({ pool, runId, wanted });

/** Starts what can start now, as the scheduler's dispatch does; returns what started, in order. */
function dispatch(arbiter: SlotArbiter, waiting: Candidate[]): Array<{ task: Candidate; slot: number }> {
  const started = [];
  for (let i = arbiter.pick(waiting); i >= 0; i = arbiter.pick(waiting)) {
    const t = waiting.splice(i, 1)[0] as Candidate;
    started.push({ task: t, slot: arbiter.start(t) });
  }
  return started;
}

/** Every slot busy with pool z, then `waiting` queued, then every z task finished: the running tasks per pool. */
function sharesAfterBlockers(settings: PoolSettings, slots: number, waiting: Candidate[]): Record<string, number> {
  const arbiter = new SlotArbiter(slots, settings);
  const blockers = dispatch(
    arbiter,
    Array.from({ length: slots }, () => task('z')),
  );
  for (const b of blockers) {
    arbiter.finish(b.slot, b.task);
    dispatch(arbiter, waiting);
  }
  return Object.fromEntries(arbiter.runningByPool);
}

const pools = (a: [weight: number, minShare: number], b: [weight: number, minShare: number]): PoolSettings['pools'] => ({
  a: { schedulingMode: 'FIFO', weight: a[0], minShare: a[1] },
  b: { schedulingMode: 'FIFO', weight: b[0], minShare: b[1] },
});

const many = (pool: string, n: number) => Array.from({ length: n }, () => task(pool));

describe('SlotArbiter', () => {
  it('FIFO: a freed slot goes to the task submitted first, whatever its pool', () => {
    const arbiter = new SlotArbiter(1, { mode: 'FIFO', pools: {} });
    const [first] = dispatch(arbiter, [task('a')]);
    const waiting = ['b1', 'a1', 'b2', 'a2'].map((id) => task(id[0] as string, id));
    const order: string[] = [];
    let running = first!;
    for (let k = 0; k < 4; k++) {
      arbiter.finish(running.slot, running.task);
      running = dispatch(arbiter, waiting)[0]!;
      order.push(running.task.runId);
    }
    expect(order).toEqual(['b1', 'a1', 'b2', 'a2']);
  });

  it('FIFO across pools gives every freed slot to the first submitted', () => {
    expect(sharesAfterBlockers({ mode: 'FIFO', pools: {} }, 4, [...many('a', 8), ...many('b', 8)])).toEqual({ a: 4 });
  });

  it('FAIR: slots are shared in proportion to weight, whatever was submitted first', () => {
    expect(sharesAfterBlockers({ mode: 'FAIR', pools: pools([1, 0], [3, 0]) }, 4, [...many('a', 8), ...many('b', 8)])).toEqual({ a: 1, b: 3 });
  });

  it('FAIR: a pool below its minShare is served first, even against ten times its weight', () => {
    expect(sharesAfterBlockers({ mode: 'FAIR', pools: pools([1, 2], [10, 0]) }, 4, [...many('b', 8), ...many('a', 8)])).toEqual({ a: 2, b: 2 });
  });

  it('FAIR: pools whose shares tie go by their longest-waiting task, so a pool named last is not starved', () => {
    const arbiter = new SlotArbiter(1, { mode: 'FAIR', pools: {} });
    const waiting = [task('a'), task('b'), task('z'), task('a'), task('b')];
    const order: string[] = [];
    for (let k = 0; k < 5; k++) {
      const [s] = dispatch(arbiter, waiting);
      order.push(s!.task.pool);
      arbiter.finish(s!.slot, s!.task);
    }
    // By name, z would run last.
    expect(order).toEqual(['a', 'b', 'z', 'a', 'b']);
  });

  it('FAIR inside a pool shares its slots between query runs by their running tasks', () => {
    const settings: PoolSettings = { mode: 'FAIR', pools: { p: { schedulingMode: 'FAIR', weight: 1, minShare: 0 } } };
    const arbiter = new SlotArbiter(3, settings);
    const started = dispatch(arbiter, [task('p', 'r1'), task('p', 'r1'), task('p', 'r1'), task('p', 'r2')]);
    expect(started.map((s) => s.task.runId)).toEqual(['r1', 'r2', 'r1']);
  });

  it('a task pinned to a slot waits for that slot; others take any free one', () => {
    const arbiter = new SlotArbiter(2, { mode: 'FIFO', pools: {} });
    const waiting = [task('a', 'x', 1), task('a', 'y', 1), task('b', 'z')];
    const started = dispatch(arbiter, waiting);
    expect(started.map((s) => [s.task.runId, s.slot])).toEqual([
      ['x', 1],
      ['z', 0],
    ]);
    expect(waiting.map((t) => t.runId)).toEqual(['y']);
    // Slot 0 freeing does not start y: it needs slot 1.
    arbiter.finish(0, started[1]!.task);
    expect(dispatch(arbiter, waiting)).toEqual([]);
    arbiter.finish(1, started[0]!.task);
    expect(dispatch(arbiter, waiting).map((s) => [s.task.runId, s.slot])).toEqual([['y', 1]]);
  });
});
