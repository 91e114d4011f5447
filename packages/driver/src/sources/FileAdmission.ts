/**
 * Admission control of the file source: which of the listed files the next batch takes. A pure
 * function of the listing, the seen-file log and the options; listing and logging happen at the
 * edge (fileSystem.ts and the source), so this is tested without a disk.
 */

export interface FileEntry {
  /** Absolute path; also the file's identity in the seen-file log. */
  path: string;
  size: number;
  mtimeMs: number;
}

export interface AdmissionOptions {
  maxFilesPerTrigger?: number;
  /** Soft limit: files are added while the running total is below it. */
  maxBytesPerTrigger?: number;
  latestFirst: boolean;
  maxFileAgeMs: number;
}

/**
 * Files for the next batch, in processing order.
 *
 * - Files in `seen` are dropped: each file is taken once.
 * - Order is modification time, then path (ascending); `latestFirst` takes the newest first,
 *   ties still by path ascending.
 * - `maxFileAge` is measured from the newest listed file (seen or not), not the clock; older files
 *   are skipped, except in the first batch, where every file counts, and with `latestFirst` and a
 *   limit, where none is skipped.
 * - `maxFilesPerTrigger` caps the count; `maxBytesPerTrigger` is soft (a file is added while the
 *   total so far is below the limit); a batch always takes at least one file; with both set the
 *   batch stops at whichever is reached first.
 * - `ignoreLimits` (Trigger.Once) takes every admissible file.
 */
export function admitFiles(listed: FileEntry[], seen: ReadonlySet<string>, opts: AdmissionOptions, firstBatch: boolean, ignoreLimits = false): FileEntry[] {
  // As Spark (SPARK-19813, SPARK-46641): with latestFirst and a limit (maxFilesPerTrigger or
  // maxBytesPerTrigger), maxFileAge is ignored, because old files that are still due would
  // otherwise age out while newer ones are taken first.
  const limited = opts.maxFilesPerTrigger !== undefined || opts.maxBytesPerTrigger !== undefined;
  const ageApplies = !firstBatch && !(opts.latestFirst && limited);

  let threshold = Number.NEGATIVE_INFINITY;
  if (ageApplies && listed.length > 0) {
    let newest = Number.NEGATIVE_INFINITY;
    for (const f of listed) if (f.mtimeMs > newest) newest = f.mtimeMs;
    threshold = newest - opts.maxFileAgeMs;
  }

  const candidates = listed.filter((f) => !seen.has(f.path) && f.mtimeMs >= threshold);
  const dir = opts.latestFirst ? -1 : 1;
  candidates.sort((a, b) => dir * (a.mtimeMs - b.mtimeMs) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (ignoreLimits) return candidates;

  const { maxFilesPerTrigger: maxFiles, maxBytesPerTrigger: maxBytes } = opts;
  const batch: FileEntry[] = [];
  let bytes = 0;
  for (const f of candidates) {
    if (maxFiles !== undefined && batch.length >= maxFiles) break;
    if (maxBytes !== undefined && batch.length > 0 && bytes >= maxBytes) break;
    batch.push(f);
    bytes += f.size;
  }
  return batch;
}
