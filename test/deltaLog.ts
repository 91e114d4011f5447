/** A Delta table's log read without Sluice, for the tests that check what Sluice's Delta sink wrote. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The table's log as plain JSON, read here without Sluice: each commit's actions by version. */
export function commits(table: string): Array<Array<Record<string, Record<string, unknown>>>> {
  const dir = join(table, '_delta_log');
  return readdirSync(dir)
    .filter((n) => /^\d{20}\.json$/.test(n))
    .sort()
    .map((n) => readFileSync(join(dir, n), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>));
}

/** The data files live at the latest commit, replayed here from the JSON commits. */
export function liveFiles(table: string): string[] {
  const live = new Set<string>();
  for (const actions of commits(table)) {
    for (const a of actions) {
      if (a['add']) live.add(a['add']['path'] as string);
      if (a['remove']) live.delete(a['remove']['path'] as string);
    }
  }
  return [...live].map((p) => join(table, decodeURIComponent(p)));
}

/** The latest txn version of `appId` in the log (-1: none). */
export function txnVersion(table: string, appId: string): number {
  let v = -1;
  for (const actions of commits(table)) for (const a of actions) if (a['txn'] && a['txn']['appId'] === appId) v = a['txn']['version'] as number;
  return v;
}

/** The rows the table's commits added, by the numRecords of their add actions' stats (0 before its first commit). */
export function deltaRowCount(table: string): number {
  if (!existsSync(join(table, '_delta_log'))) return 0;
  let n = 0;
  for (const actions of commits(table)) for (const a of actions) if (a['add']) n += (JSON.parse(a['add']['stats'] as string) as { numRecords: number }).numRecords;
  return n;
}
