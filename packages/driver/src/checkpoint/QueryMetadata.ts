/**
 * `<checkpoint>/metadata`: the query's id, and for a stateful query the state layout pinned when
 * the checkpoint was created. A new one is returned unwritten: the caller writes it once the rest
 * of the query has been validated, so a refused start leaves no checkpoint behind.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { KEY_HASH, SluiceError, warn, type StateLayout } from '@sluice/state';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import { decideStateLayout } from '../execution/StatefulOperatorInfo.js';
import { readVersioned } from './versionedFile.js';

export interface QueryMetadata {
  id: string;
  createdAtMs: number;
  numSources: number;
  /** Pinned at creation for stateful queries: key groups, partitions and shards of the state. */
  stateLayout?: StateLayout;
  /** The hash from state keys to key groups, pinned with the layout. */
  keyHash?: string;
}

export function loadQueryMetadata(
  path: string,
  checkpointDir: string,
  stateful: boolean,
  conf: RuntimeConf,
  slots: number,
): { meta: QueryMetadata; isNew: boolean } {
  if (existsSync(path)) {
    const meta = readVersioned<QueryMetadata>(path, (v): v is QueryMetadata => typeof (v as QueryMetadata)?.id === 'string');
    if (meta.numSources !== 1 || stateful !== (meta.stateLayout !== undefined)) {
      const shape = meta.stateLayout ? 'a stateful query' : 'a stateless query';
      throw new SluiceError('CHECKPOINT_INCOMPATIBLE', `checkpoint ${checkpointDir} was written by ${shape} of another shape`, {
        file: path,
      });
    }
    if (meta.stateLayout && meta.keyHash !== KEY_HASH) {
      throw new SluiceError('CHECKPOINT_INCOMPATIBLE', `checkpoint ${checkpointDir} hashes state keys with ${String(meta.keyHash)}, not ${KEY_HASH}`, {
        file: path,
      });
    }
    if (meta.stateLayout) {
      for (const w of decideStateLayout(meta.stateLayout, conf, slots).warnings) {
        warn('SLUICE_CONF_IGNORED', w);
      }
    }
    return { meta, isNew: false };
  }
  const meta: QueryMetadata = {
    id: randomUUID(),
    createdAtMs: Date.now(),
    numSources: 1,
    ...(stateful && { stateLayout: decideStateLayout(undefined, conf, slots).layout, keyHash: KEY_HASH }),
  };
  return { meta, isNew: true };
}
