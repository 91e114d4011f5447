export { Session, type SessionOptions } from './Session.js';
export { DataFrame, GroupedData } from './DataFrame.js';
export { AggregateColumn, count, sum, avg, mean, min, max, window } from './aggregates.js';
export { DataStreamReader, DataFrameReader } from './DataStreamReader.js';
export { DataStreamWriter } from './DataStreamWriter.js';
export { StreamingQuery } from './StreamingQuery.js';
export { StreamingQueryManager } from './StreamingQueryManager.js';
export { Trigger, type TriggerSpec } from './Trigger.js';
export { Column } from './Column.js';
export * from './functions.js';
export { MemoryStream } from './sources/MemoryStream.js';
export { RuntimeConf, CONF } from './conf.js';
export type { OptionValue } from './options.js';
export type {
  StreamingQueryListener,
  QueryStartedEvent,
  QueryProgressEvent,
  QueryIdleEvent,
  QueryTerminatedEvent,
} from './ListenerBus.js';
export type { StreamingQueryProgress, SourceProgress, StateOperatorProgress } from './ProgressReporter.js';
export type { QueryStatus } from './MicroBatchExecution.js';
export { SluiceError, isSluiceError } from '@sluice/state';
