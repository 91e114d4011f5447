/**
 * On-disk form of every checkpoint and manifest file: a first line `v<N>` naming the format
 * version, then one JSON document. Files are written to a temp name, fsynced, renamed into
 * place and the directory fsynced, so a reader sees either the old file or the whole new one.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { asEnvironmentError, environmentError, SluiceError } from '@sluice/state';
import { checkpointWriter } from './CheckpointWriter.js';

export const FORMAT_VERSION = 1;

const tempName = (path: string): string => `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;

export function writeFileDurable(path: string, content: string | Uint8Array): void {
  const tmp = tempName(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, typeof content === 'string' ? Buffer.from(content) : content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    fsyncDir(dirname(path));
  } catch (e) {
    rmSync(tmp, { force: true }); // a full disk must not keep the half-written temp file
    throw asEnvironmentError(e, path, 'write');
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * writeFileDurable off the driver's thread, grouped with the other writes waiting then
 * (CheckpointWriter.ts): the event loop goes on with other queries while a batch's entry reaches
 * the disk, and writes finishing together share one journal commit.
 */
export async function writeFileDurableAsync(path: string, content: string): Promise<void> {
  try {
    await checkpointWriter.write(path, tempName(path), content);
  } catch (e) {
    throw asEnvironmentError(e, path, 'write');
  }
}

const versioned = (value: unknown): string => `v${FORMAT_VERSION}\n${JSON.stringify(value)}\n`;

export function writeVersioned(path: string, value: unknown): void {
  writeFileDurable(path, versioned(value));
}

export function writeVersionedAsync(path: string, value: unknown): Promise<void> {
  return writeFileDurableAsync(path, versioned(value));
}

/** Reads a versioned file; a torn, corrupt or newer-version file is a coded error naming it. */
export function readVersioned<T>(path: string, validate?: (v: unknown) => v is T): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const env = environmentError(e, path, 'read', 'read');
    if (env) throw env;
    throw new SluiceError('CHECKPOINT_CORRUPT', `cannot read checkpoint file ${path}: ${(e as Error).message}`, {
      file: path,
      cause: e,
    });
  }
  const nl = text.indexOf('\n');
  const header = nl < 0 ? text : text.slice(0, nl);
  const m = /^v(\d+)$/.exec(header);
  if (!m) {
    throw new SluiceError('CHECKPOINT_CORRUPT', `checkpoint file ${path} has no version header (torn or not a Sluice file)`, {
      file: path,
    });
  }
  const version = Number(m[1]);
  if (version > FORMAT_VERSION) {
    throw new SluiceError(
      'CHECKPOINT_VERSION_UNSUPPORTED',
      `checkpoint file ${path} has format v${version}, newer than this Sluice (v${FORMAT_VERSION}); upgrade Sluice to read it`,
      { file: path },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text.slice(nl + 1));
  } catch (e) {
    throw new SluiceError('CHECKPOINT_CORRUPT', `checkpoint file ${path} is torn or corrupt: ${(e as Error).message}`, {
      file: path,
      cause: e,
    });
  }
  if (validate && !validate(value)) {
    throw new SluiceError('CHECKPOINT_CORRUPT', `checkpoint file ${path} does not have the expected fields`, { file: path });
  }
  return value as T;
}
