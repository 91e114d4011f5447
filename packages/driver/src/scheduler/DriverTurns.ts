/**
 * The driver's own work, ordered by the pools as the slots are. Every query's driver-side steps
 * (polling its sources and planning a batch, and taking a batch's results to its sink and commit
 * log) run on the one event loop. A step waits for its turn here; while several wait, one is
 * granted per event-loop turn, the one SlotArbiter's pick favours by the pools' running tasks:
 * under FAIR a pool below its minShare, or with fewer running tasks for its weight, goes before
 * the busy ones, and under FIFO they go in arrival order. A step arriving while none waits runs
 * at once. A granted step runs until its next await (a checkpoint write, a task), so one turn is
 * its synchronous part.
 */
import type { Candidate, SlotArbiter } from './SlotArbiter.js';

interface Turn extends Candidate {
  grant(): void;
}

export class DriverTurns {
  private readonly waiting: Turn[] = [];
  private granting = false;

  constructor(private readonly arbiter: SlotArbiter) {}

  /** Resolves when the step of `runId` (in `pool`) may run: at once when no other step waits. */
  turn(pool: string, runId: string): Promise<void> {
    if (!this.granting) {
      this.granting = true;
      setImmediate(() => this.grantNext());
      return Promise.resolve();
    }
    return new Promise((grant) => {
      this.waiting.push({ pool, runId, wanted: undefined, grant });
    });
  }

  get waitingTurns(): number {
    return this.waiting.length;
  }

  /** One waiting step a turn of the event loop, until none waits. */
  private grantNext(): void {
    if (this.waiting.length === 0) {
      this.granting = false;
      return;
    }
    const [t] = this.waiting.splice(
      this.arbiter.pick(this.waiting, () => true),
      1,
    );
    t?.grant();
    setImmediate(() => this.grantNext());
  }
}
