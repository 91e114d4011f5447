/**
 * Sluice: Spark Structured Streaming for Node.js. A {@link Session} reads streams
 * (`session.readStream`) and static data (`session.read`) into {@link DataFrame}s, whose
 * `writeStream` starts a {@link StreamingQuery}; {@link Column}s and the functions build
 * expressions, as in Spark.
 *
 * ```ts
 * import { Session, Trigger, col, count, window } from '@sluice/driver';
 *
 * const session = await Session.create({ conf: { 'sluice.sql.shuffle.partitions': 8 } });
 * const events = session.readStream.format('json').schema('t TIMESTAMP, id STRING').load('data/in');
 * const query = await events
 *   .withWatermark('t', '10 minutes')
 *   .groupBy(window('t', '5 minutes'), 'id')
 *   .agg(count('*').alias('n'))
 *   .writeStream.format('json').option('checkpointLocation', 'ckpt').outputMode('append')
 *   .trigger(Trigger.ProcessingTime('1 second'))
 *   .start('data/out');
 * ```
 *
 * @packageDocumentation
 */
export { Session, type SessionMetrics, type SessionOptions } from './api/Session.js';
export { DataFrame } from './api/DataFrame.js';
export { GroupedData } from './api/GroupedData.js';
export {
  AggregateColumn,
  count,
  sum,
  avg,
  mean,
  min,
  max,
  window,
  session_window,
  first,
  last,
  collect_list,
  collect_set,
  stddev,
  stddev_samp,
  stddev_pop,
  variance,
  var_samp,
  var_pop,
  min_by,
  max_by,
  count_if,
  bool_and,
  bool_or,
  every,
  some,
  approx_count_distinct,
  array_agg,
  first_value,
  last_value,
  any_value,
  std,
  any,
  percentile_approx,
  approx_percentile,
  percentile,
  median,
} from './api/aggregates.js';
export { DataStreamReader } from './api/DataStreamReader.js';
export { DataFrameReader, type StaticSourceFormat } from './api/DataFrameReader.js';
export { DataStreamWriter, type SinkFormat } from './api/DataStreamWriter.js';
export type { SourceFormat } from './sources/resolveSource.js';
export type { ForeachBatchFunction } from './sinks/ForeachBatchSink.js';
export { SqliteUpsert, type SqliteUpsertOptions } from './sinks/SqliteSink.js';
export { StreamingQuery } from './api/StreamingQuery.js';
export { StreamingQueryManager } from './api/StreamingQueryManager.js';
export { Trigger } from './api/Trigger.js';
export type { TriggerSpec, OutputMode } from './plan/QuerySpec.js';
export { Column, type ColumnOrLiteral, type Literal } from './api/Column.js';
export * from './api/functions.js';
export { MemoryStream } from './sources/MemoryStream.js';
export { RuntimeConf, CONF, type ConfValue, type ConfValues } from './conf/RuntimeConf.js';
export type { ConfKey } from '@sluice/state';
export type { OptionValue } from './conf/Options.js';
export type {
  StreamingQueryListener,
  QueryStartedEvent,
  QueryProgressEvent,
  QueryIdleEvent,
  QueryTerminatedEvent,
  EventKind,
} from './events/ListenerBus.js';
export type { StreamingQueryProgress, SourceProgress, StateOperatorProgress } from './events/progress.js';
export type { QueryStatus } from './execution/StreamExecution.js';
export type { PoolMetrics } from './scheduler/TaskScheduler.js';
export type { UIHandle, UIOptions } from './ui/UIServer.js';
export { SluiceError, isSluiceError } from '@sluice/state';
export type { ErrorCode, WorkerStateUsage } from '@sluice/state';
export { ManualClock } from './execution/clock.js';
export { GroupStateTimeout } from '@sluice/executor';
export type { GroupStateTimeoutConf, TimeMode } from '@sluice/executor';
export type { TransformWithStateOptions, GroupStateOptions } from './api/GroupedData.js';
// Rows and schemas; the executor's Field is Spark's StructField here.
export type { Row, Schema, DataType, AtomicType, StructType, ArrayType, MapType, Field as StructField } from '@sluice/executor';
// The API a stateful processor (transformWithState) or GroupState function is written against.
export type {
  StatefulProcessor,
  StatefulProcessorWithInitialState,
  StatefulProcessorHandle,
  ValueState,
  ListState,
  MapState,
  TimerValues,
  ExpiredTimerInfo,
  QueryInfo,
  StateSchema,
  TTLConfig,
  ProcessorOutput,
  GroupState,
  FlatMapGroupsWithStateFunction,
  MapGroupsWithStateFunction,
} from '@sluice/executor';
