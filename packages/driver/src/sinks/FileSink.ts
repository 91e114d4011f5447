/**
 * json/csv/parquet file sink. Tasks write uniquely named part files; the driver then writes the batch's
 * manifest `_sluice_metadata/<batchId>` listing them. The manifest is the commit: readers use
 * only files a manifest lists, a batch whose manifest exists is skipped when replayed, and part
 * files of a crashed attempt are never read.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TaskOutput, WriteOptions } from '@sluice/executor';
import { fsyncDir, SluiceError } from '@sluice/state';
import { prepareWritableDir } from '../checkpoint/directories.js';
import { MetadataLog } from '../checkpoint/MetadataLog.js';
import { readVersioned, writeVersioned } from '../checkpoint/versionedFile.js';
import type { BatchOutput, StreamSink } from './Sink.js';

export const MANIFEST_DIR = '_sluice_metadata';

export interface ManifestEntry {
  files: Array<{ name: string; size: number; rows: number }>;
}

function isManifest(v: unknown): v is ManifestEntry {
  return typeof v === 'object' && v !== null && Array.isArray((v as ManifestEntry).files);
}

export function manifestLog(dir: string): MetadataLog<ManifestEntry> {
  return new MetadataLog(join(dir, MANIFEST_DIR), isManifest);
}

export class FileSink implements StreamSink {
  readonly description: string;
  private readonly manifests: MetadataLog<ManifestEntry>;
  /** The query writing the sink (set by prepare). */
  private queryId: string | undefined;
  /** The owner file names this query (read at prepare, or written at the first commit). */
  private owned = false;
  /** Distinguishes part files of different attempts at the same batch. */
  private readonly runTag = randomUUID().slice(0, 8);

  constructor(
    private readonly format: 'json' | 'csv' | 'parquet',
    private readonly dir: string,
    private readonly options: WriteOptions,
    /** partitionBy's columns: each row goes to the part file of its `c=v/...` directory. */
    private readonly partitionBy: string[] = [],
  ) {
    this.description = `FileSink[${dir}]`;
    this.manifests = manifestLog(dir);
  }

  taskOutput(batchId: number, partition: number, committed: boolean): TaskOutput {
    const fileName = `part-${String(batchId).padStart(5, '0')}-${String(partition).padStart(5, '0')}-${this.runTag}.${this.extension()}`;
    return {
      type: 'file',
      format: this.format,
      dir: this.dir,
      fileName,
      options: this.options,
      skip: committed,
      ...(this.partitionBy.length > 0 && { partitionBy: this.partitionBy }),
    };
  }

  /** A part file's extension: the format's, after the codec for compressed Parquet (as Spark names them: `.snappy.parquet`). */
  private extension(): string {
    const codec = this.options.compression;
    return this.format === 'parquet' && codec !== undefined && codec !== 'none' && codec !== 'uncompressed' ? `${codec}.parquet` : this.format;
  }

  /**
   * The directory must be writable and belong to this query: a second query writing into it would
   * have its batch 0 taken for a replay of the first one's. Its manifests must be whole: one per
   * batch from 0, up to the last batch the checkpoint committed.
   */
  prepare(query: { queryId: string; lastCommittedBatchId: number; isControlBatch(batchId: number): boolean }): void {
    prepareWritableDir(this.dir, 'sink');
    this.queryId = query.queryId;
    this.owned = this.checkOwner();
    let last = wholeManifestIds(this.dir).at(-1) ?? -1;
    // A control batch run offline (the sluice CLI) had no sink to log it: it is logged now.
    while (last < query.lastCommittedBatchId && query.isControlBatch(last + 1)) {
      last += 1;
      this.commitControlBatch(last);
    }
    if (last < query.lastCommittedBatchId) {
      throw new SluiceError(
        'SINK_CORRUPT',
        `sink ${this.dir} lacks the manifest of batch ${last + 1}, which the checkpoint committed (up to batch ${query.lastCommittedBatchId}): its rows are lost`,
        { file: join(this.dir, MANIFEST_DIR, String(last + 1)) },
      );
    }
  }

  /** A control batch writes no rows; its empty manifest keeps one manifest per batch id. */
  commitControlBatch(batchId: number): void {
    this.commit(batchId, []);
  }

  /** A directory another query has claimed is refused; claiming it waits for the first commit. */
  private checkOwner(): boolean {
    const ownerPath = join(this.dir, MANIFEST_DIR, OWNER_FILE);
    if (!existsSync(ownerPath)) return false;
    const owner = readVersioned<{ queryId: string }>(ownerPath, (v): v is { queryId: string } => typeof (v as { queryId?: unknown })?.queryId === 'string');
    if (owner.queryId !== this.queryId) {
      throw new SluiceError(
        'SINK_OWNED_BY_ANOTHER_QUERY',
        `sink directory ${this.dir} is written by query ${owner.queryId}, not by this query (${this.queryId}); give each query a directory of its own`,
        { file: ownerPath },
      );
    }
    return true;
  }

  isCommitted(batchId: number): boolean {
    return this.manifests.has(batchId);
  }

  async addBatch(out: BatchOutput): Promise<void> {
    this.commit(
      out.batchId,
      out.results.flatMap((r) => r.files ?? []),
    );
  }

  private commit(batchId: number, files: ManifestEntry['files']): void {
    if (this.manifests.has(batchId)) return; // a replay: the batch is in the sink already
    // Claimed at the first commit, once the checkpoint (and so the query's id) is on disk; once
    // this query owns the directory, no other can claim it.
    if (this.queryId !== undefined && !this.owned) {
      if (!this.checkOwner()) writeVersioned(join(this.dir, MANIFEST_DIR, OWNER_FILE), { queryId: this.queryId });
      this.owned = true;
    }
    // Tasks fsynced their part files; their names live in the directory, which must be durable
    // before the manifest that names them is.
    // Partition directories (partitionBy) are durable in their parents, up to the sink's.
    const dirs = new Set<string>();
    for (const f of files) for (let d = dirname(f.name); d !== '.'; d = dirname(d)) dirs.add(d);
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) fsyncDir(join(this.dir, d));
    if (files.length > 0) fsyncDir(this.dir);
    this.manifests.add(batchId, { files });
  }
}

/** Who writes a sink directory: `_sluice_metadata/owner`, the id of its query. */
const OWNER_FILE = 'owner';

/** The manifest ids of a sink, checked to run from batch 0 without a gap (SINK_CORRUPT). */
function wholeManifestIds(dir: string): number[] {
  const ids = manifestLog(dir).ids();
  ids.forEach((id, i) => {
    if (id !== i) {
      throw new SluiceError('SINK_CORRUPT', `sink ${dir} lacks the manifest of batch ${i} (it has ${id}): that batch's rows are lost`, {
        file: join(dir, MANIFEST_DIR, String(i)),
      });
    }
  });
  return ids;
}

/** Files of a sink directory in batch order, as its manifests list them. */
export function committedFiles(dir: string): string[] | undefined {
  const log = manifestLog(dir);
  const ids = wholeManifestIds(dir);
  if (ids.length === 0) return undefined;
  return ids.flatMap((id) => (log.get(id)?.files ?? []).map((f) => join(dir, f.name)));
}
