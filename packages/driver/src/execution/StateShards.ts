/**
 * A query's state shards in the executor workers: closing them (when the query stops, or before a
 * repartition moves their data in the driver), and what a failed close leaves behind.
 *
 * Shards a stopped query could not close are remembered by state directory for the life of the
 * process, so that the next start on that checkpoint can say what was left open and why, instead
 * of a bare "locked".
 */
import { SluiceError, warn } from '@sluice/state';
import type { TaskScheduler } from '../scheduler/TaskScheduler.js';
import { withTimeout } from './timeouts.js';

export interface NotClosed {
  dir: string;
  error: string;
}

interface LeftOpen {
  query: string;
  stoppedAt: string;
  shards: NotClosed[];
}

const leftOpen = new Map<string, LeftOpen>();

/**
 * Closes the shards under `stateDir` in every worker, within `timeoutMs` (a slot held by another
 * query's task that never ends must not hold this one); returns the shards whose close failed.
 */
export async function closeShardsInWorkers(
  scheduler: TaskScheduler,
  query: { queryId: string; runId: string },
  stateDir: string,
  timeoutMs: number,
): Promise<NotClosed[]> {
  const tasks = Array.from({ length: scheduler.slots }, (_, slot) => ({
    kind: 'release' as const,
    queryId: query.queryId,
    // Its own run: releasing never counts as the aborted batch work of the query's run.
    runId: `${query.runId}/release`,
    batchId: -1,
    partition: slot,
    attempt: 0,
    stateDir,
  }));
  try {
    const results = await withTimeout(
      scheduler.runTasks(tasks, (t) => t.partition),
      timeoutMs,
    );
    if (results === undefined) throw new Error(`the release did not finish within ${timeoutMs} ms`);
    return results.flatMap((r) => r.notClosed ?? []);
  } catch (e) {
    const reason = e instanceof SluiceError ? `${e.code}: ${e.message}` : String((e as Error)?.message ?? e);
    return [{ dir: stateDir, error: reason }];
  }
}

/**
 * After a stop: remembers the shards whose close failed (and warns), or forgets what an earlier
 * stop had left open when everything closed.
 */
export function recordRelease(stateDir: string, query: string, notClosed: NotClosed[]): void {
  if (notClosed.length === 0) {
    leftOpen.delete(stateDir);
    return;
  }
  leftOpen.set(stateDir, { query, stoppedAt: new Date().toISOString(), shards: notClosed });
  warn('SLUICE_STATE_RELEASE_FAILED', `query ${query} could not close its state shards: ${notClosed.map((s) => `${s.dir}: ${s.error}`).join('; ')}`);
}

/**
 * The slot for a query's shard 0 (shard s then runs on slot (first + s) % slots): the one holding
 * the fewest shards of the session's other queries (`taken`: the slot of each), the lowest on a
 * tie. Many one-shard queries so share the slots out instead of all landing on slot 0.
 */
export function firstStateSlot(taken: readonly number[], slots: number): number {
  const load = Array.from({ length: slots }, () => 0);
  for (const s of taken) load[s] = (load[s] as number) + 1;
  return load.indexOf(Math.min(...load));
}

/** The shards under `stateDir` opened again: whatever an earlier stop left open is gone. */
export function forgetLeftOpen(stateDir: string): void {
  leftOpen.delete(stateDir);
}

/**
 * A shard that an earlier stop left open in this process cannot be opened again: the error of a
 * locked shard under `stateDir` then says so, rather than blaming another process.
 */
export function explainLeftOpen(e: unknown, stateDir: string | undefined): unknown {
  const entry = stateDir === undefined ? undefined : leftOpen.get(stateDir);
  if (!entry || !(e instanceof SluiceError) || e.code !== 'STATE_STORE_LOCKED') return e;
  const shards = entry.shards.map((s) => `${s.dir} (${s.error})`).join(', ');
  const note = `query ${entry.query} left state shards open when it stopped at ${entry.stoppedAt}, because closing them failed: ${shards}; restart the process to release them`;
  return new SluiceError('STATE_STORE_LOCKED', `${e.message}; ${note}`, { ...(e.file !== undefined && { file: e.file }), cause: e });
}
