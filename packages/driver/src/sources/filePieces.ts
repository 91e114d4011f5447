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
}

/** `files` as about `wanted` pieces of similar bytes (see above); other formats' files stay whole. */
export function filePieces(format: string, files: ReadonlyArray<{ path: string; size: number }>, wanted: number): FilePiece[] {
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
        out.push({ path: f.path, size: bytes, rowGroups: [from, i + 1] });
        from = i + 1;
        bytes = 0;
      }
    });
    return out;
  });
}

/** The split fields of a run of pieces: their paths, and their row groups when any piece has some. */
export function piecesSplit(pieces: readonly FilePiece[]): { files: string[]; rowGroups?: Array<[number, number] | null> } {
  const files = pieces.map((p) => p.path);
  return pieces.some((p) => p.rowGroups !== undefined) ? { files, rowGroups: pieces.map((p) => p.rowGroups ?? null) } : { files };
}
