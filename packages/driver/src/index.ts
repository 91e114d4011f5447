export { Session, type SessionMetrics, type SessionOptions } from './api/Session.js';
export { DataFrame, GroupedData } from './api/DataFrame.js';
export {
  AggregateColumn, count, sum, avg, mean, min, max, window, session_window, first, last, collect_list, collect_set, stddev, stddev_samp, stddev_pop,
  variance, var_samp, var_pop, min_by, max_by, count_if, bool_and, bool_or, every, some, approx_count_distinct, array_agg,
  first_value, last_value, any_value, std, any, percentile_approx, approx_percentile, percentile, median,
} from './api/aggregates.js';
export { DataStreamReader } from './api/DataStreamReader.js';
export { DataFrameReader } from './api/DataFrameReader.js';
export { DataStreamWriter } from './api/DataStreamWriter.js';
export { SqliteUpsert, type SqliteUpsertOptions } from './sinks/SqliteSink.js';
export { StreamingQuery } from './api/StreamingQuery.js';
export { StreamingQueryManager } from './api/StreamingQueryManager.js';
export { Trigger } from './api/Trigger.js';
export type { TriggerSpec } from './plan/QuerySpec.js';
export { Column } from './api/Column.js';
export * from './api/functions.js';
export { MemoryStream } from './sources/MemoryStream.js';
export { RuntimeConf, CONF } from './conf/RuntimeConf.js';
export type { OptionValue } from './conf/Options.js';
export type {
  StreamingQueryListener,
  QueryStartedEvent,
  QueryProgressEvent,
  QueryIdleEvent,
  QueryTerminatedEvent,
} from './events/ListenerBus.js';
export type { StreamingQueryProgress, SourceProgress, StateOperatorProgress } from './events/progress.js';
export type { QueryStatus } from './execution/StreamExecution.js';
export { SluiceError, isSluiceError } from '@sluice/state';
export { ManualClock } from './execution/clock.js';
export { GroupStateTimeout } from '@sluice/executor';
export type { TransformWithStateOptions, GroupStateOptions } from './api/DataFrame.js';
