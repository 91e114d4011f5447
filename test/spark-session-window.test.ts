/**
 * Spark's session window scenarios (StreamingSessionWindowSuite.scala), with Spark's inputs and
 * expected outputs, run against Sluice's session windows. Each `it` keeps the Spark test's name.
 *
 * How Spark's StreamTest actions are read here (sparkStreamTest.ts):
 * - AddData(input, (text, seconds), ...): rows (_1 STRING, _2 LONG) added to a memory stream.
 * - CheckNewAnswer(rows): append mode, the rows written since the last check; complete mode, the
 *   last batch's rows (the whole result). CheckAnswer(rows): every row the sink holds. Both compare
 *   multisets after processing all available data (and the no-data batch a moved watermark brings).
 * - assertNumRowsDroppedByWatermark(n): the suite's own helper: numRowsDroppedByWatermark of the
 *   first state operator of the last progress whose numInputRows is not 0.
 * - An intercepted error: the message holds each of Spark's fragments, in any case. Sluice refuses
 *   these plans when the query starts, where Spark refuses some at start and some in the first
 *   batch.
 *
 * Adaptations (the query is Spark's; only what Sluice's API cannot spell is respelled):
 * - testWithAllOptions runs each scenario once per state store provider and per
 *   spark.sql.streaming.sessionWindow.merge.sessions.in.local.partition; Sluice has one state
 *   store and always merges a task's rows of one (key, session start) before the shuffle, so each
 *   scenario runs once.
 * - The dynamic gap tests register a Scala udf `gapDuration`; the port gives the same gaps with a
 *   CASE expression. The nested and multiple-column key variants compare whole tuples in the udf;
 *   every part of those keys is the same word, so the CASE compares the word.
 * - arrays_zip names its struct fields 0, 1, ... in Sluice (Spark names them after the columns), so
 *   `sessionIdTriple.sessionIdDouble` is `sessionIdTriple.0`, and the expected nested keys are
 *   written as those structs: ((w, w), w) is {0: {0: w, 1: w}, 1: w}.
 * - "session window - with more aggregation functions and UDAFs": Sluice has no typed Aggregator
 *   UDAFs; the suite's MySum sums a LONG, as sum() does, so sum() stands in for it.
 * - "session window with async state checkpointing" sets two Databricks confs that Sluice (like
 *   open-source Spark) does not have; its steps and answers are ported as they are.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  col,
  count,
  expr,
  first,
  last,
  max_by,
  mean,
  median,
  min_by,
  session_window,
  stddev,
  struct,
  sum,
  variance,
  split,
  arrays_zip,
  explode,
  type Column,
  type DataFrame,
  type MemoryStream,
  type Session,
} from '@sluice/driver';
import { removeTempDirs, withSession } from './helpers.js';
import { addTuples, memoryStream, runSparkTest, SparkStreamTest, SPARK_TEST_CONF } from './sparkStreamTest.js';

afterAll(removeTempDirs);

type Mode = 'append' | 'complete' | 'update';

class SessionTest extends SparkStreamTest {
  /** The suite's assertNumRowsDroppedByWatermark: of the last progress that read rows. */
  async assertNumRowsDroppedByWatermark(n: number): Promise<void> {
    await this.processAll();
    const withData = this.query.recentProgress.filter((p) => p.numInputRows !== 0);
    const last = withData[withData.length - 1];
    if (last === undefined) throw new Error('no progress read rows');
    expect(last.stateOperators[0]?.numRowsDroppedByWatermark, `assertNumRowsDroppedByWatermark; progress: ${this.trace()}`).toBe(n);
  }
}

const testStream = (df: (s: Session) => DataFrame, mode: Mode, body: (t: SessionTest) => Promise<void>): Promise<void> =>
  runSparkTest((s, d) => new SessionTest(s, d, mode), df, body);

/** The error of starting `df` in `mode`, expected to hold each of `fragments` (any case). */
async function expectRefused(df: (s: Session) => DataFrame, mode: Mode, fragments: string[]): Promise<void> {
  await withSession(SPARK_TEST_CONF, async (s) => {
    const e = await testStream(
      () => df(s),
      mode,
      async (t) => t.checkAnswer(),
    ).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(e, 'the query should be refused').toBeInstanceOf(Error);
    for (const m of fragments) expect(e!.message.toLowerCase()).toContain(m.toLowerCase());
  });
}

const NAMES = ['_1', '_2'];
/** AddData(inputData, (text, seconds), ...). */
const addData = (m: MemoryStream, ...tuples: Array<[string, number]>): number => addTuples(m, NAMES, ...tuples);
const pairStream = (s: Session): [MemoryStream, DataFrame] => memoryStream(s, '_1 STRING, _2 LONG');

const tenSeconds = (): Column => session_window(col('eventTime'), '10 seconds');

/** The suite's sessionWindowQuery. */
function sessionWindowQuery(input: DataFrame, sessionWindow: Column = tenSeconds()): DataFrame {
  const events = input
    .select(col('_1').alias('value'), col('_2').alias('timestamp'))
    .withColumn('eventTime', col('timestamp').cast('timestamp'))
    .withWatermark('eventTime', '30 seconds')
    .selectExpr("explode(split(value, ' ')) AS sessionId", 'eventTime');
  return events
    .groupBy(sessionWindow.alias('session'), col('sessionId'))
    .agg(count('*').alias('numEvents'))
    .selectExpr(
      'sessionId',
      'CAST(session.start AS LONG)',
      'CAST(session.end AS LONG)',
      'CAST(session.end AS LONG) - CAST(session.start AS LONG) AS durationMs',
      'numEvents',
    );
}

/** The suite's sessionWindowQueryOnGlobalKey (MemoryStream[Int]). */
function sessionWindowQueryOnGlobalKey(input: DataFrame): DataFrame {
  return input
    .selectExpr('*')
    .withColumn('eventTime', col('value').cast('timestamp'))
    .withWatermark('eventTime', '10 seconds')
    .groupBy(session_window(col('eventTime'), '5 seconds').alias('session'))
    .agg(count('*').alias('count'), sum('value').alias('sum'))
    .select(col('session').getField('start').cast('long'), col('session').getField('end').cast('long'), col('count'), col('sum'));
}

/** The suite's nested tuples: split words, then arrays_zip(words, words), then arrays_zip(that, words). */
function withTriples(input: DataFrame): DataFrame {
  return input
    .select(col('_1').alias('value'), col('_2').alias('timestamp'))
    .withColumn('eventTime', col('timestamp').cast('timestamp'))
    .withColumn('sessionIdSingle', split(col('value'), ' '))
    .withColumn('sessionIdDouble', arrays_zip(col('sessionIdSingle'), col('sessionIdSingle')))
    .withColumn('sessionIdTriple', arrays_zip(col('sessionIdDouble'), col('sessionIdSingle')));
}

/** The suite's sessionWindowQueryNestedKey. */
function sessionWindowQueryNestedKey(input: DataFrame, sessionWindow: Column = tenSeconds()): DataFrame {
  const events = withTriples(input).withWatermark('eventTime', '30 seconds').selectExpr('explode(sessionIdTriple) AS sessionId', 'eventTime');
  return events
    .groupBy(sessionWindow.alias('session'), col('sessionId'))
    .agg(count('*').alias('numEvents'))
    .selectExpr(
      'sessionId',
      'CAST(session.start AS LONG)',
      'CAST(session.end AS LONG)',
      'CAST(session.end AS LONG) - CAST(session.start AS LONG) AS durationMs',
      'numEvents',
    );
}

/** The suite's sessionWindowQueryMultiColKey. */
function sessionWindowQueryMultiColKey(input: DataFrame, sessionWindow: Column = tenSeconds()): DataFrame {
  const events = withTriples(input)
    .withColumn('sessionIdTriple', explode(col('sessionIdTriple')))
    .withWatermark('eventTime', '30 seconds')
    .selectExpr('sessionIdTriple.`0` AS aggKeyDouble', 'sessionIdTriple.`1` AS aggKeySingle', 'eventTime');
  return events
    .groupBy(sessionWindow.alias('session'), col('aggKeyDouble'), col('aggKeySingle'))
    .agg(count('*').alias('numEvents'))
    .selectExpr(
      'aggKeyDouble',
      'aggKeySingle',
      'CAST(session.start AS LONG)',
      'CAST(session.end AS LONG)',
      'CAST(session.end AS LONG) - CAST(session.start AS LONG) AS durationMs',
      'numEvents',
    );
}

/** ((w, w), w) as Sluice's arrays_zip structs. */
const nested = (w: string): unknown => ({ 0: { 0: w, 1: w }, 1: w });
/** (w, w) as one. */
const pair = (w: string): unknown => ({ 0: w, 1: w });

/** The udf gapDuration of SPARK-36465, as a CASE over the word `word`. */
const gapDuration = (word: string): Column =>
  expr(
    `CASE WHEN ${word} = 'hello' THEN '1 second' WHEN ${word} = 'structured' THEN '0 second' WHEN ${word} = 'world' THEN '-10 seconds' ELSE '10 seconds' END`,
  );

/** The steps of "complete mode - session window" and its key variants; `k` gives a word's key columns. */
async function completeModeSteps(t: SessionTest, inputData: MemoryStream, k: (w: string) => unknown[]): Promise<void> {
  const row = (w: string, ...rest: number[]): unknown[] => [...k(w), ...rest];
  addData(inputData, ['hello world spark streaming', 40], ['world hello structured streaming', 41]);
  await t.checkNewAnswer(
    row('hello', 40, 51, 11, 2),
    row('world', 40, 51, 11, 2),
    row('streaming', 40, 51, 11, 2),
    row('spark', 40, 50, 10, 1),
    row('structured', 41, 51, 10, 1),
  );

  // placing new sessions "before" previous sessions
  addData(inputData, ['spark streaming', 25]);
  await t.checkNewAnswer(
    row('spark', 25, 35, 10, 1),
    row('streaming', 25, 35, 10, 1),
    row('hello', 40, 51, 11, 2),
    row('world', 40, 51, 11, 2),
    row('streaming', 40, 51, 11, 2),
    row('spark', 40, 50, 10, 1),
    row('structured', 41, 51, 10, 1),
  );

  // concatenating multiple previous sessions into one
  addData(inputData, ['spark streaming', 30]);
  await t.checkNewAnswer(
    row('spark', 25, 50, 25, 3),
    row('streaming', 25, 51, 26, 4),
    row('hello', 40, 51, 11, 2),
    row('world', 40, 51, 11, 2),
    row('structured', 41, 51, 10, 1),
  );

  // placing new sessions after previous sessions
  addData(inputData, ['hello apache spark', 60]);
  await t.checkNewAnswer(
    row('spark', 25, 50, 25, 3),
    row('streaming', 25, 51, 26, 4),
    row('hello', 40, 51, 11, 2),
    row('world', 40, 51, 11, 2),
    row('structured', 41, 51, 10, 1),
    row('hello', 60, 70, 10, 1),
    row('apache', 60, 70, 10, 1),
    row('spark', 60, 70, 10, 1),
  );

  addData(inputData, ['structured streaming', 90]);
  await t.checkNewAnswer(
    row('spark', 25, 50, 25, 3),
    row('streaming', 25, 51, 26, 4),
    row('hello', 40, 51, 11, 2),
    row('world', 40, 51, 11, 2),
    row('structured', 41, 51, 10, 1),
    row('hello', 60, 70, 10, 1),
    row('apache', 60, 70, 10, 1),
    row('spark', 60, 70, 10, 1),
    row('structured', 90, 100, 10, 1),
    row('streaming', 90, 100, 10, 1),
  );
}

/** The steps of "SPARK-36465: dynamic gap duration" and its key variants. */
async function dynamicGapSteps(t: SessionTest, inputData: MemoryStream, k: (w: string) => unknown[]): Promise<void> {
  const row = (w: string, ...rest: number[]): unknown[] => [...k(w), ...rest];
  addData(inputData, ['hello world spark streaming', 40], ['world hello structured streaming', 41]);
  // watermark: 11; current sessions ("hello", 40, 42, 2, 2), ("streaming", 40, 51, 11, 2), ("spark", 40, 50, 10, 1)
  await t.checkNewAnswer();

  // placing new sessions "before" previous sessions
  addData(inputData, ['spark streaming', 25]);
  await t.checkNewAnswer();

  // late event which session's end 10 would be later than watermark 11: should be dropped
  addData(inputData, ['spark streaming', 0]);
  await t.checkNewAnswer();
  await t.assertNumRowsDroppedByWatermark(2);

  // concatenating multiple previous sessions into one
  addData(inputData, ['spark streaming', 30]);
  await t.checkNewAnswer();

  // placing new sessions after previous sessions
  addData(inputData, ['hello apache spark', 60]);
  await t.checkNewAnswer();

  addData(inputData, ['structured streaming', 90]);
  await t.checkNewAnswer(row('spark', 25, 50, 25, 3), row('streaming', 25, 51, 26, 4), row('hello', 40, 42, 2, 2));
}

/** The steps of "append mode - session window" (and of the async checkpointing one). */
async function appendModeSteps(t: SessionTest, inputData: MemoryStream, withDropCheck: boolean): Promise<void> {
  addData(inputData, ['hello world spark streaming', 40], ['world hello structured streaming', 41]);
  // watermark: 11
  await t.checkNewAnswer();

  // placing new sessions "before" previous sessions
  addData(inputData, ['spark streaming', 25]);
  await t.checkNewAnswer();

  // late event which session's end 10 would be later than watermark 11: should be dropped
  addData(inputData, ['spark streaming', 0]);
  await t.checkNewAnswer();
  if (withDropCheck) await t.assertNumRowsDroppedByWatermark(2);

  // concatenating multiple previous sessions into one
  addData(inputData, ['spark streaming', 30]);
  await t.checkNewAnswer();

  // placing new sessions after previous sessions; watermark: 30
  addData(inputData, ['hello apache spark', 60]);
  await t.checkNewAnswer();

  // watermark: 60
  addData(inputData, ['structured streaming', 90]);
  await t.checkNewAnswer(
    ['spark', 25, 50, 25, 3],
    ['streaming', 25, 51, 26, 4],
    ['hello', 40, 51, 11, 2],
    ['world', 40, 51, 11, 2],
    ['structured', 41, 51, 10, 1],
  );
}

describe('StreamingSessionWindowSuite', () => {
  it('complete mode - session window', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQuery(df);
      },
      'complete',
      (t) => completeModeSteps(t, inputData, (w) => [w]),
    );
  });

  it('complete mode - session window - nested tuple key', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQueryNestedKey(df);
      },
      'complete',
      (t) => completeModeSteps(t, inputData, (w) => [nested(w)]),
    );
  });

  it('complete mode - session window - multiple col key', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQueryMultiColKey(df);
      },
      'complete',
      (t) => completeModeSteps(t, inputData, (w) => [pair(w), w]),
    );
  });

  it('complete mode - session window - no key', async () => {
    await expectRefused((s) => sessionWindowQueryOnGlobalKey(memoryStream(s)[1]), 'complete', ['Global aggregation with session window', 'not supported']);
  });

  it('append mode - session window', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQuery(df);
      },
      'append',
      (t) => appendModeSteps(t, inputData, true),
    );
  });

  it('SPARK-36465: dynamic gap duration', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQuery(df, session_window(col('eventTime'), gapDuration('sessionId')));
      },
      'append',
      (t) => dynamicGapSteps(t, inputData, (w) => [w]),
    );
  });

  it('dynamic gap duration - nested tuple key', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQueryNestedKey(df, session_window(col('eventTime'), gapDuration('sessionId.`1`')));
      },
      'append',
      (t) => dynamicGapSteps(t, inputData, (w) => [nested(w)]),
    );
  });

  it('dynamic gap duration - multiple col key', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQueryMultiColKey(df, session_window(col('eventTime'), gapDuration('aggKeySingle')));
      },
      'append',
      (t) => dynamicGapSteps(t, inputData, (w) => [pair(w), w]),
    );
  });

  it('append mode - session window - no key', async () => {
    await expectRefused((s) => sessionWindowQueryOnGlobalKey(memoryStream(s)[1]), 'append', ['Global aggregation with session window', 'not supported']);
  });

  it('update mode - session window', async () => {
    await expectRefused((s) => sessionWindowQuery(pairStream(s)[1]), 'update', ['Update output mode', 'not supported', 'for session window']);
  });

  it('update mode - session window - no key', async () => {
    await expectRefused((s) => sessionWindowQueryOnGlobalKey(memoryStream(s)[1]), 'update', ['Update output mode', 'not supported', 'for session window']);
  });

  it('session window with async state checkpointing', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        return sessionWindowQuery(df);
      },
      'append',
      (t) => appendModeSteps(t, inputData, false),
    );
  });

  it('session window with first/last function', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        // Split the lines into words, treat words as sessionId of events
        const events = df
          .select(col('_1').alias('value'), col('_2').alias('timestamp'))
          .withColumn('eventTime', col('timestamp').cast('timestamp'))
          .withWatermark('eventTime', '30 seconds')
          .selectExpr("explode(split(value, ' ')) AS sessionId", 'eventTime');
        return events
          .groupBy(session_window(col('eventTime'), '10 seconds').alias('session'), col('sessionId'))
          .agg(
            first(col('eventTime')).alias('firstTime'),
            last(col('eventTime')).alias('lastTime'),
            min_by(col('eventTime'), col('eventTime')).alias('minTime'),
            max_by(col('eventTime'), col('eventTime')).alias('maxTime'),
          )
          .selectExpr('sessionId', 'CAST(session.start AS LONG)', 'CAST(session.end AS LONG)', 'CAST(minTime AS LONG)', 'CAST(maxTime AS LONG)');
      },
      'append',
      async (t) => {
        addData(inputData, ['a', 41]);
        addData(inputData, ['a', 42]);
        addData(inputData, ['a', 40]);
        await t.checkAnswer();
        addData(inputData, ['b', 100]); // Move the watermark past the end of the session.
        addData(inputData, ['b', 101]); // Trigger the session production.
        await t.checkAnswer(['a', 40, 52, 40, 42]);
      },
    );
  });

  it('session window - with more aggregation functions and UDAFs', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = pairStream(s);
        inputData = m;
        const events = df
          .select(col('_1').alias('value'), col('_2').alias('timestamp'))
          .withColumn('eventTime', col('timestamp').cast('timestamp'))
          .withColumn('single', col('timestamp'))
          .withColumn('double', struct(col('single'), col('single')))
          .withColumn('triple', struct(col('double'), col('single')))
          .withWatermark('eventTime', '30 seconds')
          .selectExpr("explode(split(value, ' ')) AS sessionId", 'eventTime', 'single', 'triple');
        return events
          .groupBy(session_window(col('eventTime'), '10 seconds').alias('session'), col('sessionId'))
          .agg(
            mean(col('single')).alias('meanTime'),
            median(col('single')).alias('medianTime'),
            stddev(col('single')).alias('stdDevTime'),
            variance(col('single')).alias('varTime'),
            first(col('triple')).alias('firstTimeTriple'),
            last(col('triple')).alias('lastTimeTriple'),
            sum(col('single')).alias('mySumSingle'),
          )
          .selectExpr(
            'sessionId',
            'CAST(session.start AS LONG)',
            'CAST(session.end AS LONG)',
            'CAST(meanTime AS LONG)',
            'CAST(medianTime AS LONG)',
            'CAST(stdDevTime AS LONG)',
            'CAST(varTime AS LONG)',
            'mySumSingle',
          );
      },
      'append',
      async (t) => {
        addData(inputData, ['a', 41]);
        addData(inputData, ['a', 42]);
        addData(inputData, ['a', 40]);
        await t.checkAnswer();
        addData(inputData, ['b', 100]); // Move the watermark past the end of the session.
        addData(inputData, ['b', 101]); // Trigger the session production.
        await t.checkAnswer(['a', 40, 52, 41, 41, 1, 1, 123]);
      },
    );
  });
});
