/**
 * The pieces a batch's files are read in: whole files, except that when a batch has fewer Parquet
 * files than it wants tasks, its large files are cut at row-group boundaries (Spark splits a
 * Parquet file among tasks by its row groups too), so one big file still keeps every slot busy.
 */
import { parquetRowGroupBytes } from '@sluice/executor';

export interface FilePiece {
  path: string;
  size: number;
  /** Row groups [from, to) of a Parquet file; absent: the whole file. */
  rowGroups?: [number, number];
  /** The values of the file's partition columns (a Delta table's add action), as text. */
  partitions?: Record<string, string | null>;
}

/** `files` as about `wanted` pieces of similar bytes (see above); other formats' files stay whole. */
export function filePieces(format: string, files: readonly FilePiece[], wanted: number): FilePiece[] {
  if (format !== 'parquet' || files.length >= wanted) return [...files];
  const total = files.reduce((s, f) => s + f.size, 0);
  const target = total / wanted;
  return files.flatMap((f): FilePiece[] => {
    const share = Math.round(f.size / target);
    if (share < 2) return [f];
    const groups = parquetRowGroupBytes(f.path);
    if (groups.length < 2) return [f];
    // Contiguous runs of row groups of about equal bytes, at most one piece a group.
    const pieces = Math.min(share, groups.length);
    const each = groups.reduce((s, g) => s + g, 0) / pieces;
    const out: FilePiece[] = [];
    let from = 0;
    let bytes = 0;
    groups.forEach((g, i) => {
      bytes += g;
      const left = groups.length - i - 1;
      const piecesLeft = pieces - out.length - 1;
      if ((bytes >= each && left >= piecesLeft) || left === piecesLeft) {
        out.push({ ...f, size: bytes, rowGroups: [from, i + 1] });
        from = i + 1;
        bytes = 0;
      }
    });
    return out;
  });
}

/**
 * Contiguous runs of pieces of about equal bytes, `tasks` of them at most: a run closes once it
 * reaches its share, or when the pieces left are as many as the runs left.
 */
export function packPieces(pieces: readonly FilePiece[], tasks: number): FilePiece[][] {
  const total = pieces.reduce((s, f) => s + f.size, 0);
  const target = total / tasks;
  const runs: FilePiece[][] = [];
  let run: FilePiece[] = [];
  let bytes = 0;
  pieces.forEach((f, i) => {
    run.push(f);
    bytes += f.size;
    const remainingPieces = pieces.length - i - 1;
    const remainingRuns = tasks - runs.length - 1;
    if ((bytes >= target && remainingPieces >= remainingRuns) || remainingPieces === remainingRuns) {
      runs.push(run);
      run = [];
      bytes = 0;
    }
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * How many tasks a streaming batch of `files` gets: two per slot (a slow task then does not idle
 * the others), more when the batch is larger than the advisory task size, and one per file when
 * that size is 0 (adaptive sizing off).
 */
export function batchTasks(files: readonly FilePiece[], slots: number, advisoryTaskBytes: number): number {
  const total = files.reduce((s, f) => s + f.size, 0);
  return Math.max(slots * 2, advisoryTaskBytes > 0 ? Math.ceil(total / advisoryTaskBytes) : files.length);
}

/** `files` as at most `tasks` runs: large Parquet files cut into row-group pieces (filePieces), then packed (packPieces). */
export function taskRuns(format: string, files: readonly FilePiece[], tasks: number): FilePiece[][] {
  const pieces = filePieces(format, files, tasks);
  return packPieces(pieces, Math.min(pieces.length, tasks));
}

/** The split fields of a run of pieces: their paths, their row groups and partition values when any piece has some. */
export function piecesSplit(pieces: readonly FilePiece[]): {
  files: string[];
  rowGroups?: Array<[number, number] | null>;
  partitions?: Array<Record<string, string | null> | null>;
} {
  return {
    files: pieces.map((p) => p.path),
    ...(pieces.some((p) => p.rowGroups !== undefined) && { rowGroups: pieces.map((p) => p.rowGroups ?? null) }),
    ...(pieces.some((p) => p.partitions !== undefined) && { partitions: pieces.map((p) => p.partitions ?? null) }),
  };
}
