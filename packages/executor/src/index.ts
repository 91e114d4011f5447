export * from './schema/types.js';
export * from './expressions/types.js';
export * from './operators/types.js';
export * from './task/messages.js';
export { encodeRows, decodeRows } from './task/rowCodec.js';
export { exprName } from './expressions/exprNames.js';
export { expandStar } from './expressions/resolveColumn.js';
export { exprType, generatorFields, planOutputSchema } from './expressions/exprTypes.js';
export { functionArity } from './expressions/typeRules.js';
export { expandsRows } from './operators/generate.js';
export { conjuncts, lowerCaseNames, stateValueWatermark, type JoinBoundSides } from './expressions/joinBounds.js';
export { COLLECTION_FUNCTIONS } from './expressions/collectionFunctions.js';
export { DATETIME_FUNCTIONS, type DatetimeFunctionName } from './expressions/datetimeFunctions.js';
export { JSON_FUNCTIONS, type JsonFunctionName } from './expressions/jsonFunctions.js';
export { createCast, isStructType, rowToExternal, rowToInternal, toExternal, toInternal, typeName } from './schema/values.js';
export { formatDate, parseDate, parseTimestamp } from './schema/timestamps.js';
export { datetimePatternProblem } from './schema/datetimePatterns.js';
export { addIntervals, formatInterval, intervalOf, intervalUnit, parseInterval, type Interval } from './schema/intervals.js';
export { parseSchema, parseDataType, schemaToDDL } from './schema/schema.js';
export { syntaxError, tokenize, tokenText, type LexerOptions, type Token } from './sql/sqlLexer.js';
export { readFileRecords } from './formats/readers.js';
export { PARTITION_TYPES, partitionValuesOf, partitionValue } from './formats/partitions.js';
export { NexmarkGenerator, nexmarkSchema, eventKind, eventTimestamp, eventsOfKindBefore, type NexmarkConfig, type NexmarkTable } from './formats/nexmark.js';
export { formatRecords } from './formats/writers.js';
export { prettyString, showString, showTimestamp, type ShowOptions } from './formats/showString.js';
export {
  PARQUET_COMPRESSIONS,
  parquetFileSchema,
  parquetRowGroupBytes,
  checkParquetWritable,
  readParquetFile,
  readParquetRows,
  writeParquet,
  type ParquetCompression,
} from './formats/parquet/index.js';
export { inferJsonSchema, inferJsonSchemaFromFiles } from './formats/inferJsonSchema.js';
export { kDefaultReadOptions, withCorruptRecordColumn, validateReadSchema } from './formats/options.js';
export { readInput } from './task/readInput.js';
export { WINDOW_TYPE } from './expressions/exprTypes.js';
export { windowsOf, lastWindowStart, type TimeWindow } from './expressions/windows.js';
export {
  aggregateOutputSchema,
  aggResultType,
  aggregatorOf,
  sessionOfKey,
  type AggBuffer,
  type Aggregator,
} from './operators/aggregates.js';
export { decodeBlock, encodeBlock, type AggregateRecord, type DedupRecord, type ShuffleRecord } from './shuffle/shuffleCodec.js';
export {
  indexTimeOf,
  kindOf,
  mapTaskCallsUdfs,
  operatorNamed,
  operatorOf,
  operatorUsesWatermark,
  rowsInOf,
  statefulOutputSchema,
} from './operators/registry.js';
export type { OperatorKind, StatefulOperator } from './operators/operator.js';
export { sessionKeyOf } from './operators/sessionWindow.js';
export { joinExpiry, joinOutputWatermark, splitJoinCondition, type StreamJoinOp } from './operators/join/plan.js';
export { broadcastRows } from './operators/join.js';
export { partitionRows, shufflePartition } from './shuffle/partitioner.js';
export { walkExpr } from './expressions/exprTree.js';
export { isScalarFunction, SCALAR_FUNCTIONS, type ScalarFunctionName } from './expressions/scalarFunctions.js';
export { MATH_FUNCTIONS, type MathFunctionName } from './expressions/mathFunctions.js';
export type { StringFunctionName } from './expressions/stringFunctions.js';
export type { CollectionFunctionName } from './expressions/collectionFunctions.js';
export { GROUP_STATE, GroupStateTimeout, timeModeOfTimeout, type GroupStateTimeoutConf } from './operators/processor/groupState.js';
export type {
  ExpiredTimerInfo,
  FlatMapGroupsWithStateFunction,
  GroupState,
  ListState,
  MapGroupsWithStateFunction,
  MapState,
  ProcessorOutput,
  QueryInfo,
  StatefulProcessor,
  StatefulProcessorHandle,
  StatefulProcessorWithInitialState,
  StateSchema,
  TimerValues,
  TTLConfig,
  ValueState,
} from './operators/processor/api.js';
export { declareVariables, loadProcessor, stateTypeOf } from './operators/processor/declare.js';
export { packInitialState } from './operators/processor/batch.js';
export { sameVariable } from './operators/processor/state.js';
export { udfFailed } from './expressions/udfs.js';
