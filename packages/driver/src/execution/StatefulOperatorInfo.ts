/**
 * What the driver knows of a query's stateful operator: the state layout in force (key groups,
 * partitions, shards, and which shard holds each partition), where its shards live, the resources
 * each shard may take, whether it uses the watermark, and how its metrics become a progress entry.
 */
import { operatorOf, operatorUsesWatermark, type OutputMode, type StateOperatorMetrics, type StatefulOp, type StateTask } from '@sluice/executor';
import { CONF_KEYS, openFilesLimit, partitionsIn, SluiceError, validateLayout, type StateLayout, type WorkerBudget } from '@sluice/state';
import type { CheckpointPaths } from '../checkpoint/CheckpointPaths.js';
import { storedLayout } from '../checkpoint/recovery.js';
import { contiguousLayout, type StateLayoutRecord } from '../checkpoint/StateLayoutFile.js';
import type { RuntimeConf } from '../conf/RuntimeConf.js';
import type { StateOperatorProgress } from '../events/progress.js';
import { askedCounts, type RunSettings } from './nextBatch.js';

const K = CONF_KEYS;

/** LevelDB never keeps fewer table files open than this (it clamps max_open_files up to 74). */
export const MIN_FILES_PER_SHARD = 74;
const MB = 1024 * 1024;

export interface LayoutDecision {
  /** The layout the query runs with until a repartition, if any, is done (a new checkpoint's: the asked one). */
  current: StateLayoutRecord;
  warnings: string[];
}

/** The counts a run's conf asks of the state (RunSettings.state): stateStore.partitions and stateStore.shards. */
export function stateSettings(conf: RuntimeConf, slots: number): NonNullable<RunSettings['state']> {
  return { partitions: conf.get(K.stateStorePartitions), shards: conf.get(K.stateStoreShards), slots };
}

/**
 * The layout a start runs with (a pure decision), and the conf's mistakes about it. A new
 * checkpoint takes the counts the conf asks for (stateStore.partitions, else shuffle.partitions;
 * stateStore.shards, else the slot count); an existing one keeps its layout until nextBatch runs
 * the repartition its conf asks for.
 *
 * - Partitions: as in Spark, a changed shuffle.partitions alone is ignored (with a warning) once
 *   the checkpoint exists; more partitions than key groups is INVALID_CONF.
 * - Shards: pinned at creation unless `stateStore.shards` is set.
 */
export function decideStateLayout(current: StateLayoutRecord | undefined, keyGroups: number, conf: RuntimeConf, slots: number): LayoutDecision {
  const asked = conf.get(K.stateStorePartitions);
  const shuffle = conf.get(K.shufflePartitions);
  if (shuffle === 'auto' && asked === undefined && conf.isSet(K.shufflePartitions)) {
    // A stateful query's partitions are its state's layout: the engine cannot pick them per batch.
    throw new SluiceError(
      'INVALID_CONF',
      `${K.shufflePartitions}=auto lets the engine choose each batch's partitions, which a stateful query cannot do: its partitions hold its state; set ${K.stateStorePartitions}`,
      { option: K.shufflePartitions },
    );
  }
  const created = { keyGroups, partitions: shuffle === 'auto' ? 200 : shuffle, shards: slots };
  const counts = askedCounts(stateSettings(conf, slots), current ?? created);
  if (counts.partitions > keyGroups) {
    // Name the key the user set: shuffle.partitions stands in when stateStore.partitions is unset.
    const key = asked !== undefined ? K.stateStorePartitions : K.shufflePartitions;
    throw new SluiceError(
      'INVALID_CONF',
      `${key}=${counts.partitions} gives a stateful query more state partitions than its ${keyGroups} key groups (${K.stateStoreKeyGroups}); use at most ${keyGroups}`,
      { option: key },
    );
  }
  validateLayout({ ...counts, keyGroups });
  if (!current) return { current: contiguousLayout({ ...counts, keyGroups }), warnings: [] };
  const warnings: string[] = [];
  if (asked === undefined && conf.isSet(K.shufflePartitions) && shuffle !== current.partitions) {
    warnings.push(
      `${K.shufflePartitions}=${shuffle} is ignored: this stateful query's checkpoint keeps ${current.partitions} state partitions, as in Spark; ` +
        `set ${K.stateStorePartitions} to change them (the state is repartitioned when the query starts)`,
    );
  }
  if (conf.isSet(K.stateStoreKeyGroups) && conf.get(K.stateStoreKeyGroups) !== current.keyGroups) {
    warnings.push(`${K.stateStoreKeyGroups} is ignored: the checkpoint pins ${current.keyGroups} key groups`);
  }
  return { current, warnings };
}

/**
 * The layout of a start: the stored one (recovery.ts's storedLayout: the layout file's; for the
 * first operator of a checkpoint of an earlier Sluice, the one it pinned in metadata); for a new
 * one, the conf's. A stateful checkpoint that ran batches but lost its layout file lost its state.
 * `onDisk`: read from the layout file (else the start writes it).
 */
export function loadStateLayout(
  paths: CheckpointPaths,
  legacyLayout: StateLayout | undefined,
  keyGroups: number,
  conf: RuntimeConf,
  slots: number,
  hasRunBatches: boolean,
  operatorId = 0,
): { decision: LayoutDecision; onDisk: boolean } {
  const layoutPath = paths.stateLayout(operatorId);
  const stored = storedLayout(paths, operatorId, legacyLayout);
  if (!stored && hasRunBatches) {
    throw new SluiceError(
      'STATE_STORE_CORRUPT',
      `state layout file ${layoutPath} is missing from a checkpoint that has run batches: its state (${paths.state(operatorId)}) was deleted or damaged, or the query has a stateful operator its checkpoint did not`,
      { file: layoutPath },
    );
  }
  return { decision: decideStateLayout(stored?.layout, keyGroups, conf, slots), onDisk: stored?.inLayoutFile === true };
}

/** File handles kept for the driver when the slots share the process's `ulimit -n`: checkpoint, sink and source files, Node's own. */
export const DRIVER_RESERVED_FILES = 64;
/** Handles a worker thread holds besides its shards (its event loop's). */
const WORKER_OWN_FILES = 4;

/**
 * Each worker's budgets, shared by every query's shards it hosts: `stateStore.maxOpenFiles`, but
 * never more than the worker's share of the process's `ulimit -n` (after DRIVER_RESERVED_FILES),
 * and `stateStore.maxMemoryMB`.
 */
export function workerBudget(conf: RuntimeConf, slots: number): WorkerBudget & { limit?: number } {
  const maxOpenFiles = conf.get(K.stateStoreMaxOpenFiles);
  const limit = openFilesLimit();
  const share = limit === undefined ? maxOpenFiles : Math.max(0, Math.floor((limit - DRIVER_RESERVED_FILES) / slots) - WORKER_OWN_FILES);
  return { maxOpenFiles: Math.min(maxOpenFiles, share), maxMemoryBytes: conf.get(K.stateStoreMaxMemoryMB) * MB, ...(limit !== undefined && { limit }) };
}

/**
 * Resources of one shard, its share of the worker budgets: the worker hosts this query's shards
 * and those of the session's other running stateful queries (`otherShards`). Each shard may keep
 * up to its share of the files open (at least LevelDB's 74); the workers' ShardRegistry closes
 * idle shards when the files they really hold would pass the budget. `check` (at start) refuses a
 * budget that cannot hold one shard per worker, or gives a shard under 2 MB; a batch's share is
 * only clamped, since the query was admitted.
 */
export function shardOptions(
  conf: RuntimeConf,
  budget: WorkerBudget & { limit?: number },
  shards: number,
  slots: number,
  otherShards: number,
  check = false,
): StateTask['storeOptions'] {
  const perWorker = Math.max(1, Math.ceil((shards + otherShards) / slots));
  const maxFiles = conf.get(K.stateStoreMaxOpenFiles);
  if (check && budget.maxOpenFiles < MIN_FILES_PER_SHARD) {
    const why =
      budget.maxOpenFiles < maxFiles
        ? `the process may open ${budget.limit} files (ulimit -n); less ${DRIVER_RESERVED_FILES} kept for the driver and ${WORKER_OWN_FILES} for each worker's own, that leaves each of the ${slots} executor slots ${budget.maxOpenFiles}`
        : `${K.stateStoreMaxOpenFiles}=${maxFiles} leaves each executor slot ${budget.maxOpenFiles}`;
    throw new SluiceError(
      'STATE_FILE_BUDGET_TOO_SMALL',
      `${why} file handles, and a LevelDB state shard needs ${MIN_FILES_PER_SHARD}: raise ulimit -n or ${K.stateStoreMaxOpenFiles}, or use fewer ${K.executorCores}`,
      { option: K.stateStoreMaxOpenFiles },
    );
  }
  const files = Math.max(MIN_FILES_PER_SHARD, Math.floor(budget.maxOpenFiles / perWorker));
  const maxMemory = conf.get(K.stateStoreMaxMemoryMB);
  const share = budget.maxMemoryBytes / perWorker;
  if (check && share < 2 * MB) {
    throw new SluiceError(
      'STATE_MEMORY_BUDGET_TOO_SMALL',
      `${K.stateStoreMaxMemoryMB}=${maxMemory} leaves each of the ${perWorker} state shards a worker would host (${otherShards} of them other queries') under 2 MB`,
      { option: K.stateStoreMaxMemoryMB },
    );
  }
  const bytes = Math.max(2 * MB, share);
  // Half for decoded state kept between batches, a quarter for LevelDB's block cache, and an
  // eighth for each of its two write buffers (the memtable and the one being flushed).
  const cacheBytes = Math.min(64 * MB, Math.floor(bytes / 4));
  const writeBufferBytes = Math.min(16 * MB, Math.floor(bytes / 8));
  return {
    cacheBytes,
    writeBufferBytes,
    maxOpenFiles: files,
    stateCacheBytes: Math.floor(bytes - cacheBytes - 2 * writeBufferBytes),
    changelog: conf.get(K.stateStoreChangelog),
  };
}

export class StatefulOperatorInfo {
  /** The operator drops late rows and evicts state (operatorUsesWatermark, shared with the workers). */
  readonly usesWatermark: boolean;

  constructor(
    readonly op: StatefulOp,
    readonly layout: StateLayoutRecord,
    private readonly paths: CheckpointPaths,
    private readonly hasWatermark: boolean,
    private readonly outputMode: OutputMode,
    readonly operatorId = 0,
  ) {
    this.usesWatermark = operatorUsesWatermark(op, hasWatermark, outputMode);
  }

  /** The same operator on the layout a repartition moved its state to. */
  withLayout(layout: StateLayoutRecord): StatefulOperatorInfo {
    return new StatefulOperatorInfo(this.op, layout, this.paths, this.hasWatermark, this.outputMode, this.operatorId);
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

  /** Spark's name of the operator, as progress events give it. */
  get operatorName(): string {
    return operatorOf(this.op).progressName;
  }

  progress(m: StateOperatorMetrics, customMetrics: Record<string, number> = {}): StateOperatorProgress {
    return {
      operatorName: this.operatorName,
      numRowsTotal: m.numRowsTotal,
      numRowsUpdated: m.numRowsUpdated,
      numRowsRemoved: m.numRowsRemoved,
      numRowsDroppedByWatermark: m.numRowsDroppedByWatermark,
      memoryUsedBytes: m.memoryUsedBytes,
      numShufflePartitions: this.layout.partitions,
      numStateStoreInstances: this.layout.shards,
      commitTimeMs: m.commitTimeMs,
      customMetrics: { ...m.customMetrics, ...customMetrics },
    };
  }
}
