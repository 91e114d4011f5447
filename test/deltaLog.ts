/** A Delta table's log read without Sluice, for the tests that check what Sluice's Delta sink wrote. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A commit's actions, as parsed JSON: `{ add: {...} }`, `{ txn: {...} }`, ... */
export type Commit = Array<Record<string, Record<string, unknown>>>;

/** The bodies of a commit's actions of one kind (add, remove, txn, metaData, protocol, commitInfo). */
export const actionsOf = (commit: Commit | undefined, kind: string): Array<Record<string, unknown>> =>
  (commit ?? []).flatMap((a) => (a[kind] ? [a[kind]] : []));

/** The one action of a kind a commit must hold (its first). */
export function actionOf(commit: Commit | undefined, kind: string): Record<string, unknown> {
  const [a] = actionsOf(commit, kind);
  if (a === undefined) throw new Error(`the commit has no ${kind} action`);
  return a;
}

/** The table's log as plain JSON, read here without Sluice: each commit's actions by version. */
export function commits(table: string): Commit[] {
  const dir = join(table, '_delta_log');
  return readdirSync(dir)
    .filter((n) => /^\d{20}\.json$/.test(n))
    .sort()
    .map((n) =>
      readFileSync(join(dir, n), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>),
    );
}

/** The data files live at the latest commit, replayed here from the JSON commits. */
export function liveFiles(table: string): string[] {
  const live = new Set<string>();
  for (const commit of commits(table)) {
    for (const a of actionsOf(commit, 'add')) live.add(a.path as string);
    for (const r of actionsOf(commit, 'remove')) live.delete(r.path as string);
  }
  return [...live].map((p) => join(table, decodeURIComponent(p)));
}

/** The latest txn version of `appId` in the log (-1: none). */
export function txnVersion(table: string, appId: string): number {
  let v = -1;
  for (const commit of commits(table)) for (const t of actionsOf(commit, 'txn')) if (t.appId === appId) v = t.version as number;
  return v;
}

/** The rows the table's commits added, by the numRecords of their add actions' stats (0 before its first commit). */
export function deltaRowCount(table: string): number {
  if (!existsSync(join(table, '_delta_log'))) return 0;
  return commits(table).reduce((n, c) => n + addedRows(c), 0);
}

/** The rows a commit's add actions hold, by their stats' numRecords. */
export const addedRows = (commit: Commit): number =>
  actionsOf(commit, 'add').reduce((n, a) => n + (JSON.parse(a.stats as string) as { numRecords: number }).numRecords, 0);
