/**
 * State shards that a stopped query could not close, by state directory. They are kept for the
 * life of the process, so that the next start on that checkpoint can say what was left open and
 * why, instead of a bare "locked".
 */
export interface LeftOpen {
  query: string;
  stoppedAt: string;
  shards: Array<{ dir: string; error: string }>;
}

const leftOpen = new Map<string, LeftOpen>();

export function recordLeftOpen(stateDir: string, entry: LeftOpen): void {
  leftOpen.set(stateDir, entry);
}

export function leftOpenAt(stateDir: string): LeftOpen | undefined {
  return leftOpen.get(stateDir);
}

export function forgetLeftOpen(stateDir: string): void {
  leftOpen.delete(stateDir);
}

/** The sentence an error about a shard under `stateDir` gains when a stop left shards open there. */
export function leftOpenNote(stateDir: string): string | undefined {
  const e = leftOpen.get(stateDir);
  if (!e) return undefined;
  const shards = e.shards.map((s) => `${s.dir} (${s.error})`).join(', ');
  return `query ${e.query} left state shards open when it stopped at ${e.stoppedAt}, because closing them failed: ${shards}; restart the process to release them`;
}
