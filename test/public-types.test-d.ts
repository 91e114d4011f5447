/**
 * The public types of @sluice/driver, as a TypeScript app sees them (dist/types, so run after a
 * build). Vitest type-checks this file (the 'types' project of vitest.config.ts) and counts each
 * `it` as a test; `pnpm run typecheck` checks it too. A `// @ts-expect-error` line pins that a
 * wrong use is refused: if it ever type-checks, the check fails.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  col,
  count,
  type DataFrame,
  type DataFrameReader,
  type DataStreamReader,
  type DataStreamWriter,
  type GroupedData,
  GroupStateTimeout,
  type ManualClock,
  Session,
  statefulProcessor,
  type StreamingQuery,
  type StreamingQueryManager,
  Trigger,
  window,
  type DataType,
  type ExpiredTimerInfo,
  type FlatMapGroupsWithStateFunction,
  type GroupState,
  type ListState,
  type MapState,
  type OptionValue,
  type OutputMode,
  type QueryIdleEvent,
  type QueryProgressEvent,
  type QueryStartedEvent,
  type QueryTerminatedEvent,
  type Row,
  type Schema,
  type SessionOptions,
  type SinkFormat,
  type SourceFormat,
  type StatefulProcessor,
  type StatefulProcessorHandle,
  type StatefulProcessorWithInitialState,
  type StaticSourceFormat,
  type StreamingQueryListener,
  type StreamingQueryProgress,
  type StructField,
  type TimeMode,
  type TimerValues,
  type TriggerSpec,
  type ValueState,
} from '@sluice/driver';

declare const session: Session;
declare const df: DataFrame;
/** Takes a T: a call whose argument is not one is a type error. */
declare function accepts<T>(value: T): void;

describe('Session', () => {
  it('create takes optional options with a conf and resolves to a Session', () => {
    expectTypeOf(Session.create).parameters.toEqualTypeOf<[options?: SessionOptions]>();
    expectTypeOf<SessionOptions>().toEqualTypeOf<{ conf?: Record<string, unknown> }>();
    expectTypeOf(Session.create).returns.toEqualTypeOf<Promise<Session>>();
    expectTypeOf(Session.create({ conf: { 'sluice.sql.shuffle.partitions': 4 } })).resolves.toEqualTypeOf<Session>();
  });

  it('has readers, the query manager and close', () => {
    expectTypeOf(session.readStream).toEqualTypeOf<DataStreamReader>();
    expectTypeOf(session.read).toEqualTypeOf<DataFrameReader>();
    expectTypeOf(session.streams).toEqualTypeOf<StreamingQueryManager>();
    expectTypeOf(session.close).returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf(session.sql('SELECT 1')).toEqualTypeOf<DataFrame>();
  });

  it('memoryTable resolves to the rows of a memory sink', () => {
    expectTypeOf(session.memoryTable).parameters.toEqualTypeOf<[name: string]>();
    expectTypeOf(session.memoryTable('agg')).resolves.toEqualTypeOf<Row[]>();
    expectTypeOf<Row>().toEqualTypeOf<Record<string, unknown>>();
  });
});

describe('readers', () => {
  it('readStream.format(...).schema(...).load() is a DataFrame', () => {
    const events = session.readStream.format('json').schema('t TIMESTAMP, id STRING').option('maxFilesPerTrigger', 10).load('in');
    expectTypeOf(events).toEqualTypeOf<DataFrame>();
    expectTypeOf(session.readStream.format('rate').option('rowsPerSecond', 5).load()).toEqualTypeOf<DataFrame>();
    expectTypeOf(session.read.format('parquet').load('dir').collect()).resolves.toEqualTypeOf<Row[]>();
  });

  it('format names the formats that exist and still takes any other name', () => {
    expectTypeOf<SourceFormat>().toEqualTypeOf<'json' | 'csv' | 'text' | 'parquet' | 'delta' | 'rate' | 'rate-micro-batch' | 'nexmark' | 'memory' | 'redis'>();
    expectTypeOf<StaticSourceFormat>().toEqualTypeOf<'json' | 'csv' | 'text' | 'parquet' | 'delta' | 'sqlite'>();
    expectTypeOf(session.readStream.format).parameter(0).toExtend<string>();
    expectTypeOf<SourceFormat>().toExtend<Parameters<DataStreamReader['format']>[0]>();
    expectTypeOf<StaticSourceFormat>().toExtend<Parameters<DataFrameReader['format']>[0]>();
    expectTypeOf(session.readStream.format('my-own-format')).toEqualTypeOf<DataStreamReader>();
  });

  it('schema takes DDL, an object or a Schema of StructFields', () => {
    const field: StructField = { name: 'id', type: 'string', nullable: true };
    const nested: DataType = { struct: [field] };
    expectTypeOf(session.readStream.schema([field, { name: 's', type: nested, nullable: false }])).toEqualTypeOf<DataStreamReader>();
    expectTypeOf(session.readStream.schema({ id: 'string' })).toEqualTypeOf<DataStreamReader>();
    expectTypeOf<Schema>().toEqualTypeOf<StructField[]>();
    // @ts-expect-error: a field needs its nullability
    accepts<StructField>({ name: 'id', type: 'string' });
  });

  it('option values are strings, numbers or booleans', () => {
    expectTypeOf<OptionValue>().toEqualTypeOf<string | number | boolean>();
    expectTypeOf(session.readStream.option).parameters.toEqualTypeOf<[key: string, value: OptionValue]>();
    // @ts-expect-error: an option value is no object
    session.readStream.option('path', { dir: 'in' });
  });
});

describe('writeStream', () => {
  it('the writer chain starts a query: Promise<StreamingQuery>', () => {
    const started = df.writeStream
      .format('json')
      .option('checkpointLocation', 'ckpt')
      .outputMode('append')
      .trigger(Trigger.ProcessingTime('1 second'))
      .queryName('q')
      .start('out');
    expectTypeOf(started).toEqualTypeOf<Promise<StreamingQuery>>();
    expectTypeOf(df.writeStream.format('delta').toTable('t')).toEqualTypeOf<Promise<StreamingQuery>>();
    expectTypeOf(df.writeStream).toEqualTypeOf<DataStreamWriter>();
  });

  it('outputMode is append, update or complete; another word is a type error', () => {
    expectTypeOf<OutputMode>().toEqualTypeOf<'append' | 'update' | 'complete'>();
    expectTypeOf(df.writeStream.outputMode).parameter(0).toEqualTypeOf<OutputMode>();
    // @ts-expect-error: 'upsert' is no output mode
    df.writeStream.outputMode('upsert');
    const mode: string = 'append';
    // @ts-expect-error: a plain string could be anything
    df.writeStream.outputMode(mode);
  });

  it('sink formats are named, and a custom name still type-checks', () => {
    expectTypeOf<SinkFormat>().toEqualTypeOf<'json' | 'csv' | 'parquet' | 'delta' | 'memory' | 'console' | 'foreachBatch' | 'sqlite' | 'noop'>();
    expectTypeOf<SinkFormat>().toExtend<Parameters<DataStreamWriter['format']>[0]>();
    expectTypeOf(df.writeStream.format('kafka')).toEqualTypeOf<DataStreamWriter>();
  });

  it('foreachBatch gets the batch rows and its id', () => {
    expectTypeOf(df.writeStream.foreachBatch).parameter(0).parameters.toEqualTypeOf<[rows: Row[], batchId: number]>();
  });
});

describe('Trigger', () => {
  it('factories build a TriggerSpec; trigger() takes only one', () => {
    expectTypeOf(Trigger.ProcessingTime).parameters.toEqualTypeOf<[interval: string | number]>();
    expectTypeOf(Trigger.ProcessingTime('1 second')).toEqualTypeOf<TriggerSpec>();
    expectTypeOf(Trigger.AvailableNow()).toEqualTypeOf<TriggerSpec>();
    expectTypeOf(Trigger.Once()).toEqualTypeOf<TriggerSpec>();
    expectTypeOf<TriggerSpec['kind']>().toEqualTypeOf<'ProcessingTime' | 'AvailableNow' | 'Once'>();
    expectTypeOf(df.writeStream.trigger).parameter(0).toEqualTypeOf<TriggerSpec>();
    expectTypeOf(df.writeStream.trigger).parameter(1).toEqualTypeOf<{ clock?: ManualClock } | undefined>();
    // @ts-expect-error: a trigger is built by Trigger, not a bare interval
    df.writeStream.trigger('1 second');
  });
});

describe('DataFrame', () => {
  it('collect() resolves to rows', () => {
    expectTypeOf(df.collect).returns.toEqualTypeOf<Promise<Row[]>>();
  });

  it('operators return DataFrames and groupBy a GroupedData', () => {
    expectTypeOf(df.withWatermark('t', '10 minutes').filter(col('v').gt(10)).select('id', col('v'))).toEqualTypeOf<DataFrame>();
    expectTypeOf(df.groupBy(window('t', '5 minutes'), 'id')).toEqualTypeOf<GroupedData>();
    expectTypeOf(df.groupBy('id').agg(count('*').alias('n'))).toEqualTypeOf<DataFrame>();
    expectTypeOf(df.columns).toEqualTypeOf<string[]>();
    expectTypeOf(df.isStreaming).toEqualTypeOf<boolean>();
  });

  it('transformWithState options are typed', () => {
    const processor = statefulProcessor(new URL('file:///p.mjs'), 'Counter');
    expectTypeOf(
      df.groupBy('id').transformWithState(processor, { outputSchema: 'id STRING, n LONG', outputMode: 'update', timeMode: 'eventTime' }),
    ).toEqualTypeOf<DataFrame>();
    // @ts-expect-error: transformWithState writes append or update only
    df.groupBy('id').transformWithState(processor, { outputSchema: 'id STRING', outputMode: 'complete' });
    expectTypeOf<TimeMode>().toEqualTypeOf<'none' | 'processingTime' | 'eventTime'>();
    expectTypeOf(
      df.groupBy('id').flatMapGroupsWithState(processor, {
        stateSchema: 'LONG',
        outputSchema: 'id STRING',
        outputMode: 'append',
        timeoutConf: GroupStateTimeout.EventTimeTimeout,
      }),
    ).toEqualTypeOf<DataFrame>();
  });
});

// A processor written in TypeScript, as a module of the app would export it.
interface Key {
  id: string;
}
interface In {
  id: string;
  v: number;
}
interface Out {
  id: string;
  total: number;
}

class RunningTotal implements StatefulProcessor<Key, In, Out> {
  private total!: ValueState<number>;
  private recent!: ListState<number>;
  private byHour!: MapState<string, number>;
  private handle!: StatefulProcessorHandle;

  init(handle: StatefulProcessorHandle, _outputMode: 'append' | 'update', _timeMode: TimeMode): void {
    this.handle = handle;
    this.total = handle.getValueState<number>('total', 'LONG', { ttlMs: 60_000 });
    this.recent = handle.getListState<number>('recent', 'DOUBLE');
    this.byHour = handle.getMapState<string, number>('byHour', 'STRING', 'LONG');
  }

  *handleInputRows(key: Key, rows: IterableIterator<In>, timers: TimerValues): Generator<Out> {
    let total = this.total.get() ?? 0;
    for (const row of rows) {
      total += row.v;
      this.recent.appendValue(row.v);
    }
    this.total.update(total);
    this.byHour.updateValue('00', (this.byHour.getValue('00') ?? 0) + 1);
    this.handle.registerTimer(timers.getCurrentProcessingTimeMs() + 60_000);
    yield { id: key.id, total };
  }

  handleExpiredTimer(key: Key, _timers: TimerValues, expired: ExpiredTimerInfo): Out[] {
    this.total.clear();
    return [{ id: key.id, total: -expired.getExpiryTimeInMs() }];
  }
}

describe('StatefulProcessor', () => {
  it('a TypeScript class implements it, with typed state variables', () => {
    expectTypeOf<RunningTotal>().toExtend<StatefulProcessor<Key, In, Out>>();
    const handle = {} as StatefulProcessorHandle;
    const total = handle.getValueState<number>('total', 'LONG');
    expectTypeOf(total.get()).toEqualTypeOf<number | null>();
    expectTypeOf(total.update).parameters.toEqualTypeOf<[newState: number]>();
    // @ts-expect-error: the state holds numbers
    total.update('three');
    expectTypeOf(handle.getListState<string>('l', 'STRING').get()).toEqualTypeOf<IterableIterator<string>>();
    const map = handle.getMapState<string, Date>('m', 'STRING', 'TIMESTAMP');
    expectTypeOf(map.iterator()).toEqualTypeOf<IterableIterator<[string, Date]>>();
    expectTypeOf(map.getValue('k')).toEqualTypeOf<Date | null>();
    expectTypeOf(handle.getValueState('untyped', 'LONG').get()).toEqualTypeOf<unknown>();
  });

  it('has exactly the state methods the runtime implements', () => {
    expectTypeOf<keyof ValueState<number>>().toEqualTypeOf<'exists' | 'get' | 'update' | 'clear'>();
    expectTypeOf<keyof ListState<number>>().toEqualTypeOf<'exists' | 'get' | 'put' | 'appendValue' | 'appendList' | 'clear'>();
    expectTypeOf<keyof MapState<string, number>>().toEqualTypeOf<
      'exists' | 'getValue' | 'containsKey' | 'updateValue' | 'iterator' | 'keys' | 'values' | 'removeKey' | 'clear'
    >();
    expectTypeOf<keyof StatefulProcessor>().toEqualTypeOf<'init' | 'handleInputRows' | 'handleExpiredTimer' | 'handleInitialState' | 'close'>();
  });

  it('handleInputRows is required; the others are optional', () => {
    // @ts-expect-error: a processor without handleInputRows
    accepts<StatefulProcessor>({ init() {} });
    accepts<StatefulProcessor>({ handleInputRows: () => [] });
    // @ts-expect-error: with an initial state, handleInitialState is required
    accepts<StatefulProcessorWithInitialState>({ handleInputRows: () => [] });
    accepts<StatefulProcessorWithInitialState<Key, In, Out, { id: string; total: number }>>({
      handleInputRows: () => [],
      handleInitialState: (key, row) => void [key.id, row.total],
    });
  });

  it('a GroupState function is typed by its state', () => {
    const fn: FlatMapGroupsWithStateFunction<Key, In, Out, number> = (key, rows, state) => {
      expectTypeOf(state).toEqualTypeOf<GroupState<number>>();
      expectTypeOf(state.getOption()).toEqualTypeOf<number | undefined>();
      state.update((state.getOption() ?? 0) + [...rows].length);
      state.setTimeoutDuration('10 minutes');
      return [{ id: key.id, total: state.get() }];
    };
    expectTypeOf(fn).returns.toEqualTypeOf<Iterable<Out>>();
  });
});

describe('StreamingQuery and progress', () => {
  it('a query exposes its progress, status and lifecycle', () => {
    const q = {} as StreamingQuery;
    expectTypeOf(q.lastProgress).toEqualTypeOf<StreamingQueryProgress | null>();
    expectTypeOf(q.recentProgress).toEqualTypeOf<StreamingQueryProgress[]>();
    expectTypeOf(q.status).toEqualTypeOf<{ message: string; isDataAvailable: boolean; isTriggerActive: boolean }>();
    expectTypeOf(q.awaitTermination).parameters.toEqualTypeOf<[timeoutMs?: number]>();
    expectTypeOf(q.awaitTermination()).resolves.toEqualTypeOf<boolean>();
    expectTypeOf(q.processAllAvailable()).resolves.toEqualTypeOf<void>();
    expectTypeOf(q.stop()).resolves.toEqualTypeOf<void>();
    expectTypeOf(q.id).toEqualTypeOf<string>();
  });

  it('StreamingQueryProgress has the fields of Spark JSON', () => {
    type SparkFields =
      | 'id'
      | 'runId'
      | 'name'
      | 'timestamp'
      | 'batchId'
      | 'batchDuration'
      | 'numInputRows'
      | 'inputRowsPerSecond'
      | 'processedRowsPerSecond'
      | 'durationMs'
      | 'eventTime'
      | 'sink';
    expectTypeOf<Pick<StreamingQueryProgress, SparkFields>>().toEqualTypeOf<{
      id: string;
      runId: string;
      name: string | null;
      timestamp: string;
      batchId: number;
      batchDuration: number;
      numInputRows: number;
      inputRowsPerSecond: number;
      processedRowsPerSecond: number;
      durationMs: Record<string, number>;
      eventTime: Record<string, string>;
      sink: { description: string; numOutputRows: number };
    }>();
    expectTypeOf<StreamingQueryProgress['stateOperators'][number]>().toEqualTypeOf<{
      operatorName: string;
      numRowsTotal: number;
      numRowsUpdated: number;
      numRowsRemoved: number;
      numRowsDroppedByWatermark: number;
      memoryUsedBytes: number;
      numShufflePartitions: number;
      numStateStoreInstances: number;
      commitTimeMs: number;
      customMetrics: Record<string, number>;
    }>();
    expectTypeOf<Omit<StreamingQueryProgress['sources'][number], 'metrics'>>().toEqualTypeOf<{
      description: string;
      startOffset: unknown;
      endOffset: unknown;
      latestOffset: unknown;
      numInputRows: number;
      inputRowsPerSecond: number;
      processedRowsPerSecond: number;
    }>();
  });

  it('a listener has any of four methods, each with its event', () => {
    expectTypeOf<StreamingQueryListener>().toEqualTypeOf<{
      onQueryStarted?(event: QueryStartedEvent): unknown;
      onQueryProgress?(event: QueryProgressEvent): unknown;
      onQueryIdle?(event: QueryIdleEvent): unknown;
      onQueryTerminated?(event: QueryTerminatedEvent): unknown;
    }>();
    expectTypeOf<QueryProgressEvent['progress']>().toEqualTypeOf<StreamingQueryProgress>();
    expectTypeOf<QueryTerminatedEvent>().toEqualTypeOf<{
      id: string;
      runId: string;
      exception: string | null;
      errorClassOnException: string | null;
      error: Error | null;
    }>();
    session.streams.addListener({
      onQueryProgress: (e) => expectTypeOf(e.progress.batchId).toEqualTypeOf<number>(),
      onQueryTerminated: async (e) => expectTypeOf(e.runId).toEqualTypeOf<string>(),
    });
    // @ts-expect-error: no such event
    session.streams.addListener({ onQueryFailed: () => {} });
  });
});
