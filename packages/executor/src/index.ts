/**
 * @sluice/executor's package entry: the engine library, what the driver (@sluice/driver) plans,
 * checks and reads with on its own thread. It holds the plan's types and the driver–worker
 * messages, schemas and values, expressions' types and names, the stateful operators' plan parts
 * (registry.ts's questions: a kind's names, output, watermark, and what a repartition needs of its
 * stored values), and the formats the driver reads and writes itself.
 *
 * What runs only in a worker thread (a task's stages, the map sides, the state task and every
 * kind's batch) is reached from the worker entry, `@sluice/executor/worker` (task/entry.cts), and
 * never from here: scripts/check-imports.mjs fails the build's test when this entry reaches a
 * worker-only module at runtime. An export here is one the driver uses.
 */

// ---- the plan, expressions, schemas and the driver–worker messages, as types -----------------------
export * from './schema/types.js';
export * from './expressions/types.js';
export * from './operators/types.js';
export * from './task/messages.js';

// ---- schemas and values -------------------------------------------------------------------------------
export { parseSchema, parseDataType, schemaToDDL } from './schema/schema.js';
export { isStructType, typeName } from './schema/typeKinds.js';
export { rowToExternal, rowToInternal, toInternal } from './schema/values.js';
export { parseDate, parseTimestamp } from './schema/timestamps.js';
export { datetimePatternProblem } from './schema/datetimePatterns.js';
export { addIntervals, formatInterval, intervalOf, intervalUnit, parseInterval, type Interval } from './schema/intervals.js';

// ---- expressions: their types, names and functions ------------------------------------------------------
export { exprName } from './expressions/exprNames.js';
export { expandStar } from './expressions/resolveColumn.js';
export { exprType, generatorFields, planOutputSchema } from './expressions/exprTypes.js';
export { walkExpr } from './expressions/exprTree.js';
export { functionArity } from './expressions/typeRules.js';
export { SCALAR_FUNCTIONS } from './expressions/scalarFunctions.js';
export { MATH_FUNCTIONS, type MathFunctionName } from './expressions/mathFunctions.js';
export type { StringFunctionName } from './expressions/stringFunctions.js';
export { COLLECTION_FUNCTIONS, type CollectionFunctionName } from './expressions/collectionFunctions.js';
export { DATETIME_FUNCTIONS, type DatetimeFunctionName } from './expressions/datetimeFunctions.js';
export { JSON_FUNCTIONS } from './expressions/jsonFunctions.js';
export { udfFailed } from './expressions/udfs.js';
export { syntaxError, tokenize, type Token } from './sql/sqlLexer.js';

// ---- stateful operators: the registry's plan questions ----------------------------------------------------
export {
  indexTimeOf,
  mapTaskCallsUdfs,
  operatorNamed,
  operatorOf,
  operatorUsesWatermark,
  rowsInOf,
  statefulOutputSchema,
} from './operators/registry.js';
export { sessionOfKey } from './operators/aggregates.js';
export { sessionKeyOf } from './operators/sessionWindow/plan.js';
// A join of two streams: the state bounds of its condition, each side's expiry.
export { conjuncts, lowerCaseNames, stateValueWatermark } from './expressions/joinBounds.js';
export { joinExpiry, splitJoinCondition, type StreamJoinOp } from './operators/join/plan.js';

// ---- stateful processors: the user's API, and what the driver declares and packs -------------------------
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
export { GROUP_STATE, GroupStateTimeout, timeModeOfTimeout, type GroupStateTimeoutConf } from './operators/processor/groupState.js';
export { declareVariables, loadProcessor, stateTypeOf } from './operators/processor/declare.js';
export { sameVariable } from './operators/processor/state.js';
export { packInitialState } from './operators/processor/plan.js';

// ---- what the driver sends to and reads from the workers ----------------------------------------------------
export { encodeRows, decodeRows } from './task/rowCodec.js';
export { broadcastRows } from './operators/broadcast.js';
export { partitionRows } from './shuffle/partitioner.js';

// ---- formats the driver reads and writes ---------------------------------------------------------------------
export { kDefaultReadOptions, withCorruptRecordColumn, validateReadSchema } from './formats/options.js';
export { inferJsonSchemaFromFiles } from './formats/inferJsonSchema.js';
export { PARTITION_TYPES, partitionValuesOf } from './formats/partitions.js';
export { PARQUET_COMPRESSIONS, parquetFileSchema, parquetRowGroupBytes, checkParquetWritable, readParquetRows, writeParquet } from './formats/parquet/index.js';
export { showString } from './formats/showString.js';
// NexmarkGenerator: also the reference the Nexmark tests and benchmarks check a query's rows against.
export { NexmarkGenerator, nexmarkSchema, type NexmarkConfig } from './formats/nexmark.js';
