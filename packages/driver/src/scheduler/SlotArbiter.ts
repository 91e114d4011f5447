/**
 * Which waiting task a free slot runs: a pure decision over the slots, the running counts and the
 * waiting tasks (TaskScheduler carries it out; SlotArbiter.test.ts tests it without workers).
 *
 * A task can start when its slot (a state task: the slot owning its shard) or, for a task that may
 * run anywhere, any slot is free. Among those, FIFO takes the first submitted. FAIR applies Spark's
 * FairSchedulingAlgorithm over the pools that have such tasks: pools below their minShare first, by
 * running / minShare; then by running / weight; and inside the chosen pool its own mode: FIFO by
 * submission, or FAIR between its query runs by their running tasks.
 *
 * Pools whose shares tie go by their longest-waiting task. Spark breaks the tie by pool name,
 * which with a few slots and many busy pools starves the pools whose names sort last: with 2
 * slots, most pools run nothing at any moment, so most comparisons tie.
 */
import type { PoolConf } from '../conf/RuntimeConf.js';

export interface PoolSettings {
  /** How slots go to pools: FIFO (by submission) or FAIR (FairSchedulingAlgorithm). */
  mode: 'FIFO' | 'FAIR';
  pools: Readonly<Record<string, PoolConf>>;
}

export const DEFAULT_POOL = 'default';
const UNLISTED_POOL: PoolConf = { schedulingMode: 'FIFO', weight: 1, minShare: 0 };

/** What the arbiter knows of a waiting task. */
export interface Candidate {
  pool: string;
  runId: string;
  /** The slot it must run on, or undefined: any. */
  wanted: number | undefined;
}

export class SlotArbiter {
  readonly runningByPool = new Map<string, number>();
  readonly runningByRun = new Map<string, number>();
  /** Free slots, the most recently freed last (a task that may run anywhere takes it). */
  readonly free: number[];

  constructor(
    slots: number,
    readonly settings: PoolSettings,
  ) {
    this.free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  conf(name: string): PoolConf {
    return this.settings.pools[name] ?? UNLISTED_POOL;
  }

  canStart(t: Candidate): boolean {
    return this.free.length > 0 && (t.wanted === undefined || this.free.includes(t.wanted));
  }

  /** Takes a slot for `t`, counts it running, and returns the slot. */
  start(t: Candidate): number {
    const i = t.wanted === undefined ? this.free.length - 1 : this.free.indexOf(t.wanted);
    if (i < 0) throw new Error(`slot ${t.wanted} is not free`);
    const slot = this.free.splice(i, 1)[0] as number;
    count(this.runningByPool, t.pool, 1);
    count(this.runningByRun, t.runId, 1);
    return slot;
  }

  finish(slot: number, t: Candidate): void {
    this.free.push(slot);
    count(this.runningByPool, t.pool, -1);
    count(this.runningByRun, t.runId, -1);
  }

  /**
   * The index in `waiting` (in submission order) of the task to start next, or -1 if none can.
   * `startable` says which can start (by default: those whose slot is free).
   */
  pick(waiting: readonly Candidate[], startable: (t: Candidate) => boolean = (t) => this.canStart(t)): number {
    let pool: string | undefined;
    let first = -1;
    for (let i = 0; i < waiting.length; i++) {
      const t = waiting[i] as Candidate;
      if (!startable(t)) continue;
      if (this.settings.mode === 'FIFO') return i;
      if (pool === undefined || (t.pool !== pool && this.fairOrder(t.pool, pool) < 0)) [pool, first] = [t.pool, i];
    }
    if (pool === undefined || this.conf(pool).schedulingMode === 'FIFO') return first;
    let best = first;
    let bestRunning = Number.POSITIVE_INFINITY;
    waiting.forEach((t, i) => {
      if (t.pool !== pool || !startable(t)) return;
      const running = this.runningByRun.get(t.runId) ?? 0;
      if (running < bestRunning) [best, bestRunning] = [i, running];
    });
    return best;
  }

  private fairOrder(a: string, b: string): number {
    const pa = this.conf(a);
    const pb = this.conf(b);
    const ra = this.runningByPool.get(a) ?? 0;
    const rb = this.runningByPool.get(b) ?? 0;
    const needyA = ra < pa.minShare;
    const needyB = rb < pb.minShare;
    if (needyA !== needyB) return needyA ? -1 : 1;
    const [x, y] = needyA ? [ra / Math.max(pa.minShare, 1), rb / Math.max(pb.minShare, 1)] : [ra / pa.weight, rb / pb.weight];
    return x < y ? -1 : x > y ? 1 : 0;
  }
}

export function count(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n === 0) m.delete(key);
  else m.set(key, n);
}
