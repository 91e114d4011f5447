/**
 * A log of file lists by entry id (the file source's seen-file log, `sources/<i>/`) that stays
 * small, as Spark's CompactibleFileStreamLog: every `compactInterval`-th entry is written as
 * `<id>.compact`, holding every entry up to it, and the files it supersedes are then deleted. A
 * start reads the latest compact file and the few plain entries after it, whatever the number of
 * batches run.
 *
 *   sources/0/0 1 .. 8           plain entries: { files }
 *   sources/0/9.compact          entries 0..9: { entries: [{ id, files }] }
 *   sources/0/10 11 ..           plain entries after it
 *
 * Entry `id` is a compaction point when (id + 1) % compactInterval === 0, as in Spark. A changed
 * interval is harmless: each compact file holds everything up to it.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '@sluice/state';
import { readVersioned, writeVersioned } from './versionedFile.js';

export interface CompactibleEntry<F> {
  id: number;
  files: F[];
}

function isPlain<F>(v: unknown): v is { files: F[] } {
  return typeof v === 'object' && v !== null && Array.isArray((v as { files?: unknown }).files);
}

function isCompact<F>(v: unknown): v is { entries: Array<CompactibleEntry<F>> } {
  const entries = (v as { entries?: unknown } | null)?.entries;
  return Array.isArray(entries) && entries.every((e) => Number.isInteger(e?.id) && Array.isArray(e?.files));
}

const COMPACT = /^(\d+)\.compact$/;

export class CompactibleFileLog<F> {
  /** Every entry, by id, as read at start and added since. */
  private readonly entries = new Map<number, F[]>();
  private latest = -1;
  private latestCompact = -1;
  /** Files read when the log was opened (a compact file counts one). */
  readonly filesRead: number;

  constructor(
    readonly dir: string,
    private readonly compactInterval: number,
  ) {
    const names = existsSync(dir) ? readdirSync(dir) : [];
    const compacts = names.flatMap((n) => (COMPACT.test(n) ? [Number(COMPACT.exec(n)?.[1])] : []));
    this.latestCompact = compacts.length > 0 ? Math.max(...compacts) : -1;
    let read = 0;
    if (this.latestCompact >= 0) {
      const doc = readVersioned(this.compactPath(this.latestCompact), isCompact<F>);
      read += 1;
      for (const e of doc.entries) this.entries.set(e.id, e.files);
    }
    const plain = names
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .filter((id) => id > this.latestCompact)
      .sort((a, b) => a - b);
    plain.forEach((id, i) => {
      const expected = this.latestCompact + 1 + i;
      if (id !== expected) {
        throw new SluiceError(
          'CHECKPOINT_CORRUPT',
          `file source log ${dir} lacks entry ${expected} (it has ${id}): a deleted entry would read its files again`,
          {
            file: join(dir, String(expected)),
          },
        );
      }
      this.entries.set(id, readVersioned(this.plainPath(id), isPlain<F>).files);
      read += 1;
    });
    this.filesRead = read;
    this.latest = plain.at(-1) ?? this.latestCompact;
    // A crash after a compact file was written can leave the files it superseded.
    this.removeSuperseded(names);
  }

  private plainPath(id: number): string {
    return join(this.dir, String(id));
  }

  private compactPath(id: number): string {
    return join(this.dir, `${id}.compact`);
  }

  /** The last entry's id, -1 when the log is empty. */
  latestId(): number {
    return this.latest;
  }

  /** The files of entry `id`, or undefined when there is none. */
  get(id: number): F[] | undefined {
    return this.entries.get(id);
  }

  /** Every file of every entry, in entry order. */
  *allFiles(): Iterable<F> {
    for (let id = 0; id <= this.latest; id++) yield* this.entries.get(id) ?? [];
  }

  /**
   * Writes entry `id`, replacing an entry of that id planned before a crash. At a compaction point
   * the entry goes into a new compact file with every entry before it.
   */
  put(id: number, files: F[]): void {
    this.entries.set(id, files);
    this.latest = Math.max(this.latest, id);
    if ((id + 1) % this.compactInterval !== 0) {
      writeVersioned(this.plainPath(id), { files });
      return;
    }
    const entries: Array<CompactibleEntry<F>> = [];
    for (let i = 0; i <= id; i++) {
      const f = this.entries.get(i);
      if (f) entries.push({ id: i, files: f });
    }
    writeVersioned(this.compactPath(id), { entries });
    this.latestCompact = id;
    this.removeSuperseded(readdirSync(this.dir));
  }

  /** Deletes, of the directory's `names`, the plain entries and older compact files that the latest compact file holds. */
  private removeSuperseded(names: readonly string[]): void {
    if (this.latestCompact < 0) return;
    for (const name of names) {
      const m = COMPACT.exec(name);
      const id = m ? Number(m[1]) : /^\d+$/.test(name) ? Number(name) : undefined;
      if (id !== undefined && (m ? id < this.latestCompact : id <= this.latestCompact)) {
        rmSync(join(this.dir, name), { force: true });
      }
    }
  }
}
