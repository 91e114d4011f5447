/**
 * On-disk form of every checkpoint and manifest file: a first line `v<N>` naming the format
 * version, then one JSON document. Files are replaced durably (replaceFile of @sluice/state: a
 * temp name, fsynced, renamed into place and the directory fsynced), so a reader sees either the
 * old file or the whole new one.
 */
import { readFileSync } from 'node:fs';
import { asEnvironmentError, environmentError, replaceFile, SluiceError } from '@sluice/state';
import { checkpointWriter } from './CheckpointWriter.js';

export const FORMAT_VERSION = 1;

const versioned = (value: unknown): string => `v${FORMAT_VERSION}\n${JSON.stringify(value)}\n`;

export function writeVersioned(path: string, value: unknown): void {
  replaceFile(path, versioned(value));
}

/**
 * writeVersioned off the driver's thread, grouped with the other writes waiting then
 * (CheckpointWriter.ts): the event loop goes on with other queries while a batch's entry reaches
 * the disk, and writes finishing together share one journal commit.
 */
export async function writeVersionedAsync(path: string, value: unknown): Promise<void> {
  try {
    await checkpointWriter.write(path, versioned(value));
  } catch (e) {
    throw asEnvironmentError(e, path, 'write');
  }
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
