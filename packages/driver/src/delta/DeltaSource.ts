/**
 * `readStream.format('delta')`: the files each commit of a Delta table adds, as Delta's streaming
 * source reads them. Without `startingVersion` the first batches read the snapshot of the table's
 * version when the query first starts (its files ordered by modification time, then path), then
 * every later commit; with it, the commits from that version on. An offset is Delta's
 * (`reservoirVersion`, `index`, `isStartingVersion`): the position after the index-th file of that
 * version (-1: none of it yet), so a replayed batch reads the same files from the immutable log.
 *
 * `maxFilesPerTrigger` (default 1000) and `maxBytesPerTrigger` (soft, at least one file) cap a
 * batch. A commit that removes data fails the query unless `ignoreDeletes`, `ignoreChanges` or
 * `skipChangeCommits` says how to take it (commitFiles); a commit that changes the schema fails it
 * with DELTA_SCHEMA_CHANGED (a restart reads the new schema).
 */
import { kDefaultReadOptions, type InputSplit, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { batchTasks, piecesSplit, taskRuns, type FilePiece } from '../sources/filePieces.js';
import type { ReadLimit, StreamSource } from '../sources/Source.js';
import { commitsAfter, dataFilePath, latestVersion, readCommit, snapshotAt, type AddAction, type MetadataAction, type RemoveAction } from './log.js';

/** A Delta table as a source reads it: where it is, its id and the schemaString read with. */
export interface DeltaTableRef {
  path: string;
  tableId: string;
  schemaString: string;
}

/** readStream's options of a Delta source. */
export interface DeltaStreamOptions {
  startingVersion?: number;
  maxFilesPerTrigger: number;
  maxBytesPerTrigger?: number;
  ignoreDeletes: boolean;
  ignoreChanges: boolean;
  skipChangeCommits: boolean;
}

/** Delta's DeltaSourceOffset. */
interface DeltaOffset {
  sourceVersion: 1;
  reservoirId: string;
  reservoirVersion: number;
  index: number;
  isStartingVersion: boolean;
}

interface Entry {
  version: number;
  index: number;
  isStartingVersion: boolean;
  add: AddAction;
}

export class DeltaSource implements StreamSource {
  readonly description: string;
  private readonly snapshots = new Map<number, AddAction[]>();
  private readonly commits = new Map<number, AddAction[]>();
  /** Trigger.AvailableNow: the last version to read. */
  private pinned: number | undefined;
  private pinRequested = false;

  private readonly path: string;
  private readonly tableId: string;
  private readonly schemaString: string;

  constructor(
    table: DeltaTableRef,
    private readonly config: DeltaStreamOptions,
    readonly schema: Schema,
    /** The file source's advisory task size (0: one task per file), see batchTasks. */
    private readonly advisoryTaskBytes: number,
  ) {
    ({ path: this.path, tableId: this.tableId, schemaString: this.schemaString } = table);
    this.description = `DeltaSource[${table.path}]`;
  }

  prepareForAvailableNow(): void {
    this.pinRequested = true;
  }

  /** The snapshot's files at `version`, in Delta's order: modification time, then path. */
  private snapshotFiles(version: number): AddAction[] {
    let files = this.snapshots.get(version);
    if (files === undefined) {
      files = [...snapshotAt(this.path, version).files.values()].sort(
        (a, b) => a.modificationTime - b.modificationTime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
      );
      this.snapshots.set(version, files);
    }
    return files;
  }

  /**
   * The files commit `version` adds, as Delta's source admits them: a commit that removes data and
   * adds none (a delete) fails unless `ignoreDeletes` or `ignoreChanges`; one that removes and adds
   * (an update, merge or rewriting delete) fails unless `ignoreChanges` (its adds are read again) or
   * `skipChangeCommits` (any commit that removes data is skipped whole).
   */
  private commitFiles(version: number): AddAction[] {
    const known = this.commits.get(version);
    if (known !== undefined) return known;
    const { path } = this;
    const { ignoreDeletes, ignoreChanges, skipChangeCommits } = this.config;
    const adds: AddAction[] = [];
    let removed: string | undefined;
    for (const a of readCommit(path, version)) {
      if ('add' in a && (a.add as AddAction).dataChange !== false) adds.push(a.add as AddAction);
      else if ('remove' in a && (a.remove as RemoveAction).dataChange !== false) removed ??= (a.remove as RemoveAction).path;
      else if ('metaData' in a && (a.metaData as MetadataAction).schemaString !== this.schemaString) {
        throw new SluiceError(
          'DELTA_SCHEMA_CHANGED',
          `Delta table ${path} changed its schema at version ${version}; restart the query to read the new schema`,
          { file: path },
        );
      }
    }
    let files = adds;
    if (removed !== undefined && skipChangeCommits) files = [];
    else if (removed !== undefined && adds.length > 0 && !ignoreChanges) {
      throw new SluiceError(
        'DELTA_SOURCE_TABLE_IGNORE_CHANGES',
        `Detected a data update (for example ${removed}) in the source table at version ${version}. This is currently not supported. If you are okay to skip changes, set the option 'skipChangeCommits' to 'true'. The source table can be found at path ${path}.`,
        { file: path, option: 'skipChangeCommits' },
      );
    } else if (removed !== undefined && adds.length === 0 && !ignoreDeletes && !ignoreChanges) {
      throw new SluiceError(
        'DELTA_SOURCE_IGNORE_DELETE',
        `Detected deleted data (for example ${removed}) from streaming source at version ${version}. This is currently not supported. If you'd like to ignore deletes, set the option 'ignoreDeletes' to 'true'. The source table can be found at path ${path}.`,
        { file: path, option: 'ignoreDeletes' },
      );
    }
    this.commits.set(version, files);
    return files;
  }

  private initial(): DeltaOffset {
    const { startingVersion } = this.config;
    const version = startingVersion ?? latestVersion(this.path);
    return { sourceVersion: 1, reservoirId: this.tableId, reservoirVersion: version, index: -1, isStartingVersion: startingVersion === undefined };
  }

  private offsetOf(start: SourceOffset | null): DeltaOffset {
    if (start === null) return this.initial();
    const o = start as DeltaOffset;
    if (o.reservoirId !== this.tableId) {
      throw new SluiceError(
        'SOURCE_PATH_CHANGED',
        `the Delta table at ${this.path} is another table (id ${this.tableId}) than the one this checkpoint read (id ${o.reservoirId})`,
        { file: this.path },
      );
    }
    return o;
  }

  /** The files after `from`, in order, up to the latest version (or the pinned one). */
  private *entriesAfter(from: DeltaOffset): Generator<Entry> {
    let version = from.reservoirVersion;
    if (from.isStartingVersion) {
      const files = this.snapshotFiles(version);
      for (let i = from.index + 1; i < files.length; i++) yield { version, index: i, isStartingVersion: true, add: files[i]! };
    } else {
      // The rest of the version the offset is in.
      const files = this.commitFiles(version);
      for (let i = from.index + 1; i < files.length; i++) yield { version, index: i, isStartingVersion: false, add: files[i]! };
    }
    for (const v of commitsAfter(this.path, version)) {
      if (this.pinned !== undefined && v > this.pinned) return;
      version = v;
      const files = this.commitFiles(v);
      for (let i = 0; i < files.length; i++) yield { version: v, index: i, isStartingVersion: false, add: files[i]! };
    }
  }

  async latestOffset(start: SourceOffset | null, limit: ReadLimit): Promise<SourceOffset | null> {
    const from = this.offsetOf(start);
    for (const v of this.commits.keys()) if (v < from.reservoirVersion) this.commits.delete(v); // read past for good
    if (this.pinRequested && this.pinned === undefined) this.pinned = latestVersion(this.path);
    const maxFiles = limit.ignoreLimits ? Number.POSITIVE_INFINITY : this.config.maxFilesPerTrigger;
    const maxBytes = limit.ignoreLimits ? Number.POSITIVE_INFINITY : (this.config.maxBytesPerTrigger ?? Number.POSITIVE_INFINITY);
    let last: Entry | undefined;
    let files = 0;
    let bytes = 0;
    // Stops as soon as the batch is full, so that a commit after it (one that fails the query) is not read yet.
    for (const e of this.entriesAfter(from)) {
      last = e;
      files++;
      bytes += Number(e.add.size);
      if (files >= maxFiles || bytes >= maxBytes) break;
    }
    if (last === undefined) return start;
    return { sourceVersion: 1, reservoirId: this.tableId, reservoirVersion: last.version, index: last.index, isStartingVersion: last.isStartingVersion };
  }

  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    const to = end as DeltaOffset;
    const pieces: FilePiece[] = [];
    for (const e of this.entriesAfter(this.offsetOf(start))) {
      pieces.push(addPiece(this.path, e.add));
      if (e.version === to.reservoirVersion && e.index === to.index && e.isStartingVersion === to.isStartingVersion) break;
    }
    if (pieces.length === 0) return [];
    return taskRuns('parquet', pieces, batchTasks(pieces, slots, this.advisoryTaskBytes)).map((run) => ({
      type: 'files',
      format: 'parquet',
      ...piecesSplit(run),
      schema: this.schema,
      options: kDefaultReadOptions,
    }));
  }
}

/** A Delta read takes the table's own schema, as in Delta: a declared one is INVALID_SCHEMA. */
export function rejectDeclaredSchema(userSchema: Schema | undefined): void {
  if (userSchema !== undefined) throw new SluiceError('INVALID_SCHEMA', 'a Delta table has its own schema: read it without .schema(...)', { option: 'schema' });
}

/** The table a Delta source reads, at `version` (default: its latest), with its schema. */
export function deltaSourceTable(path: string, version?: number): DeltaTableRef & { schema: Schema; version: number; files: FilePiece[] } {
  const snapshot = snapshotAt(path, version);
  const files = [...snapshot.files.values()].map((a) => addPiece(path, a));
  return { path, tableId: snapshot.metadata.id, schemaString: snapshot.metadata.schemaString, schema: snapshot.schema, version: snapshot.version, files };
}

/** The data file an `add` names, as a piece of a task's input. */
const addPiece = (table: string, a: AddAction): FilePiece => ({ path: dataFilePath(table, a.path), size: Number(a.size), partitions: a.partitionValues ?? {} });
