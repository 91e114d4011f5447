/**
 * A Parquet file opened and read in place, and its footer: the schema and the row groups' sizes
 * the driver plans with. The parsers here give hyparquet's decoded values in engine form.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parquetMetadata, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { SluiceError } from '@sluice/state';

/** Engine-form values from hyparquet's decoding: times as epoch ms, dates as days. */
export const PARSERS = {
  timestampFromMilliseconds: (v: bigint): number => Number(v),
  timestampFromMicroseconds: (v: bigint): number => floorDiv(v, 1000n),
  timestampFromNanoseconds: (v: bigint): number => floorDiv(v, 1_000_000n),
  dateFromDays: (d: number): number => d,
};

export function floorDiv(v: bigint, by: bigint): number {
  const q = v / by;
  return Number(v < 0n && q * by !== v ? q - 1n : q);
}

/** A file read in place: hyparquet asks for the byte ranges it needs (the footer, the wanted column chunks). */
export function fileBuffer(fd: number): AsyncBuffer {
  const size = fstatSync(fd).size;
  return {
    byteLength: size,
    slice(start: number, end = size): ArrayBuffer {
      const out = new Uint8Array(Math.max(0, end - start));
      let done = 0;
      while (done < out.length) {
        const n = readSync(fd, out, done, out.length - done, start + done);
        if (n === 0) break;
        done += n;
      }
      return out.buffer;
    },
  };
}

/** The footer of a Parquet file, parsed; PARQUET_CORRUPT naming the file when it is not one. */
export function footerOf(file: AsyncBuffer, path: string): FileMetaData {
  try {
    if (file.byteLength < 12) throw new Error('the file is too short');
    const tail = new DataView(file.slice(file.byteLength - 8) as ArrayBuffer);
    const length = tail.getUint32(0, true);
    if (tail.getUint32(4, true) !== 0x31524150) throw new Error("it does not end with 'PAR1'");
    if (length + 8 > file.byteLength) throw new Error(`its footer length ${length} exceeds the file`);
    return parquetMetadata(file.slice(file.byteLength - length - 8) as ArrayBuffer, { parsers: PARSERS });
  } catch (e) {
    throw new SluiceError('PARQUET_CORRUPT', `${path} is not a readable Parquet file: ${(e as Error).message}`, { file: path });
  }
}

/** A file descriptor of `path`: PATH_NOT_FOUND when it is gone (a Delta file VACUUM removed, a file deleted after listing). */
export function openParquet(path: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    const gone = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new SluiceError(gone ? 'PATH_NOT_FOUND' : 'PARQUET_CORRUPT', `cannot open ${path}: ${(e as Error).message}`, { file: path });
  }
}

export function withFile<T>(path: string, fn: (file: AsyncBuffer) => T): T {
  const fd = openParquet(path);
  try {
    return fn(fileBuffer(fd));
  } finally {
    closeSync(fd);
  }
}
