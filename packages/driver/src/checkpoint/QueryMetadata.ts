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

/** A source as the checkpoint records it: its format, and for a file source the path it was created with. */
export interface SourceRecord {
  format: string;
  path?: string;
}

export interface QueryMetadata {
  id: string;
  createdAtMs: number;
  numSources: number;
  /** The query's sources, in order (absent from checkpoints of an earlier Sluice). */
  sources?: SourceRecord[];
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

export function loadQueryMetadata(path: string, checkpointDir: string, stateful: boolean, keyGroups: number, sources: SourceRecord[]): LoadedMetadata {
  if (!existsSync(path)) {
    const meta: QueryMetadata = {
      id: randomUUID(),
      createdAtMs: Date.now(),
      numSources: sources.length,
      sources,
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
  if (meta.numSources !== sources.length || stateful !== storedStateful) {
    const shape = storedStateful ? 'a stateful query' : 'a stateless query';
    throw new SluiceError('CHECKPOINT_INCOMPATIBLE', `checkpoint ${checkpointDir} was written by ${shape} of another shape`, {
      file: path,
    });
  }
  // Another kind of source would read the old one's offsets as its own: refused. A file source
  // may move to another directory (SOURCE_PATH_CHANGED covers what that breaks).
  meta.sources?.forEach((was, i) => {
    const now = sources[i];
    if (now && now.format !== was.format) {
      throw new SluiceError(
        'CHECKPOINT_INCOMPATIBLE',
        `checkpoint ${checkpointDir} belongs to a query reading a ${was.format} source${was.path ? ` (${was.path})` : ''}; this query reads a ${now.format} source: use another checkpoint`,
        { file: path },
      );
    }
  });
  if (storedStateful && meta.keyHash !== KEY_HASH) {
    throw new SluiceError('CHECKPOINT_INCOMPATIBLE', `checkpoint ${checkpointDir} hashes state keys with ${String(meta.keyHash)}, not ${KEY_HASH}`, {
      file: path,
    });
  }
  return { meta, write: legacyLayout !== undefined, ...(legacyLayout && { legacyLayout }) };
}
