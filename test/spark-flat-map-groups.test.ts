/**
 * Spark's flatMapGroupsWithState / mapGroupsWithState scenarios (FlatMapGroupsWithStateSuite.scala,
 * GroupStateSuite.scala), with Spark's inputs and expected outputs, run against Sluice's GroupState
 * operator. Each `it` keeps the Spark test's name. The user functions are in
 * fixtures/group-functions.mjs (Spark's in-function asserts included: a failed one fails the query).
 *
 * Ported:
 * - FlatMapGroupsWithStateSuite: the 41 "InputProcessor - process new data - ..." and the 12
 *   "InputProcessor - process timed out state - ..." tests (as queries, below); "flatMapGroupsWithState
 *   - streaming", "... - streaming + func returns iterator that updates state lazily", "... - streaming
 *   with processing time timeout", "... - streaming w/ event time timeout + watermark", the two
 *   [SPARK-49474] tests, "mapGroupsWithState - streaming", SPARK-35896, "StateStore.abort on task
 *   failure handling", "disallow complete mode" (its Scala-API half), SPARK-38320 and both SPARK-20714
 *   tests.
 * - GroupStateSuite: "get, exists, update, remove", the three "setTimeout - with ..." tests,
 *   "illegal params to setTimeout", "hasTimedOut", "getCurrentWatermarkMs",
 *   "getCurrentProcessingTimeMs" and "primitive type", their streaming halves, through queries.
 * - UnsupportedOperationsSuite: its [flat]MapGroupsWithState cases that Spark refuses with the
 *   correctness check on or off (see the last describe).
 *
 * How Spark's StreamTest actions are read here (sparkStreamTest.ts):
 * - AddData(input, "a", ...): rows of column `value STRING`; tuples are rows of named columns.
 * - CheckNewAnswer(rows): the rows written since the last check, as a multiset (complete mode: the
 *   whole result). StopStream + StartStream(): t.restart(), the same checkpoint and sink.
 * - StartStream(ProcessingTime("1 second"), triggerClock = StreamManualClock): a ManualClock at 0;
 *   AdvanceManualClock(ms): t.advance(ms), which waits for the triggers it made due.
 * - assertNumStateRows(total, updated[, droppedByWatermark, removed]): StateStoreMetricsTest's
 *   reading of progress: total is numRowsTotal of the last progress; updated, droppedByWatermark
 *   and removed are sums over the progresses since the last metric assertion (the count restarts
 *   with each run of the query). Only the Seq form of Spark's helper checks removed; so here.
 * - ExpectFailure[FlatMapGroupsWithStateUserFuncException]: the query fails with UDF_FAILED, the
 *   user's error its cause (Sluice's classification of errors thrown by user code).
 * - Spark's UnsupportedOperationException / IllegalArgumentException from GroupState misuse:
 *   Sluice's SluiceError STATEFUL_PROCESSOR_INVALID_OPERATION (message fragments checked where
 *   Spark checks a message).
 *
 * Adaptations:
 * - testWithAllStateVersions runs each scenario once per state format version; Sluice has one
 *   state layout, so each runs once.
 * - Spark's RunningCount(count) state is the struct `count LONG`; Spark's Int/Long states are LONG.
 * - "StateStore.abort on task failure handling": Spark's failInTask is a driver-side variable the
 *   function reads; Sluice's workers cannot share one, so the rows carry a marker file path (column
 *   failMarker) and the function fails while that file exists.
 * - SPARK-38320: groupByKey(_ => 0) is a constant column k = 0; the console sink is the memory sink.
 * - SPARK-35896: Spark's numStateStoreInstances (one state store per shuffle partition in Spark)
 *   is a Spark layout detail and is not asserted; operatorName and numShufflePartitions are.
 * - The InputProcessor tests (Spark drives InputProcessor.processNewData / processTimedOutState on
 *   a hand-built exec) run as queries of one key on a manual clock: a first batch (at 1000) sets the
 *   prior state and timeout by calling the function, the test batch runs the case's state updates,
 *   and the resulting state and timeout are read back: the timeout by moving the clock (or the
 *   watermark) to just before and just after it, the state by a last call with a probe row. Each
 *   call reports what it saw (exists, state value, hasTimedOut, number of rows, processing time,
 *   watermark), and the test batch's numRowsTotal / numRowsUpdated / numRowsRemoved are asserted
 *   by Spark's onIteratorCompletion rule. Times are shifted from Spark's (batch timestamp 1000):
 *   the new-data test batch runs at 3000 (a processing-time timeout of 5000 ends at 8000, where
 *   Spark's ends at 6000; the prior timeout is the batch time, as in Spark), the timed-out test
 *   batch at 2000 (prior timeouts 1999 / 2001 for Spark's 999 / 1001). Event-time cases keep
 *   Spark's numbers: the watermark (delay 0) is 1000 in the test batch. Spark's
 *   watermarkPresent = false cannot be had with EventTimeTimeout in Sluice (it needs a watermark),
 *   so event-time calls report the watermark instead of failing to get it.
 * - GroupStateSuite tests the GroupState object through TestGroupState; here its calls run inside a
 *   query's function (fixture groupStateScript), each call's outcome emitted as a row. What Spark
 *   reads through getTimeoutTimestampMs / isUpdated / isRemoved (not public in Sluice) is seen
 *   only through the timeout a script leaves (when the key times out) and the state the next batch
 *   sees.
 * - UnsupportedOperationsSuite's [flat]MapGroupsWithState cases that are refused whatever the
 *   correctness check says run as queries built and started: the refusal (at build or at start())
 *   has Sluice's code and holds Spark's message fragments. Spark's plan for the aggregation cases
 *   (Aggregate(Seq(attributeWithWatermark), ...)) is a count grouped by a watermarked column.
 * - On a manual clock, GroupsTest.start also waits for the query to join the clock (see there).
 *
 * Not ported, and why:
 * - Batch-mode tests ("flatMapGroupsWithState - batch", "mapGroupsWithState - batch", and the batch
 *   GroupState variants of GroupStateSuite): Sluice runs stateful operators on streaming DataFrames
 *   only.
 * - "SPARK-29438: ensure UNION doesn't lead (flat)MapGroupsWithState to use shifted partition IDs":
 *   about Spark's TaskContext.partitionId under UNION.
 * - "output partitioning is unknown": a physical-plan assertion (UnknownPartitioning).
 * - "uses state format version 2 by default", "recovery from checkpoint uses state format version 1":
 *   Spark's state formats and a checkpoint written by Spark 2.3.1.
 * - "SPARK-49070: flatMapGroupsWithStateExec - valid initial state plan": a physical-plan assertion
 *   on the initial state.
 * - FlatMapGroupsWithStateWithInitialStateSuite: ported in flat-map-groups-initial-state.test.ts.
 * - GroupStateSuite "SPARK-35800: illegal params to create" and "SPARK-35800: ensure TestGroupState
 *   creates instances the same as prod": tests of Spark's GroupState factories, which have no
 *   Sluice counterpart (a GroupState is made by the engine only).
 * - "flatMapGroupsWithState - streaming + aggregation": Spark runs it with
 *   spark.sql.streaming.statefulOperator.checkCorrectness.enabled = false (testWithAllStateVersions);
 *   with the check on (Spark's default) an aggregation after flatMapGroupsWithState in Complete
 *   mode is refused, and Sluice, which has no such switch, refuses it as Spark's default does
 *   ("multiple stateful operators ... are supported in Append output mode only").
 * - RocksDBStateStoreFlatMapGroupsWithStateSuite: the same suite on another state store provider.
 * - UnsupportedOperationsSuite: the batch-relation cases (no batch stateful operators in Sluice),
 *   the cases supported only with the correctness check off (no such switch in Sluice), and the
 *   global-watermark-limit cases (plans of several stateful operators, not about this operator's
 *   own rules).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  col,
  GroupStateTimeout,
  lit,
  ManualClock,
  statefulProcessor,
  timestamp_seconds,
  type DataFrame,
  type GroupedData,
  type MemoryStream,
  type Session,
  type StateOperatorProgress,
  type StreamingQueryProgress,
} from '@sluice/driver';
import { removeTempDirs, tempDir, waitUntil, withSession } from './helpers.js';
import { addTuples, memoryStream, runSparkTest, SPARK_TEST_CONF, SparkStreamTest, type Values } from './sparkStreamTest.js';

afterAll(removeTempDirs);

type Mode = 'append' | 'complete' | 'update';
type Timeout = (typeof GroupStateTimeout)[keyof typeof GroupStateTimeout];
const { NoTimeout, ProcessingTimeTimeout, EventTimeTimeout } = GroupStateTimeout;

const FUNCTIONS = new URL('./fixtures/group-functions.mjs', import.meta.url);
const fn = (name: string) => statefulProcessor(FUNCTIONS, name);

const INVALID = 'STATEFUL_PROCESSOR_INVALID_OPERATION';
const THROWS = `throws ${INVALID}`;

interface StateRows {
  total: number;
  updated: number;
  droppedByWatermark?: number;
  removed?: number;
}

/** Spark's StreamTest actions, and StateStoreMetricsTest's state assertions (see the file comment). */
class GroupsTest extends SparkStreamTest {
  /** recentProgress index of the last metric assertion, in this run. */
  private checkedProgress = -1;

  constructor(
    s: Session,
    df: DataFrame,
    mode: Mode,
    readonly manualClock?: ManualClock,
  ) {
    super(s, df, mode, manualClock);
  }

  protected override started(): void {
    this.checkedProgress = -1;
  }

  /**
   * StartStream. On a manual clock, SparkStreamTest.start waits for the query to wait on the clock,
   * but the query joins the clock only after it has read its static sides, which may be after
   * start() returns: then nothing waits yet, and a later AdvanceManualClock would not wait for the
   * first trigger. So this waits for the trigger loop to have begun first.
   */
  override async start(): Promise<this> {
    await super.start();
    if (this.manualClock) {
      await waitUntil(() => this.query.status.message !== 'Initializing sources' || this.query.exception !== null, 'the query to join its clock');
      await this.manualClock.allWaiting();
    }
    return this;
  }

  /** The progresses since the last check, of as many state operators as the last one has. */
  private progressesSinceLastCheck(): StreamingQueryProgress[] {
    const recent = this.query.recentProgress;
    const last = recent[recent.length - 1];
    const since = recent.slice(this.checkedProgress + 1).filter((p) => p.stateOperators.length === last?.stateOperators.length);
    this.checkedProgress = recent.length - 1;
    return since;
  }

  /** Forgets the progresses so far (the next assertion sums from here). */
  markChecked(): void {
    this.progressesSinceLastCheck();
  }

  /** assertNumStateRows of StateStoreMetricsTest. */
  async assertNumStateRows({ total, updated, droppedByWatermark = 0, removed }: StateRows): Promise<void> {
    await this.processAll();
    const last = this.query.lastProgress?.stateOperators[0];
    const since = this.progressesSinceLastCheck();
    const sum = (f: (o: StateOperatorProgress) => number) => since.reduce((acc, p) => acc + f(p.stateOperators[0] as StateOperatorProgress), 0);
    const got: StateRows = {
      total: last?.numRowsTotal ?? Number.NaN,
      updated: sum((o) => o.numRowsUpdated),
      droppedByWatermark: sum((o) => o.numRowsDroppedByWatermark),
      ...(removed !== undefined && { removed: sum((o) => o.numRowsRemoved) }),
    };
    expect(got, `assertNumStateRows; progress: ${this.trace()}`).toEqual({ total, updated, droppedByWatermark, ...(removed !== undefined && { removed }) });
  }

  /** assertStateOperatorProgressMetric(operatorName, numShufflePartitions, _) (see the file comment). */
  async assertStateOperatorProgressMetric(operatorName: string, numShufflePartitions: number): Promise<StreamingQueryProgress[]> {
    await this.processAll();
    const since = this.progressesSinceLastCheck();
    const last = since[since.length - 1]?.stateOperators[0];
    expect({ operatorName: last?.operatorName, numShufflePartitions: last?.numShufflePartitions }).toEqual({ operatorName, numShufflePartitions });
    return since;
  }

  /** ExpectFailure: the query fails; its error. */
  async expectFailure(): Promise<Error & { code?: string; cause?: unknown }> {
    const err = await this.query.processAllAvailable().then(
      () => this.query.exception,
      (e: unknown) => e as Error,
    );
    expect(err, 'the query should have failed').toBeInstanceOf(Error);
    return err as Error & { code?: string };
  }
}

interface StreamOptions {
  clock?: ManualClock;
  conf?: Record<string, unknown>;
}

/** testStream(df, mode): the query started on a fresh session, stopped at the end. */
const testStream = (df: (s: Session) => DataFrame, mode: Mode, body: (t: GroupsTest) => Promise<void>, opts: StreamOptions = {}): Promise<void> =>
  runSparkTest((s, d) => new GroupsTest(s, d, mode, opts.clock), df, body, opts.conf);

/** AddData(input, "a", "b", ...) of a MemoryStream[String]. */
const addData = (m: MemoryStream, ...values: string[]): number => m.addData(values.map((value) => ({ value })));

/** A MemoryStream[String] (column `value`). */
const stringStream = (s: Session): [MemoryStream, DataFrame] => memoryStream(s, 'value STRING');

/** The streaming result of `f` over a MemoryStream[String] grouped by the value (Spark's groupByKey(x => x)); `set` gets the stream. */
function overStrings(set: (m: MemoryStream) => void, f: (grouped: GroupedData) => DataFrame): (s: Session) => DataFrame {
  return (s) => {
    const [m, df] = stringStream(s);
    set(m);
    return f(df.groupBy('value'));
  };
}

const COUNT_OUT = 'key STRING, count STRING';

// ---- FlatMapGroupsWithStateSuite: InputProcessor tests ------------------------------------------

type Step = ['update', number] | ['remove'] | ['duration', number] | ['timestamp', number] | ['timestampRejected', number];

interface Plan {
  prime: Step[];
  test?: Step[];
  timeout?: Step[];
  timeoutAt?: number;
}

/** A prior of the new-data tests: what the first batch leaves (Spark's priorState, priorTimeoutTimestamp). */
interface Prior {
  name: string;
  state: number | null;
  /** The first batch sets a timeout ending at the test batch (Spark's prior timeout 1000 = its batch timestamp). */
  timeout: boolean;
}

const NO_PRIOR: Prior = { name: 'no prior state', state: null, timeout: false };
const PRIOR_STATE: Prior = { name: 'prior state set, no prior timeout', state: 0, timeout: false };
const PRIOR_BOTH: Prior = { name: 'prior state set, prior timeout set', state: 0, timeout: true };

const NEW_DATA_AT = 3000;
const TIMED_OUT_AT = 2000;
/** Spark's currentBatchWatermark, the event-time test batches' watermark. */
const WATERMARK = 1000;

function primeSteps(prior: Prior, conf: Timeout): Step[] {
  const steps: Step[] = prior.state === null ? [] : [['update', prior.state]];
  if (prior.timeout) steps.push(conf === ProcessingTimeTimeout ? ['duration', NEW_DATA_AT - 1000] : ['timestamp', WATERMARK]);
  return steps;
}

/**
 * What the test batch's metrics are by Spark's onIteratorCompletion: a remove() with no new
 * timeout deletes the row (removed); else the row is written (updated) when the state was updated
 * or removed, or its timeout changed; numRowsTotal counts the rows left, null-state rows with a
 * timeout included.
 */
function sparkCounts(prior: { state: number | null; timeout: boolean }, steps: Step[], state: number | null, timeout: number): StateRows {
  const lastChange = steps.filter((s) => s[0] === 'update' || s[0] === 'remove').at(-1)?.[0];
  const newTimeout = timeout !== -1;
  if (lastChange === 'remove' && !newTimeout) return { total: 0, updated: 0, removed: 1 };
  const written = lastChange !== undefined || prior.timeout !== newTimeout || (prior.timeout && newTimeout);
  return { total: state !== null || newTimeout ? 1 : 0, updated: written ? 1 : 0, removed: 0 };
}

/** One InputProcessor case: a query of one key (the plan, as JSON), on a manual clock. */
class ProbeRun {
  /** The greatest event time added (event-time queries: the watermark once a batch has run after it). */
  private maxTime = 0;

  constructor(
    readonly t: GroupsTest,
    readonly input: MemoryStream,
    readonly key: string,
    readonly conf: Timeout,
  ) {}

  get clock(): ManualClock {
    return this.t.manualClock as ManualClock;
  }

  /** Adds a row (for the next batch). */
  add(k: string, op: string, time: number): void {
    this.maxTime = Math.max(this.maxTime, time);
    this.input.addData([{ k, op, time }]);
  }

  /** A row for the key, in a batch of its own at the next trigger; the watermark it sees. */
  async row(op: 'prime' | 'test' | 'probe', time = this.maxTime + 1000): Promise<number | null> {
    const wm = this.conf === EventTimeTimeout ? this.maxTime : null;
    this.add(this.key, op, time);
    await this.t.advance(1000);
    return wm;
  }

  /** Event time: a row of another key at `time`, and the no-data batch that moves the watermark to it. */
  async tick(time: number): Promise<void> {
    this.add('tick', 'tick', time);
    await this.t.advance(1000);
    await this.t.advance(1000);
  }

  /** What a call emits: [exists, state, hasTimedOut, rows, processing time, watermark]. */
  seen(state: number | null, timedOut: boolean, rows: number, watermark: number | null): Values {
    return [state !== null, state, timedOut, rows, this.clock.now(), watermark];
  }

  /** The timeout left is `timeout` (-1: none): the key times out just after it, not at it. */
  async checkTimeout(timeout: number, state: number | null): Promise<void> {
    if (this.conf === NoTimeout) return;
    if (this.conf === ProcessingTimeTimeout) {
      if (timeout === -1) {
        await this.t.advance(100_000);
        await this.t.checkNewAnswer();
        return;
      }
      await this.t.advance(timeout - this.clock.now());
      await this.t.checkNewAnswer();
      await this.t.advance(1000);
      await this.t.checkNewAnswer(this.seen(state, true, 0, null));
      return;
    }
    if (timeout === -1) {
      await this.tick(1_000_000);
      await this.t.checkNewAnswer();
      return;
    }
    await this.tick(timeout);
    await this.t.checkNewAnswer();
    await this.tick(timeout + 1);
    await this.t.checkNewAnswer(this.seen(state, true, 0, timeout + 1));
  }

  /** The state left is `state`: a probe row's call sees it. */
  async checkState(state: number | null): Promise<void> {
    const wm = await this.row('probe');
    await this.t.checkNewAnswer(this.seen(state, false, 1, wm));
  }
}

const PROBE_OUT = 'exists BOOLEAN, state LONG, timedOut BOOLEAN, rows INT, procTime LONG, watermark LONG';

/** Runs `body` over a query of inputProcessorProbe keyed by `plan`, under `conf`, on a manual clock. */
function probeQuery(conf: Timeout, plan: Plan, body: (run: ProbeRun) => Promise<void>): Promise<void> {
  let input!: MemoryStream;
  const clock = new ManualClock();
  return testStream(
    (s) => {
      const [m, df] = memoryStream(s, 'k STRING, op STRING, time TIMESTAMP');
      input = m;
      return (conf === EventTimeTimeout ? df.withWatermark('time', '0 seconds') : df)
        .groupBy('k')
        .flatMapGroupsWithState(fn('inputProcessorProbe'), { outputMode: 'update', timeoutConf: conf, stateSchema: 'LONG', outputSchema: PROBE_OUT });
    },
    'update',
    (t) => body(new ProbeRun(t, input, JSON.stringify(plan), conf)),
    { clock },
  );
}

interface NewDataCase {
  conf: Timeout;
  prior: Prior;
  name: string;
  test: Step[];
  state: number | null;
  timeout: number;
}

/** Spark's process-new-data table (the timeouts shifted: see the file comment). */
function newDataCases(): NewDataCase[] {
  const cases: NewDataCase[] = [];
  const push = (conf: Timeout, prior: Prior, name: string, test: Step[], state: number | null, timeout: number) =>
    cases.push({ conf, prior, name, test, state, timeout });
  for (const conf of [NoTimeout, ProcessingTimeTimeout, EventTimeTimeout]) {
    for (const prior of conf === NoTimeout ? [NO_PRIOR, PRIOR_STATE] : [NO_PRIOR, PRIOR_STATE, PRIOR_BOTH]) {
      push(conf, prior, 'no update', [], prior.state, -1);
      push(conf, prior, 'state updated', [['update', 5]], 5, -1);
      push(conf, prior, 'state removed', [['remove']], null, -1);
    }
  }
  const pt = ProcessingTimeTimeout;
  const ptTimeout = NEW_DATA_AT + 5000;
  push(pt, NO_PRIOR, 'timeout updated without initializing state', [['duration', 5000]], null, ptTimeout);
  for (const prior of [NO_PRIOR, PRIOR_STATE, PRIOR_BOTH])
    push(
      pt,
      prior,
      'state and timeout duration updated',
      [
        ['update', 5],
        ['duration', 5000],
      ],
      5,
      ptTimeout,
    );
  for (const prior of [NO_PRIOR, PRIOR_STATE, PRIOR_BOTH])
    push(pt, prior, 'timeout updated after state removed', [['remove'], ['duration', 5000]], null, ptTimeout);
  const et = EventTimeTimeout;
  push(et, NO_PRIOR, 'setting timeout without init state not allowed', [['timestamp', 10000]], null, 10000);
  for (const prior of [NO_PRIOR, PRIOR_STATE, PRIOR_BOTH])
    push(
      et,
      prior,
      'state and timeout timestamp updated',
      [
        ['update', 5],
        ['timestamp', 5000],
      ],
      5,
      5000,
    );
  for (const prior of [NO_PRIOR, PRIOR_STATE, PRIOR_BOTH])
    push(
      et,
      prior,
      'timeout timestamp updated to before watermark',
      [
        ['update', 5],
        ['timestampRejected', 999],
      ],
      5,
      -1,
    );
  for (const prior of [NO_PRIOR, PRIOR_STATE, PRIOR_BOTH])
    push(et, prior, 'setting timeout with state removal not allowed', [['remove'], ['timestamp', 10000]], null, 10000);
  return cases;
}

describe('FlatMapGroupsWithStateSuite: InputProcessor - process new data', () => {
  for (const c of newDataCases()) {
    it(`InputProcessor - process new data - ${c.conf} - ${c.prior.name} - ${c.name}`, async () => {
      const plan: Plan = { prime: primeSteps(c.prior, c.conf), test: c.test };
      await probeQuery(c.conf, plan, async (run) => {
        // The batch at 1000 sets the prior state (and timeout); for event time, a row at 1000 makes the test batch's watermark 1000.
        if (c.conf === EventTimeTimeout) run.add('tick', 'tick', WATERMARK);
        if (plan.prime.length > 0) await run.row('prime', WATERMARK);
        else await run.t.advance(1000);
        await run.t.advance(1000);
        await run.t.checkNewAnswer();
        run.t.markChecked();

        // The test batch, at 3000: the call sees the prior state, no timeout, one row.
        const wm = await run.row('test', WATERMARK + 500);
        expect(run.clock.now()).toBe(NEW_DATA_AT);
        await run.t.checkNewAnswer(run.seen(c.prior.state, false, 1, wm));
        await run.t.assertNumStateRows(sparkCounts(c.prior, c.test, c.state, c.timeout));

        await run.checkTimeout(c.timeout, c.state);
        await run.checkState(c.state);
      });
    });
  }
});

interface TimedOutCase {
  conf: Timeout;
  name: string;
  /** The prior timeout: just before the test batch's threshold, or just after it (Spark's 999 / 1001). */
  fires: boolean;
  timeout: Step[];
  state: number | null;
  after: number;
}

/** Spark's process-timed-out-state table (prior state 5; the timeouts shifted: see the file comment). */
function timedOutCases(): TimedOutCase[] {
  const cases: TimedOutCase[] = [];
  for (const conf of [ProcessingTimeTimeout, EventTimeTimeout]) {
    const notYet = conf === ProcessingTimeTimeout ? TIMED_OUT_AT + 1 : WATERMARK + 1;
    cases.push({ conf, name: 'should not timeout', fires: false, timeout: [], state: 5, after: notYet });
    cases.push({ conf, name: 'should timeout - no update/remove', fires: true, timeout: [], state: 5, after: -1 });
    cases.push({ conf, name: 'should timeout - update state', fires: true, timeout: [['update', 5]], state: 5, after: -1 });
    cases.push({ conf, name: 'should timeout - remove state', fires: true, timeout: [['remove']], state: null, after: -1 });
  }
  const ptAfter = TIMED_OUT_AT + 2000;
  cases.push({
    conf: ProcessingTimeTimeout,
    name: 'should timeout - timeout duration updated',
    fires: true,
    timeout: [['duration', 2000]],
    state: 5,
    after: ptAfter,
  });
  cases.push({
    conf: ProcessingTimeTimeout,
    name: 'should timeout - timeout duration and state updated',
    fires: true,
    timeout: [
      ['update', 5],
      ['duration', 2000],
    ],
    state: 5,
    after: ptAfter,
  });
  cases.push({
    conf: EventTimeTimeout,
    name: 'should timeout - timeout timestamp updated',
    fires: true,
    timeout: [['timestamp', 5000]],
    state: 5,
    after: 5000,
  });
  cases.push({
    conf: EventTimeTimeout,
    name: 'should timeout - timeout and state updated',
    fires: true,
    timeout: [
      ['update', 5],
      ['timestamp', 5000],
    ],
    state: 5,
    after: 5000,
  });
  return cases;
}

describe('FlatMapGroupsWithStateSuite: InputProcessor - process timed out state', () => {
  for (const c of timedOutCases()) {
    it(`InputProcessor - process timed out state - ${c.conf} - ${c.name}`, async () => {
      const pt = c.conf === ProcessingTimeTimeout;
      const prior: Step = pt ? ['duration', TIMED_OUT_AT - 1000 + (c.fires ? -1 : 1)] : ['timestamp', WATERMARK + (c.fires ? -1 : 1)];
      const plan: Plan = { prime: [['update', 5], prior], timeout: c.timeout, timeoutAt: TIMED_OUT_AT };
      await probeQuery(c.conf, plan, async (run) => {
        // The batch at 1000 sets state 5 and the prior timeout (event time: and moves the watermark to 1000).
        await run.row('prime', WATERMARK);
        await run.t.checkNewAnswer();
        run.t.markChecked();

        // The batch at 2000 (event time: the no-data batch at watermark 1000) times the key out, or not.
        await run.t.advance(1000);
        expect(run.clock.now()).toBe(TIMED_OUT_AT);
        if (c.fires) await run.t.checkNewAnswer(run.seen(5, true, 0, pt ? null : WATERMARK));
        else await run.t.checkNewAnswer();
        await run.t.assertNumStateRows(c.fires ? sparkCounts({ state: 5, timeout: true }, c.timeout, c.state, c.after) : { total: 1, updated: 0, removed: 0 });

        await run.checkTimeout(c.after, c.state);
        await run.checkState(c.state);
      });
    });
  }
});

// ---- FlatMapGroupsWithStateSuite: streaming tests -----------------------------------------------

/** The suite's sampleTestFunction query: (key, seconds) rows, event time watermarked 10 s, EventTimeTimeout. */
function eventTimeQuery(set: (m: MemoryStream) => void): (s: Session) => DataFrame {
  return (s) => {
    const [m, df] = memoryStream(s, '_1 STRING, _2 INT');
    set(m);
    return df
      .select(col('_1').alias('key'), timestamp_seconds(col('_2')).alias('eventTime'))
      .withWatermark('eventTime', '10 seconds')
      .groupBy('key')
      .flatMapGroupsWithState(fn('sampleTestFunction'), {
        outputMode: 'update',
        timeoutConf: EventTimeTimeout,
        stateSchema: 'LONG',
        outputSchema: 'key STRING, maxEventTimeSec INT',
      });
  };
}

const addPairs = (m: MemoryStream, ...tuples: Array<[string, number]>): number => addTuples(m, ['_1', '_2'], ...tuples);

describe('FlatMapGroupsWithStateSuite', () => {
  it('flatMapGroupsWithState - streaming', async () => {
    let input!: MemoryStream;
    await testStream(
      overStrings(
        (m) => (input = m),
        (g) =>
          g.flatMapGroupsWithState(fn('runningCount'), { outputMode: 'update', timeoutConf: NoTimeout, stateSchema: 'count LONG', outputSchema: COUNT_OUT }),
      ),
      'update',
      async (t) => {
        addData(input, 'a');
        await t.checkNewAnswer(['a', '1']);
        await t.assertNumStateRows({ total: 1, updated: 1 });
        addData(input, 'a', 'b');
        await t.checkNewAnswer(['a', '2'], ['b', '1']);
        await t.assertNumStateRows({ total: 2, updated: 2 });
        await t.restart();
        addData(input, 'a', 'b'); // should remove state for "a" and not return anything for a
        await t.checkNewAnswer(['b', '2']);
        await t.assertNumStateRows({ total: 1, updated: 1, droppedByWatermark: 0, removed: 1 });
        await t.restart();
        addData(input, 'a', 'c'); // should recreate state for "a" and return count as 1 and
        await t.checkNewAnswer(['a', '1'], ['c', '1']);
        await t.assertNumStateRows({ total: 3, updated: 2 });
      },
    );
  });

  it('flatMapGroupsWithState - streaming + func returns iterator that updates state lazily', async () => {
    let input!: MemoryStream;
    await testStream(
      overStrings(
        (m) => (input = m),
        (g) =>
          g.flatMapGroupsWithState(fn('lazyRunningCount'), {
            outputMode: 'update',
            timeoutConf: NoTimeout,
            stateSchema: 'count LONG',
            outputSchema: COUNT_OUT,
          }),
      ),
      'update',
      async (t) => {
        addData(input, 'a', 'a', 'b');
        await t.checkNewAnswer(['a', '1'], ['a', '2'], ['b', '1']);
        await t.restart();
        addData(input, 'a', 'b'); // should remove state for "a" and not return anything for a
        await t.checkNewAnswer(['b', '2']);
        await t.restart();
        addData(input, 'a', 'c'); // should recreate state for "a" and return count as 1 and
        await t.checkNewAnswer(['a', '1'], ['c', '1']);
      },
    );
  });

  it('flatMapGroupsWithState - streaming with processing time timeout', async () => {
    let input!: MemoryStream;
    const clock = new ManualClock();
    await testStream(
      overStrings(
        (m) => (input = m),
        (g) =>
          g.flatMapGroupsWithState(fn('processingTimeoutCount'), {
            outputMode: 'update',
            timeoutConf: ProcessingTimeTimeout,
            stateSchema: 'count LONG',
            outputSchema: COUNT_OUT,
          }),
      ),
      'update',
      async (t) => {
        addData(input, 'a');
        await t.advance(1000);
        await t.checkNewAnswer(['a', '1']);
        await t.assertNumStateRows({ total: 1, updated: 1 });

        addData(input, 'b');
        await t.advance(1000);
        await t.checkNewAnswer(['b', '1']);
        await t.assertNumStateRows({ total: 2, updated: 1 });

        addData(input, 'b');
        await t.advance(10 * 1000);
        await t.checkNewAnswer(['a', '-1'], ['b', '2']);
        await t.assertNumStateRows({ total: 1, updated: 1, droppedByWatermark: 0, removed: 1 });

        await t.restart();
        addData(input, 'c');
        await t.advance(11 * 1000);
        await t.checkNewAnswer(['b', '-1'], ['c', '1']);
        await t.assertNumStateRows({ total: 1, updated: 1, droppedByWatermark: 0, removed: 1 });

        await t.advance(12 * 1000);
        expect(clock.getTimeMillis()).toBe(35000);
        // Spark waits until lastProgress.timestamp is the clock's 35 s (a progress's timestamp is its trigger's
        // time on the trigger clock); t.advance has already waited for that batch. Soft: the rest still runs.
        expect.soft(t.query.lastProgress?.timestamp, 'the last progress is the batch at 35 s of the trigger clock').toBe('1970-01-01T00:00:35.000Z');
        await t.checkNewAnswer(['c', '-1']);
        await t.assertNumStateRows({ total: 0, updated: 0, droppedByWatermark: 0, removed: 1 });
      },
      { clock },
    );
  });

  it('flatMapGroupsWithState - streaming w/ event time timeout + watermark', async () => {
    let input!: MemoryStream;
    await testStream(
      eventTimeQuery((m) => (input = m)),
      'update',
      async (t) => {
        addPairs(input, ['a', 11], ['a', 13], ['a', 15]);
        // Max event time = 15. Timeout timestamp for "a" = 15 + 5 = 20. Watermark = 15 - 10 = 5.
        await t.checkNewAnswer(['a', 15]); // Output = max event time of a
        addPairs(input, ['a', 4]); // Add data older than watermark for "a"
        await t.checkNewAnswer(); // No output as data should get filtered by watermark
        addPairs(input, ['a', 10]); // Add data newer than watermark for "a"
        await t.checkNewAnswer(['a', 15]); // Max event time is still the same
        // Timeout timestamp for "a" is still 20 as max event time for "a" is still 15.
        // Watermark is still 5 as max event time for all data is still 15.
        addPairs(input, ['b', 31]); // Add data newer than watermark for "b", not "a"
        // Watermark = 31 - 10 = 21, so "a" should be timed out as timeout timestamp for "a" is 20.
        await t.checkNewAnswer(['a', -1], ['b', 31]); // State for "a" should timeout and emit -1
      },
    );
  });

  it('[SPARK-49474] flatMapGroupsWithState - user NPE is classified', async () => {
    let input!: MemoryStream;
    await testStream(
      overStrings(
        (m) => (input = m),
        (g) =>
          g.flatMapGroupsWithState(fn('throwsOnNull'), { outputMode: 'update', timeoutConf: NoTimeout, stateSchema: 'count LONG', outputSchema: COUNT_OUT }),
      ),
      'update',
      async (t) => {
        addData(input, 'a');
        const err = await t.expectFailure();
        expect(err.code).toBe('UDF_FAILED');
        // The user's error is the cause (a TypeError, JS's NullPointerException; it comes from a worker, another realm).
        expect(err.cause).toMatchObject({ name: 'TypeError' });
      },
    );
  });

  it('[SPARK-49474] flatMapGroupsWithState - NPE from user iterator is classified', async () => {
    let input!: MemoryStream;
    await testStream(
      overStrings(
        (m) => (input = m),
        (g) =>
          g.flatMapGroupsWithState(fn('returnsNull'), { outputMode: 'update', timeoutConf: NoTimeout, stateSchema: 'count LONG', outputSchema: COUNT_OUT }),
      ),
      'update',
      async (t) => {
        addData(input, 'a');
        const err = await t.expectFailure();
        expect(err.code).toBe('UDF_FAILED');
      },
    );
  });

  it('mapGroupsWithState - streaming', async () => {
    let input!: MemoryStream;
    await testStream(
      overStrings(
        (m) => (input = m),
        (g) => g.mapGroupsWithState(fn('mapRunningCount'), { timeoutConf: NoTimeout, stateSchema: 'count LONG', outputSchema: COUNT_OUT }),
      ),
      'update',
      async (t) => {
        addData(input, 'a');
        await t.checkNewAnswer(['a', '1']);
        await t.assertNumStateRows({ total: 1, updated: 1 });
        addData(input, 'a', 'b');
        await t.checkNewAnswer(['a', '2'], ['b', '1']);
        await t.assertNumStateRows({ total: 2, updated: 2 });
        await t.restart();
        addData(input, 'a', 'b'); // should remove state for "a" and return count as -1
        await t.checkNewAnswer(['a', '-1'], ['b', '2']);
        await t.assertNumStateRows({ total: 1, updated: 1 });
        await t.restart();
        addData(input, 'a', 'c'); // should recreate state for "a" and return count as 1
        await t.checkNewAnswer(['a', '1'], ['c', '1']);
        await t.assertNumStateRows({ total: 3, updated: 2 });
      },
    );
  });

  it('SPARK-35896: metrics in StateOperatorProgress are output correctly', async () => {
    let input!: MemoryStream;
    await testStream(
      eventTimeQuery((m) => (input = m)),
      'update',
      async (t) => {
        addPairs(input, ['a', 11], ['a', 13], ['a', 15]);
        await t.checkNewAnswer(['a', 15]);
        await t.assertNumStateRows({ total: 1, updated: 1, droppedByWatermark: 0, removed: 0 });
        addPairs(input, ['a', 4]);
        await t.checkNewAnswer();
        const since = await t.assertStateOperatorProgressMetric('flatMapGroupsWithState', 3);
        // Spark's check stops there; the batch it consumed dropped the late row (a, 4).
        expect(since.reduce((n, p) => n + (p.stateOperators[0]?.numRowsDroppedByWatermark ?? 0), 0)).toBe(1);
        addPairs(input, ['a', 10]);
        await t.checkNewAnswer(['a', 15]);
        addPairs(input, ['b', 31]);
        await t.checkNewAnswer(['a', -1], ['b', 31]);
        await t.assertNumStateRows({ total: 1, updated: 2, droppedByWatermark: 0, removed: 1 });
      },
      { conf: { 'sluice.sql.shuffle.partitions': 3 } },
    );
  });

  it('StateStore.abort on task failure handling', async () => {
    let input!: MemoryStream;
    const marker = join(tempDir('sluice-fmgws-'), 'failInTask');
    const setFailInTask = (fail: boolean) => (fail ? writeFileSync(marker, 'fail') : rmSync(marker, { force: true }));
    await testStream(
      (s) => {
        const [m, df] = stringStream(s);
        input = m;
        return df
          .select(col('value'), lit(marker).alias('failMarker'))
          .groupBy('value')
          .mapGroupsWithState(fn('countFailingOnMarker'), { timeoutConf: NoTimeout, stateSchema: 'count LONG', outputSchema: 'key STRING, count LONG' });
      },
      'update',
      async (t) => {
        setFailInTask(false);
        addData(input, 'a');
        await t.checkNewAnswer(['a', 1]);
        addData(input, 'a');
        await t.checkNewAnswer(['a', 2]);
        setFailInTask(true);
        addData(input, 'a');
        const err = await t.expectFailure();
        expect(err.code).toBe('UDF_FAILED');
        expect((err.cause as Error | undefined)?.message).toBe('expected failure');
        setFailInTask(false);
        await t.restart();
        await t.checkNewAnswer(['a', 3]);
      },
    );
  });

  it('disallow complete mode', async () => {
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [, df] = stringStream(s);
      const grouped = df.groupBy('value');
      expect(() =>
        grouped.flatMapGroupsWithState(fn('runningCount'), {
          outputMode: 'complete' as 'update',
          timeoutConf: NoTimeout,
          stateSchema: 'count LONG',
          outputSchema: COUNT_OUT,
        }),
      ).toThrow('The output mode of function should be append or update');
    });
  });

  it('SPARK-38320 - flatMapGroupsWithState state with data should not timeout', async () => {
    let input!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s, 'value TIMESTAMP');
        input = m;
        return df
          .withWatermark('value', '0 seconds')
          .withColumn('k', lit(0))
          .groupBy('k')
          .mapGroupsWithState(fn('mustNotTimeOut'), { timeoutConf: EventTimeTimeout, stateSchema: 'LONG', outputSchema: 'value INT' });
      },
      'update',
      async (t) => {
        input.addData([{ value: new Date(1000).toISOString() }]);
        await t.query.processAllAvailable();
        input.addData([{ value: new Date(2000).toISOString() }]);
        await t.query.processAllAvailable();
        expect(t.query.exception).toBeNull();
        await t.checkAnswer([0], [0]);
      },
      { conf: { 'sluice.sql.streaming.noDataMicroBatches.enabled': false } },
    );
  });

  for (const timeoutConf of ['NoTimeout', 'ProcessingTimeTimeout']) {
    // Spark's testWithTimeout(timeoutConf) does not use its parameter: both tests run ProcessingTimeTimeout.
    it(`SPARK-20714: watermark does not fail query when timeout = ${timeoutConf}`, async () => {
      let input!: MemoryStream;
      const clock = new ManualClock();
      await testStream(
        (s) => {
          const [m, df] = memoryStream(s, 'key STRING, time LONG');
          input = m;
          return df
            .selectExpr('key', 'timestamp_seconds(time) as timestamp')
            .withWatermark('timestamp', '10 second')
            .groupBy('key')
            .flatMapGroupsWithState(fn('timeoutCount'), {
              outputMode: 'update',
              timeoutConf: ProcessingTimeTimeout,
              stateSchema: 'count LONG',
              outputSchema: COUNT_OUT,
            });
        },
        'update',
        async (t) => {
          addTuples(input, ['key', 'time'], ['a', 1]);
          await t.advance(1000);
          await t.checkNewAnswer(['a', '1']);
        },
        { clock },
      );
    });
  }
});

// ---- GroupStateSuite, through queries ------------------------------------------------------------

const SCRIPT_OUT = 'step STRING, outcome STRING';

/** A query of groupStateScript: rows (k, script[, time]) grouped by k; `watermark`: time watermarked with delay 0. */
function scriptQuery(set: (m: MemoryStream) => void, conf: Timeout, stateSchema: string, watermark = conf === EventTimeTimeout): (s: Session) => DataFrame {
  return (s) => {
    const [m, df] = memoryStream(s, 'k STRING, script STRING, time TIMESTAMP');
    set(m);
    return (watermark ? df.withWatermark('time', '0 seconds') : df)
      .groupBy('k')
      .flatMapGroupsWithState(fn('groupStateScript'), { outputMode: 'update', timeoutConf: conf, stateSchema, outputSchema: SCRIPT_OUT });
  };
}

/** Rows (k, script, time) for the script query. */
const script = (m: MemoryStream, k: string, name: string, time = 0): number => m.addData([{ k, script: name, time }]);

/** The outcome rows of the timeout setters that must throw, as groupStateScript names them. */
const timestampSettersThrow = (tag: string): Values[] => [
  [`${tag} setTimeoutTimestamp(2000)`, THROWS],
  [`${tag} setTimeoutTimestamp(2000, "1 second")`, THROWS],
  [`${tag} setTimeoutTimestamp(Date(2000))`, THROWS],
  [`${tag} setTimeoutTimestamp(Date(2000), "1 second")`, THROWS],
];
const durationSettersThrow = (tag: string): Values[] => [
  [`${tag} setTimeoutDuration(1000)`, THROWS],
  [`${tag} setTimeoutDuration("2 second")`, THROWS],
];

const TIMED_OUT_EMPTY: Values[] = [
  ['timed out: hasTimedOut', 'true'],
  ['timed out: getOption', 'null'],
];

describe('GroupStateSuite', () => {
  it('GroupState - get, exists, update, remove', async () => {
    let input!: MemoryStream;
    await testStream(
      scriptQuery((m) => (input = m), NoTimeout, 'STRING'),
      'update',
      async (t) => {
        script(input, 'empty', 'get, exists, update, remove: empty');
        script(input, 'set', 'set "2"');
        await t.checkNewAnswer(['exists', 'false'], ['get', THROWS], ['getOption', 'null'], ['update("")', 'ok'], ['exists', 'true'], ['get', '""']);
        script(input, 'set', 'get, exists, update, remove: set');
        await t.checkNewAnswer(
          ['get', '"2"'],
          ['update("3")', 'ok'],
          ['get', '"3"'],
          ['remove', 'ok'],
          ['exists', 'false'],
          ['get', THROWS],
          ['remove again', 'ok'],
          ['update("4")', 'ok'],
          ['exists', 'true'],
          ['get', '"4"'],
          ['update(null)', THROWS],
          ['get', '"4"'],
        );
        // What the two calls left: "" (a falsy value is a state) and "4".
        script(input, 'empty', 'kept');
        script(input, 'set', 'kept');
        await t.checkNewAnswer(['exists', 'true'], ['getOption', '""'], ['exists', 'true'], ['getOption', '"4"']);
      },
    );
  });

  it('GroupState - setTimeout - with NoTimeout', async () => {
    let input!: MemoryStream;
    await testStream(
      scriptQuery((m) => (input = m), NoTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'setTimeout - with NoTimeout');
        await t.checkNewAnswer(
          ...durationSettersThrow('none:'),
          ...timestampSettersThrow('none:'),
          ['update(5)', 'ok'],
          ...durationSettersThrow('5:'),
          ...timestampSettersThrow('5:'),
        );
      },
    );
  });

  it('GroupState - setTimeout - with ProcessingTimeTimeout', async () => {
    let input!: MemoryStream;
    const clock = new ManualClock();
    await testStream(
      scriptQuery((m) => (input = m), ProcessingTimeTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'setTimeout - with ProcessingTimeTimeout');
        await t.advance(1000);
        await t.checkNewAnswer(
          ['setTimeoutDuration("-1 month 31 days 1 second")', 'ok'],
          ['setTimeoutDuration(500)', 'ok'],
          ...timestampSettersThrow('none:'),
          ['update(5)', 'ok'],
          ['setTimeoutDuration(1000)', 'ok'],
          ['setTimeoutDuration("2 second")', 'ok'],
          ...timestampSettersThrow('5:'),
          ['remove', 'ok'],
          ['setTimeoutDuration(500)', 'ok'],
          ...timestampSettersThrow('removed:'),
        );
        // The last setter stands: 1500; the state removed, its row kept for the timeout.
        await t.assertNumStateRows({ total: 1, updated: 1, removed: 0 });
        await t.advance(1000);
        await t.checkNewAnswer(...TIMED_OUT_EMPTY);
      },
      { clock },
    );
  });

  it('GroupState - setTimeout - with EventTimeTimeout', async () => {
    let input!: MemoryStream;
    await testStream(
      scriptQuery((m) => (input = m), EventTimeTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'setTimeout - with EventTimeTimeout', 1000);
        await t.checkNewAnswer(
          ...durationSettersThrow('none:'),
          ['setTimeoutTimestamp(5000)', 'ok'],
          ['update(5)', 'ok'],
          ['setTimeoutTimestamp(10000)', 'ok'],
          ['setTimeoutTimestamp(Date(20000))', 'ok'],
          ...durationSettersThrow('5:'),
          ['remove', 'ok'],
          ['setTimeoutTimestamp(5000)', 'ok'],
          ...durationSettersThrow('removed:'),
        );
        await t.assertNumStateRows({ total: 1, updated: 1, removed: 0 });
        // The last setter stands: the key times out once the watermark passes 5000.
        script(input, 'tick', 'tick', 5000);
        await t.checkNewAnswer();
        script(input, 'tick', 'tick', 5001);
        await t.checkNewAnswer(...TIMED_OUT_EMPTY);
      },
    );
  });

  it('GroupState - illegal params to setTimeout', async () => {
    let input!: MemoryStream;
    const clock = new ManualClock();
    await testStream(
      scriptQuery((m) => (input = m), ProcessingTimeTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'illegal params to setTimeout - ProcessingTimeTimeout');
        await t.advance(1000);
        await t.checkNewAnswer(...[-1000, 0, '-2 second', '-1 month', '1 month -31 day'].map((d) => [`setTimeoutDuration(${JSON.stringify(d)})`, THROWS]));
        // No timeout was set.
        await t.advance(100_000);
        await t.checkNewAnswer();
      },
      { clock },
    );
    await testStream(
      scriptQuery((m) => (input = m), EventTimeTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'illegal params to setTimeout - EventTimeTimeout', 1000);
        const durations = ['-3 second', '-1 month', '1 month -32 day'];
        await t.checkNewAnswer(
          ['setTimeoutTimestamp(-10000)', THROWS],
          ...durations.map((d) => [`setTimeoutTimestamp(10000, ${JSON.stringify(d)})`, THROWS]),
          ['setTimeoutTimestamp(Date(-10000))', THROWS],
          ...durations.map((d) => [`setTimeoutTimestamp(Date(-10000), ${JSON.stringify(d)})`, THROWS]),
        );
        // No timeout was set.
        script(input, 'tick', 'tick', 1_000_000);
        await t.checkNewAnswer();
      },
    );
  });

  it('GroupState - hasTimedOut', async () => {
    let input!: MemoryStream;
    await testStream(
      scriptQuery((m) => (input = m), NoTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'hasTimedOut');
        await t.checkNewAnswer(['hasTimedOut', 'false']);
      },
    );
    const clock = new ManualClock();
    await testStream(
      scriptQuery((m) => (input = m), ProcessingTimeTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'hasTimedOut, then a timeout in 1 second');
        await t.advance(1000);
        await t.checkNewAnswer(['hasTimedOut', 'false']);
        await t.advance(2000);
        await t.checkNewAnswer(['timed out: hasTimedOut', 'true'], ['timed out: getOption', '5']);
      },
      { clock },
    );
  });

  it('GroupState - getCurrentWatermarkMs', async () => {
    let input!: MemoryStream;
    for (const conf of [NoTimeout, ProcessingTimeTimeout]) {
      await testStream(
        scriptQuery((m) => (input = m), conf, 'LONG', false),
        'update',
        async (t) => {
          script(input, 'a', 'getCurrentWatermarkMs');
          await t.checkNewAnswer(['getCurrentWatermarkMs', THROWS]);
        },
      );
    }
    for (const conf of [NoTimeout, EventTimeTimeout, ProcessingTimeTimeout]) {
      await testStream(
        scriptQuery((m) => (input = m), conf, 'LONG', true),
        'update',
        async (t) => {
          // Watermarks 0 (the first batch), 1000 and 2000 (delay 0, the greatest time of the batches before).
          for (const [time, wm] of [
            [1000, '0'],
            [2000, '1000'],
            [3000, '2000'],
          ] as const) {
            script(input, 'a', 'getCurrentWatermarkMs', time);
            await t.checkNewAnswer(['getCurrentWatermarkMs', wm]);
          }
        },
      );
    }
  });

  it('GroupState - getCurrentProcessingTimeMs', async () => {
    let input!: MemoryStream;
    for (const [conf, watermark] of [
      [NoTimeout, false],
      [NoTimeout, true],
      [ProcessingTimeTimeout, false],
      [ProcessingTimeTimeout, true],
      [EventTimeTimeout, true],
    ] as const) {
      const clock = new ManualClock();
      await testStream(
        scriptQuery((m) => (input = m), conf, 'LONG', watermark),
        'update',
        async (t) => {
          for (const at of [1000, 2000]) {
            script(input, 'a', 'getCurrentProcessingTimeMs', at);
            await t.advance(1000);
            await t.checkNewAnswer(['getCurrentProcessingTimeMs', String(at)]);
          }
        },
        { clock },
      );
    }
  });

  it('GroupState - primitive type', async () => {
    let input!: MemoryStream;
    await testStream(
      scriptQuery((m) => (input = m), NoTimeout, 'LONG'),
      'update',
      async (t) => {
        script(input, 'a', 'primitive type: empty');
        await t.checkNewAnswer(['get', THROWS], ['getOption', 'null'], ['update(10)', 'ok'], ['get', '10']);
        script(input, 'a', 'primitive type: set');
        await t.checkNewAnswer(['get', '10'], ['update(0)', 'ok'], ['get', '0'], ['exists', 'true'], ['remove', 'ok'], ['get', THROWS], ['update(0)', 'ok']);
        script(input, 'a', 'kept');
        await t.checkNewAnswer(['exists', 'true'], ['getOption', '0']);
      },
    );
  });
});

// ---- UnsupportedOperationsSuite: [flat]MapGroupsWithState ----------------------------------------

/** The error of building `df` or starting it in `mode`, expected to have `code` and hold each of `fragments` (any case). */
async function expectRefused(df: (s: Session) => DataFrame, mode: Mode, code: string, fragments: string[]): Promise<void> {
  const e = await testStream(df, mode, async () => {}).then(
    () => undefined,
    (err: unknown) => err as Error & { code?: string },
  );
  expect(e, 'the query should be refused').toBeInstanceOf(Error);
  for (const m of fragments) expect(e?.message.toLowerCase()).toContain(m.toLowerCase());
  expect(e?.code).toBe(code);
}

const flatMapOf = (df: DataFrame, key: string, outputMode: 'append' | 'update'): DataFrame =>
  df.groupBy(key).flatMapGroupsWithState(fn('runningCount'), { outputMode, timeoutConf: NoTimeout, stateSchema: 'count LONG', outputSchema: COUNT_OUT });
const mapGroupsOf = (df: DataFrame, key: string, timeoutConf: Timeout = NoTimeout): DataFrame =>
  df.groupBy(key).mapGroupsWithState(fn('mapRunningCount'), { timeoutConf, stateSchema: 'count LONG', outputSchema: COUNT_OUT });

/** Spark's streamRelation. */
const streamRelation = (s: Session): DataFrame => stringStream(s)[1];

/** Spark's Aggregate(Seq(attributeWithWatermark), aggExprs("c"), streamRelation): a count by a watermarked key, as (key, count). */
const aggregateOnWatermark = (s: Session): DataFrame =>
  memoryStream(s, 'value STRING, time TIMESTAMP')[1]
    .withWatermark('time', '10 seconds')
    .groupBy('time')
    .count()
    .selectExpr('CAST(time AS STRING) AS key', 'count');

describe('UnsupportedOperationsSuite: flatMapGroupsWithState and mapGroupsWithState', () => {
  it('flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation without aggregation in append mode', async () => {
    await expectRefused((s) => flatMapOf(streamRelation(s), 'value', 'update'), 'append', 'UNSUPPORTED_OUTPUT_MODE', [
      'flatMapGroupsWithState in update mode',
      'Append',
    ]);
  });

  it('flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation without aggregation in complete mode', async () => {
    await expectRefused((s) => flatMapOf(streamRelation(s), 'value', 'update'), 'complete', 'UNSUPPORTED_OUTPUT_MODE', ['Complete']);
  });

  for (const mode of ['append', 'update', 'complete'] as const) {
    const shown = { append: 'Append', update: 'Update', complete: 'Complete' }[mode];
    it(`flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation with aggregation in ${shown} mode`, async () => {
      await expectRefused((s) => flatMapOf(aggregateOnWatermark(s), 'key', 'update'), mode, 'UNSUPPORTED_OPERATION', [
        'flatMapGroupsWithState in update mode',
        'with aggregation',
      ]);
    });
  }

  it('flatMapGroupsWithState - flatMapGroupsWithState(Append) on streaming relation without aggregation in update mode', async () => {
    await expectRefused((s) => flatMapOf(streamRelation(s), 'value', 'append'), 'update', 'UNSUPPORTED_OUTPUT_MODE', [
      'flatMapGroupsWithState in append mode',
      'update',
    ]);
  });

  // Spark's plan for this name is flatMapGroupsWithState(Append).
  it('flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation in complete mode', async () => {
    await expectRefused((s) => flatMapOf(streamRelation(s), 'value', 'append'), 'complete', 'UNSUPPORTED_OUTPUT_MODE', ['Complete']);
  });

  it('flatMapGroupsWithState -  multiple flatMapGroupsWithStates on s streaming relation but some are not in append mode', async () => {
    await expectRefused((s) => flatMapOf(flatMapOf(streamRelation(s), 'value', 'append'), 'key', 'update'), 'append', 'UNSUPPORTED_OUTPUT_MODE', [
      'multiple flatMapGroupsWithState',
      'append',
    ]);
  });

  it('mapGroupsWithState - mapGroupsWithState on streaming relation without aggregation in append mode', async () => {
    await expectRefused((s) => mapGroupsOf(streamRelation(s), 'value'), 'append', 'UNSUPPORTED_OUTPUT_MODE', ['mapGroupsWithState', 'append']);
  });

  it('mapGroupsWithState - mapGroupsWithState on streaming relation without aggregation in complete mode', async () => {
    await expectRefused((s) => mapGroupsOf(streamRelation(s), 'value'), 'complete', 'UNSUPPORTED_OUTPUT_MODE', ['Complete']);
  });

  it('mapGroupsWithState - multiple mapGroupsWithStates on streaming relation and all are in append mode', async () => {
    await expectRefused((s) => mapGroupsOf(mapGroupsOf(streamRelation(s), 'value'), 'key'), 'append', 'UNSUPPORTED_OPERATION', [
      'multiple mapGroupsWithStates',
    ]);
  });

  it('mapGroupsWithState - mixing mapGroupsWithStates and flatMapGroupsWithStates on streaming relation', async () => {
    await expectRefused((s) => mapGroupsOf(flatMapOf(streamRelation(s), 'value', 'update'), 'key'), 'append', 'UNSUPPORTED_OPERATION', [
      'Mixing mapGroupsWithStates and flatMapGroupsWithStates',
    ]);
  });

  it('mapGroupsWithState - mapGroupsWithState with event time timeout without watermark', async () => {
    await expectRefused((s) => mapGroupsOf(streamRelation(s), 'value', EventTimeTimeout), 'update', 'UNSUPPORTED_OPERATION', ['watermark']);
  });
});
