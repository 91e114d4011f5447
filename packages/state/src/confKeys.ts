/**
 * Every conf key, in one place: the driver's conf table, the planner and the messages of every
 * package name keys from here, never by a string of their own. Keys are `sluice.*`; the same key
 * with `spark.` instead is an alias (the driver's RuntimeConf). docs/reference/conf.md
 * documents each one.
 */
export const CONF_KEYS = {
  executorCores: 'sluice.executor.cores',
  shufflePartitions: 'sluice.sql.shuffle.partitions',
  stateStorePartitions: 'sluice.sql.streaming.stateStore.partitions',
  stateStoreKeyGroups: 'sluice.sql.streaming.stateStore.keyGroups',
  stateStoreShards: 'sluice.sql.streaming.stateStore.shards',
  stateStoreMaxMemoryMB: 'sluice.sql.streaming.stateStore.maxMemoryMB',
  stateStoreMaxOpenFiles: 'sluice.sql.streaming.stateStore.maxOpenFiles',
  stateStoreChangelog: 'sluice.sql.streaming.stateStore.changelogCheckpointing.enabled',
  executorHeapMB: 'sluice.executor.heapMB',
  warehouseDir: 'sluice.sql.warehouse.dir',
  sourcesDefault: 'sluice.sql.sources.default',
  checkpointRoot: 'sluice.sql.streaming.checkpointLocation',
  adaptiveStatelessEnabled: 'sluice.sql.adaptive.streaming.stateless.enabled',
  advisoryPartitionSizeInBytes: 'sluice.sql.adaptive.advisoryPartitionSizeInBytes',
  autoBroadcastJoinThreshold: 'sluice.sql.autoBroadcastJoinThreshold',
  minBatchesToRetain: 'sluice.sql.streaming.minBatchesToRetain',
  multipleWatermarkPolicy: 'sluice.sql.streaming.multipleWatermarkPolicy',
  noDataMicroBatchesEnabled: 'sluice.sql.streaming.noDataMicroBatches.enabled',
  noDataProgressEventInterval: 'sluice.sql.streaming.noDataProgressEventInterval',
  pollingDelay: 'sluice.sql.streaming.pollingDelay',
  stopTimeout: 'sluice.sql.streaming.stopTimeout',
  fileSourceLogCompactInterval: 'sluice.sql.streaming.fileSource.log.compactInterval',
  schedulerMode: 'sluice.scheduler.mode',
  schedulerPools: 'sluice.scheduler.pools',
  listenerBusCapacity: 'sluice.scheduler.listenerbus.eventqueue.capacity',
  listenerBusCloseTimeout: 'sluice.scheduler.listenerbus.closeTimeout',
  uiEnabled: 'sluice.ui.enabled',
  uiPort: 'sluice.ui.port',
  taskMaxFailures: 'sluice.task.maxFailures',
} as const;

/**
 * A configuration key, as `session.conf` and `Session.create({ conf })` take it (each also has
 * a `spark.*` alias); docs/reference/conf.md says what each means.
 * @useDeclaredType
 */
export type ConfKey = (typeof CONF_KEYS)[keyof typeof CONF_KEYS];

/** Keys of local properties (session.setLocalProperty, as Spark's SparkContext): not conf keys. */
export const LOCAL_PROPERTY_KEYS = {
  schedulerPool: 'sluice.scheduler.pool',
} as const;
