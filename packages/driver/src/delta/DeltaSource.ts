/**
 * `readStream.format('delta')`: the files each commit of a Delta table adds, as Delta's streaming
 * source reads them. Without `startingVersion` the first batches read the snapshot of the table's
 * version when the query first starts (its files ordered by modification time, then path), then
 * every later commit; with it, the commits from that version on. An offset is Delta's
 * (`reservoirVersion`, `index`, `isStartingVersion`): the position after the index-th file of that
 * version (-1: none of it yet), so a replayed batch reads the same files from the immutable log.
 *
 * `maxFilesPerTrigger` (default 1000) and `maxBytesPerTrigger` (soft, at least one file) cap a
 * batch. A commit that removes data (a `remove` with dataChange) fails the query with
 * DELTA_SOURCE_IGNORE_DELETE unless `ignoreDeletes`, which skips the removes; a commit that changes
 * the schema fails it with DELTA_SCHEMA_CHANGED (a restart reads the new schema).
 */
import { kDefaultReadOptions, type InputSplit, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { filePieces, packPieces, piecesSplit, type FilePiece } from '../sources/filePieces.js';
import type { ReadLimit, StreamSource } from '../sources/Source.js';
import { commitsAfter, dataFilePath, readCommit, snapshotAt, type AddAction, type MetadataAction, type RemoveAction } from './log.js';

export interface DeltaSourceConfig {
  path: string;
  startingVersion?: number;
  maxFilesPerTrigger: number;
  maxBytesPerTrigger?: number;
  ignoreDeletes: boolean;
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

  constructor(
    private readonly config: DeltaSourceConfig,
    readonly schema: Schema,
    private readonly tableId: string,
    private readonly schemaString: string,
  ) {
    this.description = `DeltaSource[${config.path}]`;
  }

  prepareForAvailableNow(): void {
    this.pinRequested = true;
  }

  /** The snapshot's files at `version`, in Delta's order: modification time, then path. */
  private snapshotFiles(version: number): AddAction[] {
    let files = this.snapshots.get(version);
    if (files === undefined) {
      files = [...snapshotAt(this.config.path, version).files.values()].sort((a, b) => a.modificationTime - b.modificationTime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      this.snapshots.set(version, files);
    }
    return files;
  }

  /** The files commit `version` adds, checked for removes and schema changes. */
  private commitFiles(version: number): AddAction[] {
    let files = this.commits.get(version);
    if (files !== undefined) return files;
    files = [];
    for (const a of readCommit(this.config.path, version)) {
      if ('add' in a && (a.add as AddAction).dataChange !== false) files.push(a.add as AddAction);
      else if ('remove' in a && (a.remove as RemoveAction).dataChange !== false && !this.config.ignoreDeletes) {
        throw new SluiceError(
          'DELTA_SOURCE_IGNORE_DELETE',
          `Detected deleted data (for example ${(a.remove as RemoveAction).path}) from streaming source at version ${version}. This is currently not supported. If you'd like to ignore deletes, set the option 'ignoreDeletes' to 'true'.`,
          { file: this.config.path, option: 'ignoreDeletes' },
        );
      } else if ('metaData' in a && (a.metaData as MetadataAction).schemaString !== this.schemaString) {
        throw new SluiceError('DELTA_SCHEMA_CHANGED', `Delta table ${this.config.path} changed its schema at version ${version}; restart the query to read the new schema`, { file: this.config.path });
      }
    }
    this.commits.set(version, files);
    return files;
  }

  private initial(): DeltaOffset {
    const { startingVersion } = this.config;
    const version = startingVersion ?? snapshotAt(this.config.path).version;
    return { sourceVersion: 1, reservoirId: this.tableId, reservoirVersion: version, index: -1, isStartingVersion: startingVersion === undefined };
  }

  private offsetOf(start: SourceOffset | null): DeltaOffset {
    if (start === null) return this.initial();
    const o = start as DeltaOffset;
    if (o.reservoirId !== this.tableId) {
      throw new SluiceError('SOURCE_PATH_CHANGED', `the Delta table at ${this.config.path} is another table (id ${this.tableId}) than the one this checkpoint read (id ${o.reservoirId})`, { file: this.config.path });
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
    for (const v of commitsAfter(this.config.path, version)) {
      if (this.pinned !== undefined && v > this.pinned) return;
      version = v;
      const files = this.commitFiles(v);
      for (let i = 0; i < files.length; i++) yield { version: v, index: i, isStartingVersion: false, add: files[i]! };
    }
  }

  async latestOffset(start: SourceOffset | null, limit: ReadLimit): Promise<SourceOffset | null> {
    const from = this.offsetOf(start);
    if (this.pinRequested && this.pinned === undefined) this.pinned = snapshotAt(this.config.path).version;
    const maxFiles = limit.ignoreLimits ? Number.POSITIVE_INFINITY : this.config.maxFilesPerTrigger;
    const maxBytes = limit.ignoreLimits ? Number.POSITIVE_INFINITY : (this.config.maxBytesPerTrigger ?? Number.POSITIVE_INFINITY);
    let last: Entry | undefined;
    let files = 0;
    let bytes = 0;
    for (const e of this.entriesAfter(from)) {
      if (files >= maxFiles || (files > 0 && bytes >= maxBytes)) break;
      last = e;
      files++;
      bytes += Number(e.add.size);
    }
    if (last === undefined) return start;
    return { sourceVersion: 1, reservoirId: this.tableId, reservoirVersion: last.version, index: last.index, isStartingVersion: last.isStartingVersion };
  }

  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    const to = end as DeltaOffset;
    const pieces: FilePiece[] = [];
    for (const e of this.entriesAfter(this.offsetOf(start))) {
      pieces.push({ path: dataFilePath(this.config.path, e.add.path), size: Number(e.add.size), partitions: e.add.partitionValues ?? {} });
      if (e.version === to.reservoirVersion && e.index === to.index && e.isStartingVersion === to.isStartingVersion) break;
    }
    if (pieces.length === 0) return [];
    const tasks = Math.min(pieces.length, slots * 2);
    const cut = filePieces('parquet', pieces, tasks);
    return packPieces(cut, Math.min(cut.length, Math.max(tasks, slots * 2))).map((run) => ({
      type: 'files',
      format: 'parquet',
      ...piecesSplit(run),
      schema: this.schema,
      options: kDefaultReadOptions,
    }));
  }
}

/** The schema, table id and schemaString a Delta source reads with: the table's at its latest version. */
export function deltaSourceTable(path: string): { schema: Schema; tableId: string; schemaString: string } {
  const snapshot = snapshotAt(path);
  return { schema: snapshot.schema, tableId: snapshot.metadata.id, schemaString: snapshot.metadata.schemaString };
}
