/**
 * `<checkpoint>/metadata`: what never changes over a query's life: its id, its creation time and
 * number of sources, and for a stateful query the hash from state keys to key groups and the
 * key-group count. The state layout, which a repartition changes, lives in its own file
 * (StateLayoutFile.ts). A new metadata is returned unwritten: the caller writes it once the rest of
 * the query has been validated, so a refused start leaves no checkpoint behind.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { KEY_HASH, SluiceError, type StateLayout } from '@sluice/state';
import { readVersioned } from './versionedFile.js';

export interface QueryMetadata {
  id: string;
  createdAtMs: number;
  numSources: number;
  /** Stateful queries: the hash from state keys to key groups. */
  keyHash?: string;
  /** Stateful queries: the fixed hash space of state keys. */
  keyGroups?: number;
  /**
   * Written by a Sluice from before the state layout file: the layout pinned at creation. The
   * next start moves it into the layout file and rewrites this file without it.
   */
  stateLayout?: StateLayout;
}

export interface LoadedMetadata {
  meta: QueryMetadata;
  /** Not on disk yet (a new checkpoint), or on disk in an older form: write `meta` once validated. */
  write: boolean;
  /** A layout found in an older metadata file, to move into the layout file. */
  legacyLayout?: StateLayout;
}

export function loadQueryMetadata(path: string, checkpointDir: string, stateful: boolean, keyGroups: number): LoadedMetadata {
  if (!existsSync(path)) {
    const meta: QueryMetadata = {
      id: randomUUID(),
      createdAtMs: Date.now(),
      numSources: 1,
      ...(stateful && { keyHash: KEY_HASH, keyGroups }),
    };
    return { meta, write: true };
  }
  const stored = readVersioned<QueryMetadata>(path, (v): v is QueryMetadata => typeof (v as QueryMetadata)?.id === 'string');
  const { stateLayout: legacyLayout, ...meta } = stored;
  if (legacyLayout) {
    meta.keyHash ??= KEY_HASH;
    meta.keyGroups = legacyLayout.keyGroups;
  }
  const storedStateful = meta.keyGroups !== undefined;
  if (meta.numSources !== 1 || stateful !== storedStateful) {
    const shape = storedStateful ? 'a stateful query' : 'a stateless query';
    throw new SluiceError('CHECKPOINT_INCOMPATIBLE', `checkpoint ${checkpointDir} was written by ${shape} of another shape`, {
      file: path,
    });
  }
  if (storedStateful && meta.keyHash !== KEY_HASH) {
    throw new SluiceError('CHECKPOINT_INCOMPATIBLE', `checkpoint ${checkpointDir} hashes state keys with ${String(meta.keyHash)}, not ${KEY_HASH}`, {
      file: path,
    });
  }
  return { meta, write: legacyLayout !== undefined, ...(legacyLayout && { legacyLayout }) };
}
