/**
 * A Delta table's transaction log (PROTOCOL.md of delta-io/delta): `_delta_log/<version>.json`
 * commits of newline-delimited actions, Parquet checkpoints (`<version>.checkpoint.parquet`, or
 * `<version>.checkpoint.<part>.<parts>.parquet`) holding the table's state at a version, and
 * `_last_checkpoint` naming the latest one.
 *
 * A snapshot is the state at a version: the latest checkpoint at or before it, then every commit
 * after it replayed in order (an `add` makes a file live, a `remove` takes it out, the last
 * `metaData` and `protocol` win, and each `txn` records an application's latest version). Sluice
 * reads tables of reader version 1 and writes reader version 1, writer version 2.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSchema, readParquetRows, type Row, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { deltaSchema } from './schema.js';

export const LOG_DIR = '_delta_log';

export interface AddAction {
  path: string;
  partitionValues: Record<string, string | null>;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  stats?: string;
}

export interface RemoveAction {
  path: string;
  deletionTimestamp?: number;
  dataChange: boolean;
  partitionValues?: Record<string, string | null>;
  size?: number;
}

export interface MetadataAction {
  id: string;
  name?: string | null;
  description?: string | null;
  format: { provider: string; options: Record<string, string> };
  schemaString: string;
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime?: number | null;
}

export interface ProtocolAction {
  minReaderVersion: number;
  minWriterVersion: number;
  readerFeatures?: string[];
  writerFeatures?: string[];
}

export interface TxnAction {
  appId: string;
  version: number;
  lastUpdated?: number;
}

export type Action =
  | { add: AddAction }
  | { remove: RemoveAction }
  | { metaData: MetadataAction }
  | { protocol: ProtocolAction }
  | { txn: TxnAction }
  | { commitInfo: Record<string, unknown> }
  | Record<string, unknown>;

export const versionName = (v: number): string => String(v).padStart(20, '0');
export const commitPath = (table: string, v: number): string => join(table, LOG_DIR, `${versionName(v)}.json`);

/** The log's files: commit versions, ascending, and checkpoints by version with their part files (whole ones only). */
export function listLog(table: string): { commits: number[]; checkpoints: Map<number, string[]> } {
  const dir = join(table, LOG_DIR);
  if (!existsSync(dir)) {
    throw new SluiceError('DELTA_TABLE_NOT_FOUND', `${table} is not a Delta table: it has no ${LOG_DIR} directory`, { file: table });
  }
  const commits: number[] = [];
  const parts = new Map<number, Map<number, string[]>>();
  for (const name of readdirSync(dir)) {
    const commit = /^(\d{20})\.json$/.exec(name);
    if (commit) {
      commits.push(Number(commit[1]));
      continue;
    }
    const single = /^(\d{20})\.checkpoint\.parquet$/.exec(name);
    const multi = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/.exec(name);
    const m = single ?? multi;
    if (!m) continue;
    const version = Number(m[1]);
    const total = multi ? Number(multi[3]) : 1;
    const byTotal = parts.get(version) ?? new Map<number, string[]>();
    parts.set(version, byTotal);
    byTotal.set(total, [...(byTotal.get(total) ?? []), join(dir, name)]);
  }
  commits.sort((a, b) => a - b);
  const checkpoints = new Map<number, string[]>();
  for (const [version, byTotal] of parts) {
    for (const [total, files] of byTotal) if (files.length === total) checkpoints.set(version, files.sort());
  }
  return { commits, checkpoints };
}

/** The actions of commit `v`, in order; DELTA_LOG_CORRUPT naming the file for a line that is not an action. */
export function readCommit(table: string, v: number): Action[] {
  const path = commitPath(table, v);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    throw new SluiceError('DELTA_VERSION_NOT_FOUND', `Delta table ${table} no longer has commit ${v} (${path}): the log was cleaned up past it`, {
      file: path,
    });
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        const a = JSON.parse(line) as unknown;
        if (typeof a !== 'object' || a === null || Array.isArray(a)) throw new Error('not an object');
        return a as Action;
      } catch (e) {
        throw new SluiceError('DELTA_LOG_CORRUPT', `${path}: line ${i + 1} is not a Delta action: ${(e as Error).message}`, { file: path, line: i + 1 });
      }
    });
}

/** What a checkpoint's rows hold, as Sluice writes them and reads them by name (columns a writer leaves out read as null). */
export const CHECKPOINT_SCHEMA: Schema = parseSchema(
  'txn STRUCT<appId: STRING, version: LONG, lastUpdated: LONG>, ' +
    'add STRUCT<path: STRING, partitionValues: MAP<STRING, STRING>, size: LONG, modificationTime: LONG, dataChange: BOOLEAN, stats: STRING>, ' +
    'remove STRUCT<path: STRING, deletionTimestamp: LONG, dataChange: BOOLEAN, partitionValues: MAP<STRING, STRING>, size: LONG>, ' +
    'metaData STRUCT<id: STRING, name: STRING, description: STRING, format: STRUCT<provider: STRING, options: MAP<STRING, STRING>>, ' +
    'schemaString: STRING, partitionColumns: ARRAY<STRING>, configuration: MAP<STRING, STRING>, createdTime: LONG>, ' +
    'protocol STRUCT<minReaderVersion: INT, minWriterVersion: INT>',
  'schema',
);

const record = (entries: unknown): Record<string, string | null> => Object.fromEntries((entries as Array<[string, string | null]> | null) ?? []);

/** A checkpoint row's action (engine-form maps as entries become objects), or none. */
function checkpointAction(row: Row): Action | undefined {
  const add = row.add as Row | null;
  if (add) return { add: { ...(add as unknown as AddAction), partitionValues: record(add.partitionValues), stats: (add.stats as string | null) ?? undefined } };
  const remove = row.remove as Row | null;
  if (remove) return { remove: { ...(remove as unknown as RemoveAction), partitionValues: record(remove.partitionValues) } };
  const meta = row.metaData as Row | null;
  if (meta) {
    const format = (meta.format as Row | null) ?? { provider: 'parquet', options: [] };
    return {
      metaData: {
        ...(meta as unknown as MetadataAction),
        format: { provider: String(format.provider ?? 'parquet'), options: record(format.options) as Record<string, string> },
        partitionColumns: (meta.partitionColumns as string[] | null) ?? [],
        configuration: record(meta.configuration) as Record<string, string>,
      },
    };
  }
  if (row.protocol) return { protocol: row.protocol as unknown as ProtocolAction };
  if (row.txn) return { txn: row.txn as unknown as TxnAction };
  return undefined;
}

function readCheckpoint(files: readonly string[]): Action[] {
  const out: Action[] = [];
  for (const file of files) {
    for (const row of readParquetRows(file, CHECKPOINT_SCHEMA)) {
      const a = checkpointAction(row);
      if (a !== undefined) out.push(a);
    }
  }
  return out;
}

export interface Snapshot {
  table: string;
  version: number;
  protocol: ProtocolAction;
  metadata: MetadataAction;
  /** The table's schema (metaData.schemaString), partition columns included. */
  schema: Schema;
  /** The live data files, by their path as the log writes it. */
  files: Map<string, AddAction>;
  /** Each application's latest transaction version (the streaming sink's batch ids). */
  txns: Map<string, number>;
  /** Tombstones: files removed and not added back, by path (a checkpoint carries them). */
  removed: Map<string, RemoveAction>;
}

/** Reader versions and features Sluice reads: version 1 only (no column mapping, deletion vectors or other reader features). */
export function checkReadable(protocol: ProtocolAction, table: string): void {
  if (protocol.minReaderVersion > 1) {
    const features = protocol.readerFeatures?.length ? ` (reader features ${protocol.readerFeatures.join(', ')})` : '';
    throw new SluiceError(
      'DELTA_UNSUPPORTED_FEATURE',
      `Delta table ${table} needs reader version ${protocol.minReaderVersion}${features}; Sluice reads reader version 1`,
      { file: table },
    );
  }
}

/** Replays `actions` into the state. */
function apply(
  state: Omit<Snapshot, 'table' | 'version' | 'schema'> & { protocol?: ProtocolAction; metadata?: MetadataAction },
  actions: readonly Action[],
): void {
  for (const a of actions) {
    if ('add' in a) {
      const add = a.add as AddAction;
      state.files.set(add.path, add);
      state.removed.delete(add.path);
    } else if ('remove' in a) {
      const remove = a.remove as RemoveAction;
      state.files.delete(remove.path);
      state.removed.set(remove.path, remove);
    } else if ('metaData' in a) state.metadata = a.metaData as MetadataAction;
    else if ('protocol' in a) state.protocol = a.protocol as ProtocolAction;
    else if ('txn' in a) {
      const txn = a.txn as TxnAction;
      state.txns.set(txn.appId, Number(txn.version));
    }
  }
}

const latestOf = ({ commits, checkpoints }: ReturnType<typeof listLog>): number => Math.max(commits.at(-1) ?? -1, ...checkpoints.keys());

/** The table's latest version, from its log's file names alone (-1: no commit yet). */
export const latestVersion = (table: string): number => latestOf(listLog(table));

/** The table's snapshot at `version` (default: its latest). */
export function snapshotAt(table: string, version?: number): Snapshot {
  const log = listLog(table);
  const { commits, checkpoints } = log;
  const latest = latestOf(log);
  if (latest < 0) throw new SluiceError('DELTA_TABLE_NOT_FOUND', `${table} is not a Delta table: ${LOG_DIR} holds no commit`, { file: table });
  const at = version ?? latest;
  if (!Number.isInteger(at) || at < 0 || at > latest) {
    throw new SluiceError('DELTA_VERSION_NOT_FOUND', `Delta table ${table} has versions up to ${latest}; version ${String(version)} does not exist`, {
      file: table,
      option: 'versionAsOf',
    });
  }
  const base = Math.max(-1, ...[...checkpoints.keys()].filter((v) => v <= at));
  const state = { files: new Map<string, AddAction>(), txns: new Map<string, number>(), removed: new Map<string, RemoveAction>() } as Parameters<
    typeof apply
  >[0];
  if (base >= 0) apply(state, readCheckpoint(checkpoints.get(base)!));
  const have = new Set(commits);
  for (let v = base + 1; v <= at; v++) {
    if (!have.has(v)) {
      const earliest = Math.min(...commits);
      throw new SluiceError(
        v < earliest ? 'DELTA_VERSION_NOT_FOUND' : 'DELTA_LOG_CORRUPT',
        v < earliest
          ? `Delta table ${table} cannot be read at version ${at}: its log starts at version ${earliest} and has no checkpoint before it`
          : `Delta table ${table} lacks commit ${v} (${commitPath(table, v)}), between its checkpoint and version ${at}`,
        { file: commitPath(table, v) },
      );
    }
    apply(state, readCommit(table, v));
  }
  if (state.protocol === undefined || state.metadata === undefined) {
    throw new SluiceError(
      'DELTA_LOG_CORRUPT',
      `Delta table ${table} has no ${state.protocol === undefined ? 'protocol' : 'metaData'} action up to version ${at}`,
      { file: join(table, LOG_DIR) },
    );
  }
  checkReadable(state.protocol, table);
  return { ...state, table, version: at, protocol: state.protocol, metadata: state.metadata, schema: deltaSchema(state.metadata.schemaString, table) };
}

/** The file an add or remove path names: relative to the table (URI-encoded, as the protocol writes it) or an absolute URI. */
export function dataFilePath(table: string, path: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
    if (!path.startsWith('file:'))
      throw new SluiceError('DELTA_UNSUPPORTED_FEATURE', `Delta table ${table}: data file ${path} is not on the local file system`, { file: table });
    return fileURLToPath(new URL(path.replace(/^file:\/(?!\/)/, 'file:///')));
  }
  return join(table, decodeURIComponent(path));
}

/** The commit versions after `after` up to the latest, and the latest (-1: none). */
export function commitsAfter(table: string, after: number): number[] {
  return listLog(table).commits.filter((v) => v > after);
}

/** The time of commit `v`: its commitInfo timestamp, else its file's modification time (as Delta reads it). */
export function commitTimestamp(table: string, v: number): number {
  const info = readCommit(table, v).find((a) => 'commitInfo' in a) as { commitInfo: { timestamp?: unknown } } | undefined;
  const t = Number(info?.commitInfo.timestamp);
  return Number.isFinite(t) ? t : statSync(commitPath(table, v)).mtimeMs;
}
