export { SluiceError, isSluiceError, ERROR_CODES, WARNING_CODES, warn } from './errors.js';
export type { ErrorCode, SerializedError, SluiceErrorDetails, WarningCode } from './errors.js';
export { fault, faultWorkerData, workerFault } from './faults.js';
export { didYouMean, levenshtein, quoteId, suggest, MAX_SUGGESTIONS } from './suggestions.js';
export { CONF_KEYS, LOCAL_PROPERTY_KEYS, type ConfKey } from './confKeys.js';

export { murmur3_x86_32 } from './murmur3.js';
export { ByteBuffer } from './byteBuffer.js';
export { encodeKey, decodeKey, KeyWriter } from './keyEncoding.js';
export type { KeyType } from './keyEncoding.js';
export {
  KEY_HASH,
  MAX_KEY_GROUPS,
  PREFIX_META,
  PREFIX_DATA,
  PREFIX_INDEX,
  PREFIX_UNDO,
  META_KEY,
  validateLayout,
  keyGroupOf,
  partitionOfKeyGroup,
  keyGroupRange,
  shardOfPartition,
  contiguousAssignment,
  partitionsIn,
  isAssignmentOf,
  dataKey,
  decodeDataKey,
  indexKey,
  decodeIndexKey,
  indexKeyTime,
  dataKeyOf,
  indexRangeUpTo,
  indexRange,
  dataRange,
  keyGroupsDataRange,
  undoKey,
  batchIdOfUndoKey,
  undoRange,
} from './layout.js';
export type { ShardAssignment, StateLayout } from './layout.js';

export type { ShardStore, ShardChange, CommitBuilder, CommitResult, ShardOptions } from './ShardStore.js';
export {
  LevelShardStore,
  openLevelShard,
  validateShardOptions,
  LEVELDB_MIN_OPEN_FILES,
  LEVELDB_MIN_WRITE_BUFFER_BYTES,
  LEVELDB_MAX_WRITE_BUFFER_BYTES,
} from './LevelShardStore.js';
export { ShardRegistry, SHARD_FIXED_FILES } from './ShardRegistry.js';
export type { ShardOpener, WorkerBudget, WorkerStateUsage } from './ShardRegistry.js';
export { SHARD_FORMAT_VERSION } from './shardRecords.js';
export { DEDUP_VALUE_VERSION, decodeDedupValue, encodeDedupValue } from './dedupState.js';
export { asEnvironmentError, environmentError, openFilesLimit } from './environment.js';
export { createFileExclusive, fsyncDir, replaceFile, replaceFiles, tempPathOf, writeFileSynced } from './durableFile.js';
export type { FileData, Replacement } from './durableFile.js';
export { planRepartition, movesBetween } from './repartition.js';
export type { AssignedLayout, KeyGroupMove, RepartitionPlan } from './repartition.js';
export { copyKeyGroups, clearKeyGroups, rangeInChunks, type IndexTimeOf, type RowsIn } from './keyGroupMoves.js';
export type { CopyResult, CopyTarget, KeyGroupRange, KnownKeys } from './keyGroupMoves.js';
export {
  corruptStateValue,
  expectValueHeader,
  inShard,
  payloadStartOf,
  STATE_VALUE_MARK,
  valueHeader,
  valueHeaderBytes,
  ValueKind,
  valuePayloadStart,
  withValueHeader,
  writeValueHeader,
} from './stateValue.js';
export type { ValueHeader, ValueIndexTime } from './stateValue.js';
