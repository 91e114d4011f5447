/**
 * Streaming source over a directory of json/csv/text files. As in Spark's FileStreamSource the
 * source keeps its own log (`sources/<i>/<logOffset>`, the files each planning step admitted,
 * compacted every `compactInterval` entries); an offset is a position in that log, so a replayed
 * batch reads exactly the same files.
 */
import { join } from 'node:path';
import type { InputSplit, ReadOptions, Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { CompactibleFileLog } from '../checkpoint/CompactibleFileLog.js';
import { checkInputDir } from '../checkpoint/directories.js';
import type { SourceOffset } from '../checkpoint/OffsetLog.js';
import { admitFiles, type AdmissionOptions, type FileEntry } from './FileAdmission.js';
import { cleanSourceFiles, listFiles, type CleanSourceMode } from './fileSystem.js';
import type { ReadLimit, StreamSource } from './Source.js';
import type { FileFormat } from './resolveSource.js';
import { batchTasks, piecesSplit, taskRuns, type FilePiece } from './filePieces.js';

export interface FileSourceConfig {
  format: FileFormat;
  path: string;
  schema: Schema;
  read: ReadOptions;
  admission: AdmissionOptions;
  cleanSource: CleanSourceMode;
  archiveDir?: string;
}

interface FileOffset {
  logOffset: number;
}

function logOffsetOf(o: SourceOffset | null): number {
  return o === null || o === undefined ? -1 : (o as FileOffset).logOffset;
}

export class FileStreamSource implements StreamSource {
  readonly description: string;
  readonly schema: Schema;
  private readonly log: CompactibleFileLog<FileEntry>;
  private readonly seen = new Set<string>();
  private latestLogOffset: number;
  private pinned: Set<string> | undefined;
  private cleanedThrough = -1;

  constructor(
    private readonly config: FileSourceConfig,
    logDir: string,
    private readonly advisoryTaskBytes: number,
    compactInterval: number,
  ) {
    checkInputDir(config.path);
    this.description = `FileStreamSource[${config.path}]`;
    this.schema = config.schema;
    this.log = new CompactibleFileLog(logDir, compactInterval);
    for (const f of this.log.allFiles()) this.seen.add(f.path);
    this.latestLogOffset = this.log.latestId();
  }

  /** Files of the log read when the source opened (bounded by the compaction interval). */
  get logFilesRead(): number {
    return this.log.filesRead;
  }

  verifyOffset(end: SourceOffset | null): void {
    const id = logOffsetOf(end);
    if (id > this.latestLogOffset) {
      const missing = join(this.log.dir, String(this.latestLogOffset + 1));
      throw new SluiceError(
        'CHECKPOINT_CORRUPT',
        `file source log ${this.log.dir} lacks entry ${this.latestLogOffset + 1}, which the offset log planned (up to ${id}): its files would be read again`,
        { file: missing },
      );
    }
  }

  prepareForAvailableNow(): void {
    this.pinned = new Set(listFiles(this.config.path).map((f) => f.path));
  }

  async latestOffset(start: SourceOffset | null, limit: ReadLimit): Promise<SourceOffset | null> {
    // An entry planned before a crash, but never written to the offset log, is the next batch as
    // it stands: admitting more files on top of it would break maxFilesPerTrigger.
    const next = logOffsetOf(start) + 1;
    if (next <= this.latestLogOffset) return { logOffset: next };
    let listed = listFiles(this.config.path);
    if (this.pinned) listed = listed.filter((f) => this.pinned?.has(f.path));
    const firstBatch = this.latestLogOffset < 0;
    const admitted = admitFiles(listed, this.seen, this.config.admission, firstBatch, limit.ignoreLimits);
    if (admitted.length > 0) {
      this.log.put(next, admitted);
      for (const f of admitted) this.seen.add(f.path);
      this.latestLogOffset = next;
    }
    return this.latestLogOffset < 0 ? null : { logOffset: this.latestLogOffset };
  }

  private filesBetween(start: SourceOffset | null, end: SourceOffset): FileEntry[] {
    const files: FileEntry[] = [];
    for (let id = logOffsetOf(start) + 1; id <= logOffsetOf(end); id++) {
      const entry = this.log.get(id);
      if (entry) files.push(...entry);
    }
    return files;
  }

  /** Contiguous runs of files of about equal bytes, as many as batchTasks says (large Parquet files count as their row-group pieces). */
  planSplits(start: SourceOffset | null, end: SourceOffset, slots: number): InputSplit[] {
    const listed = this.filesBetween(start, end);
    if (listed.length === 0) return [];
    return taskRuns(this.config.format, listed, batchTasks(listed, slots, this.advisoryTaskBytes)).map((run) => this.split(run));
  }

  private split(pieces: FilePiece[]): InputSplit {
    const { format, schema, read } = this.config;
    return { type: 'files', format, ...piecesSplit(pieces), schema, options: read };
  }

  async commit(end: SourceOffset): Promise<void> {
    if (this.config.cleanSource === 'off') return;
    const upTo = logOffsetOf(end);
    const files: string[] = [];
    for (let id = this.cleanedThrough + 1; id <= upTo; id++) {
      for (const f of this.log.get(id) ?? []) files.push(f.path);
    }
    await cleanSourceFiles(files, this.config.cleanSource, this.config.path, this.config.archiveDir);
    this.cleanedThrough = upTo;
  }
}
