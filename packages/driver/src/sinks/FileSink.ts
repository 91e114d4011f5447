/**
 * json/csv file sink. Tasks write uniquely named part files; the driver then writes the batch's
 * manifest `_sluice_metadata/<batchId>` listing them. The manifest is the commit: readers use
 * only files a manifest lists, a batch whose manifest exists is skipped when replayed, and part
 * files of a crashed attempt are never read.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { TaskOutput, WriteOptions } from '@sluice/executor';
import { MetadataLog } from '../checkpoint/MetadataLog.js';
import { prepareWritableDir } from '../checkpoint/directories.js';
import { fsyncDir } from '../checkpoint/versionedFile.js';
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
  /** Distinguishes part files of different attempts at the same batch. */
  private readonly runTag = randomUUID().slice(0, 8);

  constructor(
    private readonly format: 'json' | 'csv',
    private readonly dir: string,
    private readonly options: WriteOptions,
  ) {
    this.description = `FileSink[${dir}]`;
    this.manifests = manifestLog(dir);
  }

  taskOutput(batchId: number, partition: number, committed: boolean): TaskOutput {
    const fileName = `part-${String(batchId).padStart(5, '0')}-${String(partition).padStart(5, '0')}-${this.runTag}.${this.format}`;
    return { type: 'file', format: this.format, dir: this.dir, fileName, options: this.options, skip: committed };
  }

  prepare(): void {
    prepareWritableDir(this.dir, 'sink');
  }

  isCommitted(batchId: number): boolean {
    return this.manifests.has(batchId);
  }

  async addBatch(out: BatchOutput): Promise<void> {
    if (this.manifests.has(out.batchId)) return; // a replay: the batch is in the sink already
    const files = out.results.flatMap((r) => (r.file ? [r.file] : []));
    // Tasks fsynced their part files; their names live in the directory, which must be durable
    // before the manifest that names them is.
    if (files.length > 0) fsyncDir(this.dir);
    this.manifests.add(out.batchId, { files });
  }
}

/** Files of a sink directory in batch order, as its manifests list them. */
export function committedFiles(dir: string): string[] | undefined {
  const log = manifestLog(dir);
  const ids = log.ids();
  if (ids.length === 0) return undefined;
  return ids.flatMap((id) => (log.get(id)?.files ?? []).map((f) => join(dir, f.name)));
}
