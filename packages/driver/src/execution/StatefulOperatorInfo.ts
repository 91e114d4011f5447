/**
 * What the driver knows of a query's stateful operator: the state layout in force (key groups,
 * partitions, shards, and which shard holds each partition), where its shards live, the resources
 * each shard may take, whether it uses the watermark, and how its metrics become a progress entry.
 */
import { operatorUsesWatermark, type OutputMode, type StateOperatorMetrics, type StatefulOp, type StateTask } from '@sluice/executor';
import { CONF_KEYS, partitionsIn, SluiceError, validateLayout, type StateLayout } from '@sluice/state';
import type { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { contiguousLayout, readStateLayout, type StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import type { StateOperatorProgress } from '../events/progress.js';

const K = CONF_KEYS;

/** LevelDB never keeps fewer table files open than this (it clamps max_open_files up to 74). */
export const MIN_FILES_PER_SHARD = 74;
const MB = 1024 * 1024;

export interface LayoutDecision {
  /** The layout the query runs with until a repartition, if any, is done. */
  current: StateLayoutRecord;
  /** The counts the conf asks for, when they differ from the current ones: a repartition is due. */
  target?: StateLayout;
  warnings: string[];
}

/**
 * The partition and shard counts a start's conf asks for: `stateStore.partitions` and
 * `stateStore.shards` when set (`auto`: the slot count), else those of `current`, the layout the
 * state has (a new checkpoint: `shuffle.partitions` and the slot count). Never more shards than
 * partitions.
 */
export function askedCounts(conf: RuntimeConf, slots: number, current: { partitions: number; shards: number } | undefined): { partitions: number; shards: number } {
  const shuffle = conf.get<number | 'auto'>(K.shufflePartitions);
  const partitions = conf.get<number | undefined>(K.stateStorePartitions) ?? current?.partitions ?? (shuffle === 'auto' ? 200 : shuffle);
  const shards = conf.get<number | 'auto' | undefined>(K.stateStoreShards);
  return { partitions, shards: Math.min(shards === 'auto' ? slots : (shards ?? current?.shards ?? slots), partitions) };
}

/**
 * The layout a start runs with, and the one it must repartition to (a pure decision), from the
 * counts the conf asks for (askedCounts).
 *
 * - Partitions: as in Spark, a changed shuffle.partitions alone is ignored (with a warning) once
 *   the checkpoint exists; more partitions than key groups is INVALID_CONF.
 * - Shards: pinned at creation unless `stateStore.shards` is set.
 */
export function decideStateLayout(current: StateLayoutRecord | undefined, keyGroups: number, conf: RuntimeConf, slots: number): LayoutDecision {
  const asked = conf.get<number | undefined>(K.stateStorePartitions);
  const shuffle = conf.get<number | 'auto'>(K.shufflePartitions);
  const { partitions, shards } = askedCounts(conf, slots, current);
  if (partitions > keyGroups) {
    // Name the key the user set: shuffle.partitions stands in when stateStore.partitions is unset.
    const key = asked !== undefined ? K.stateStorePartitions : K.shufflePartitions;
    throw new SluiceError(
      'INVALID_CONF',
      `${key}=${partitions} gives a stateful query more state partitions than its ${keyGroups} key groups (${K.stateStoreKeyGroups}); use at most ${keyGroups}`,
      { option: key },
    );
  }
  const counts = { keyGroups, partitions, shards };
  validateLayout(counts);
  if (!current) return { current: contiguousLayout(counts), warnings: [] };
  const warnings: string[] = [];
  if (asked === undefined && conf.isSet(K.shufflePartitions) && shuffle !== current.partitions) {
    warnings.push(
      `${K.shufflePartitions}=${shuffle} is ignored: this stateful query's checkpoint keeps ${current.partitions} state partitions, as in Spark; ` +
        `set ${K.stateStorePartitions} to change them (the state is repartitioned when the query starts)`,
    );
  }
  if (conf.isSet(K.stateStoreKeyGroups) && conf.get<number>(K.stateStoreKeyGroups) !== current.keyGroups) {
    warnings.push(`${K.stateStoreKeyGroups} is ignored: the checkpoint pins ${current.keyGroups} key groups`);
  }
  const changed = partitions !== current.partitions || shards !== current.shards;
  return { current, ...(changed && { target: counts }), warnings };
}

/**
 * The layout of a start: the layout file's; for a checkpoint of an earlier Sluice, the one it
 * pinned in metadata (shards holding contiguous partitions); for a new one, the conf's. A stateful
 * checkpoint that ran batches but lost its layout file lost its state.
 */
export function loadStateLayout(
  paths: CheckpointPaths,
  legacyLayout: StateLayout | undefined,
  keyGroups: number,
  conf: RuntimeConf,
  slots: number,
  hasRunBatches: boolean,
): { decision: LayoutDecision; onDisk: boolean } {
  const layoutPath = paths.stateLayout(0);
  const onDisk = readStateLayout(layoutPath);
  if (!onDisk && !legacyLayout && hasRunBatches) {
    throw new SluiceError(
      'STATE_STORE_CORRUPT',
      `state layout file ${layoutPath} is missing from a checkpoint that has run batches: its state (${paths.state(0)}) was deleted or damaged`,
      { file: layoutPath },
    );
  }
  return { decision: decideStateLayout(onDisk ?? (legacyLayout && contiguousLayout(legacyLayout)), keyGroups, conf, slots), onDisk: onDisk !== undefined };
}

/**
 * Resources of one shard, from the per-worker budgets shared by the shards a worker hosts: this
 * query's and those of the session's other running stateful queries (`otherShards`), split when
 * the query starts.
 */
export function shardOptions(conf: RuntimeConf, shards: number, slots: number, otherShards = 0): StateTask['storeOptions'] {
  const perWorker = Math.ceil((shards + otherShards) / slots);
  const maxFiles = conf.get<number>(K.stateStoreMaxOpenFiles);
  const files = Math.floor(maxFiles / perWorker);
  if (files < MIN_FILES_PER_SHARD) {
    throw new SluiceError(
      'STATE_FILE_BUDGET_TOO_SMALL',
      `${K.stateStoreMaxOpenFiles}=${maxFiles} gives each of the ${perWorker} state shards a worker hosts ${files} file handles; LevelDB needs at least ${MIN_FILES_PER_SHARD}`,
      { option: K.stateStoreMaxOpenFiles },
    );
  }
  const maxMemory = conf.get<number>(K.stateStoreMaxMemoryMB);
  const share = (maxMemory * MB) / perWorker;
  if (share < 2 * MB) {
    throw new SluiceError(
      'STATE_MEMORY_BUDGET_TOO_SMALL',
      `${K.stateStoreMaxMemoryMB}=${maxMemory} leaves each of the ${perWorker} state shards a worker hosts under 2 MB`,
      { option: K.stateStoreMaxMemoryMB },
    );
  }
  // Half for decoded state kept between batches, a quarter for LevelDB's block cache, and an
  // eighth for each of its two write buffers (the memtable and the one being flushed).
  const cacheBytes = Math.min(64 * MB, Math.floor(share / 4));
  const writeBufferBytes = Math.min(16 * MB, Math.floor(share / 8));
  return {
    cacheBytes,
    writeBufferBytes,
    maxOpenFiles: files,
    stateCacheBytes: Math.floor(share - cacheBytes - 2 * writeBufferBytes),
    changelog: conf.get<boolean>(K.stateStoreChangelog),
  };
}

const OPERATOR_NAMES: Record<StatefulOp['kind'], string> = {
  aggregate: 'stateStoreSave',
  dropDuplicates: 'dedupe',
  dropDuplicatesWithinWatermark: 'dedupeWithinWatermark',
};

export class StatefulOperatorInfo {
  /** The operator drops late rows and evicts state (operatorUsesWatermark, shared with the workers). */
  readonly usesWatermark: boolean;
  /**
   * The batch each shard last committed, as the commit log records it (null: unknown, a commit
   * of an earlier Sluice). A state task checks its shard against it.
   */
  shardMarkers: Array<number | null>;

  constructor(
    readonly op: StatefulOp,
    readonly layout: StateLayoutRecord,
    private readonly paths: CheckpointPaths,
    private readonly hasWatermark: boolean,
    private readonly outputMode: OutputMode,
    readonly operatorId = 0,
  ) {
    this.usesWatermark = operatorUsesWatermark(op, hasWatermark, outputMode);
    this.shardMarkers = Array.from({ length: layout.shards }, () => -1);
  }

  /** The same operator on the layout a repartition moved its state to, its shards at `shardMarkers`. */
  withLayout(layout: StateLayoutRecord, shardMarkers: Array<number | null>): StatefulOperatorInfo {
    const moved = new StatefulOperatorInfo(this.op, layout, this.paths, this.hasWatermark, this.outputMode, this.operatorId);
    moved.shardMarkers = shardMarkers;
    return moved;
  }

  get shards(): number {
    return this.layout.shards;
  }

  get stateDir(): string {
    return this.paths.state(this.operatorId);
  }

  shardDir(shard: number): string {
    return this.paths.shard(this.operatorId, shard);
  }

  /** The partitions the layout's table gives shard `shard`. */
  partitionsOf(shard: number): number[] {
    return partitionsIn(this.layout.shardOfPartition, shard);
  }

  progress(m: StateOperatorMetrics, customMetrics: Record<string, number> = {}): StateOperatorProgress {
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
      customMetrics,
    };
  }
}
