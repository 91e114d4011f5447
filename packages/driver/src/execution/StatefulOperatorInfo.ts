/**
 * What the driver knows of a query's stateful operator: the pinned state layout (key groups,
 * partitions, shards), where its shards live, the resources each shard may take, and how its
 * metrics become a progress entry.
 */
import type { StateOperatorMetrics, StatefulOp, StateTask } from '@sluice/executor';
import { CONF_KEYS, SluiceError, validateLayout, type StateLayout } from '@sluice/state';
import { join } from 'node:path';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import type { StateOperatorProgress } from '../events/progress.js';

const PARTITIONS = CONF_KEYS.stateStorePartitions;
const SHUFFLE = CONF_KEYS.shufflePartitions;
const KEY_GROUPS = CONF_KEYS.stateStoreKeyGroups;
const SHARDS = CONF_KEYS.stateStoreShards;
const MAX_MEMORY = CONF_KEYS.stateStoreMaxMemoryMB;
const MAX_FILES = CONF_KEYS.stateStoreMaxOpenFiles;

/** LevelDB never keeps fewer table files open than this (it clamps max_open_files up to 74). */
export const MIN_FILES_PER_SHARD = 74;
const MB = 1024 * 1024;

export interface LayoutDecision {
  layout: StateLayout;
  warnings: string[];
}

/**
 * The layout of a new checkpoint comes from the conf; an existing one keeps its pinned layout.
 * As in Spark, a changed shuffle.partitions is ignored with a warning; a changed
 * stateStore.partitions needs a repartition, which this version refuses.
 */
export function decideStateLayout(pinned: StateLayout | undefined, conf: RuntimeConf, slots: number): LayoutDecision {
  const asked = conf.get<number | undefined>(PARTITIONS);
  const shuffle = conf.get<number | 'auto'>(SHUFFLE);
  if (!pinned) {
    const partitions = asked ?? (shuffle === 'auto' ? 200 : shuffle);
    const layout = {
      keyGroups: conf.get<number>(KEY_GROUPS),
      partitions,
      shards: Math.min(conf.isSet(SHARDS) ? conf.get<number>(SHARDS) : slots, partitions),
    };
    validateLayout(layout);
    return { layout, warnings: [] };
  }
  if (asked !== undefined && asked !== pinned.partitions) {
    throw new SluiceError(
      'STATE_REPARTITION_UNSUPPORTED',
      `the checkpoint's state has ${pinned.partitions} partitions; changing ${PARTITIONS} to ${asked} needs a state repartition, which this version does not support yet (set it back to ${pinned.partitions})`,
      { option: PARTITIONS },
    );
  }
  const warnings: string[] = [];
  if (asked === undefined && conf.isSet(SHUFFLE) && shuffle !== pinned.partitions) {
    warnings.push(`${SHUFFLE}=${shuffle} is ignored: this stateful query's checkpoint pins ${pinned.partitions} partitions (set ${PARTITIONS} to change it)`);
  }
  if (conf.isSet(KEY_GROUPS) && conf.get<number>(KEY_GROUPS) !== pinned.keyGroups) {
    warnings.push(`${KEY_GROUPS} is ignored: the checkpoint pins ${pinned.keyGroups} key groups`);
  }
  if (conf.isSet(SHARDS) && conf.get<number>(SHARDS) !== pinned.shards) {
    warnings.push(`${SHARDS} is ignored: the checkpoint pins ${pinned.shards} shards`);
  }
  return { layout: pinned, warnings };
}

/**
 * Resources of one shard, from the per-worker budgets shared by the shards a worker hosts: this
 * query's and those of the session's other running stateful queries (`otherShards`), split when
 * the query starts.
 */
export function shardOptions(conf: RuntimeConf, layout: StateLayout, slots: number, otherShards = 0): StateTask['storeOptions'] {
  const perWorker = Math.ceil((layout.shards + otherShards) / slots);
  const files = Math.floor(conf.get<number>(MAX_FILES) / perWorker);
  if (files < MIN_FILES_PER_SHARD) {
    throw new SluiceError(
      'STATE_FILE_BUDGET_TOO_SMALL',
      `${MAX_FILES}=${conf.get<number>(MAX_FILES)} gives each of the ${perWorker} state shards a worker hosts ${files} file handles; LevelDB needs at least ${MIN_FILES_PER_SHARD}`,
      { option: MAX_FILES },
    );
  }
  const share = (conf.get<number>(MAX_MEMORY) * MB) / perWorker;
  if (share < 2 * MB) {
    throw new SluiceError(
      'STATE_MEMORY_BUDGET_TOO_SMALL',
      `${MAX_MEMORY}=${conf.get<number>(MAX_MEMORY)} leaves each of the ${perWorker} state shards a worker hosts under 2 MB`,
      { option: MAX_MEMORY },
    );
  }
  // Half for decoded state kept between batches, a quarter for LevelDB's block cache, and an
  // eighth for each of its two write buffers (the memtable and the one being flushed).
  const cacheBytes = Math.min(64 * MB, Math.floor(share / 4));
  const writeBufferBytes = Math.min(16 * MB, Math.floor(share / 8));
  return { cacheBytes, writeBufferBytes, maxOpenFiles: files, stateCacheBytes: Math.floor(share - cacheBytes - 2 * writeBufferBytes) };
}

const OPERATOR_NAMES: Record<StatefulOp['kind'], string> = {
  aggregate: 'stateStoreSave',
  dropDuplicates: 'dedupe',
  dropDuplicatesWithinWatermark: 'dedupeWithinWatermark',
};

export class StatefulOperatorInfo {
  constructor(
    readonly op: StatefulOp,
    readonly layout: StateLayout,
    readonly stateDir: string,
  ) {}

  get shards(): number {
    return this.layout.shards;
  }

  shardDir(shard: number): string {
    return join(this.stateDir, `shard-${shard}`);
  }

  /** Whether the operator uses the watermark: late rows, eviction, and so no-data batches. */
  usesWatermark(hasWatermark: boolean): boolean {
    if (!hasWatermark) return false;
    if (this.op.kind === 'aggregate') return this.op.eventTimeKey !== null;
    if (this.op.kind === 'dropDuplicates') return this.op.eventTimeColumn !== null;
    return true;
  }

  progress(m: StateOperatorMetrics): StateOperatorProgress {
    return {
      operatorName: OPERATOR_NAMES[this.op.kind],
      numRowsTotal: m.numRowsTotal,
      numRowsUpdated: m.numRowsUpdated,
      numRowsRemoved: m.numRowsRemoved,
      numRowsDroppedByWatermark: m.numRowsDroppedByWatermark,
      memoryUsedBytes: m.memoryUsedBytes,
      numShufflePartitions: this.layout.partitions,
      numStateStoreInstances: this.layout.shards,
      commitTimeMs: m.commitTimeMs,
      customMetrics: {},
    };
  }
}
