/**
 * Spark's scenarios for several stateful operators in one query (MultiStatefulOperatorsSuite.scala),
 * with Spark's inputs and expected outputs, run against Sluice's chained stateful operators in
 * append mode. Each `it` keeps the Spark test's name. Two revisions of Spark's suite are ported:
 * the current one (describe 'MultiStatefulOperatorsSuite'), and the two scenarios of an earlier
 * revision that the current one no longer has (describe 'MultiStatefulOperatorsSuite, earlier
 * revision'): a time-interval left outer join -> aggregation on other data, and one whose range
 * condition bounds one side only. Both revisions name a test "stream-stream time interval left
 * outer join -> aggregation, append mode".
 *
 * How Spark's StreamTest actions are read here (the MultiTest harness below):
 * - AddData(a, ...): rows added to one memory stream; AddData(a, ...), AddData(b, ...) one after
 *   the other may land in one batch or two, as in Spark.
 * - MultiAddData(a, ...)(b, ...) / MultiAddData((a, rows), (b, rows)): rows added to both streams
 *   between two triggers, so that one batch reads them all (Spark adds them under the query's lock).
 * - CheckAnswer(rows): every row the memory sink holds; CheckNewAnswer(rows): the rows written
 *   since the last check. Both compare multisets (Spark sorts both sides), after processing all
 *   available data (and the no-data batch a moved watermark brings).
 * - assertNumStateRows(Seq(a, b, ...)) and assertNumRowsDroppedByWatermark(Seq(...)) are the
 *   suite's own private helpers (not StateStoreMetricsTest's): one entry per state operator, in
 *   the order of the progress's stateOperators (Spark's executedPlan.collect: the operator
 *   nearest the sink first). assertNumStateRows reads numRowsTotal of the last progress only;
 *   assertNumRowsDroppedByWatermark reads numRowsDroppedByWatermark of the last progress whose
 *   numInputRows is not 0 (the last data batch, not the no-data batch after it), and sums nothing.
 *   Both process all available data first.
 * - Spark's `timestamp_seconds($"value")` is timestamp_seconds; `window.start` cast to long is
 *   seconds. Timestamp.valueOf(...) is that wall-clock time in UTC (the session time zone of
 *   Spark's tests that print them).
 *
 * Adaptations (the query is Spark's; only what Sluice's API cannot spell is respelled):
 * - withColumnRenamed("value", "value1"): select(col('value').alias('value1')) (the only column).
 *   `.toDF("a", "b")` of a tuple stream: a select of `_1 AS a, _2 AS b`.
 * - Sluice has no DataFrame-qualified column references (`df.as("left")`, `$"left.eventTime"`,
 *   `s1.id1`) and refuses a join condition naming a column both sides have: where Spark's sides
 *   share column names (eventTime, id, ts), each side's columns are renamed first (leftEventTime /
 *   rightEventTime, leftId / rightId, ...); where they do not (id1, timestamp1 / id2, timestamp2),
 *   only the qualifier is dropped. The output values and their order are Spark's.
 * - "aggregation -> stream deduplication, append mode" runs two queries. Spark's MemoryStream
 *   drops the rows a query committed (MemoryStream.commit), so the second query on the same
 *   inputData reads only the rows its own AddData adds; Sluice's memory stream keeps every row for
 *   every new query, so the second query reads a memory stream of its own, given the same rows.
 *   Its `unix_micros(windowTime)`: Sluice's timestamps are milliseconds, so window_time is the
 *   window's end less 1 ms (Spark's less 1 µs); the port reads `unix_millis(windowTime)`, which is
 *   the same in both (Spark truncates 9999.999 ms to 9999), and expects Spark's microseconds
 *   divided by 1000, truncated.
 * - `CAST(window.start AS STRING)`: Sluice's cast gives ISO text (2023-01-01T01:00:00.000Z); the
 *   port formats with `date_format(..., 'yyyy-MM-dd HH:mm:ss')`, Spark's cast text in UTC, and
 *   keeps Spark's expected strings.
 * - Spark's RecordClass(id: Integer, ts: Timestamp) Datasets: memory streams of `id INT, ts TIMESTAMP`.
 *
 * Not ported, and why:
 * - "join on time interval -> window agg, append mode, should fail" (earlier revision only): it
 *   asserted that Spark refuses a time-interval join followed by an aggregation ("Detected pattern
 *   of possible 'correctness' issue"). Spark's current revision dropped it: Spark now runs that
 *   plan, delaying the watermark of the operators after the join by the join's interval, and the
 *   current revision's "stream-stream time interval left outer/right outer join -> aggregation"
 *   tests (ported below) check its answers. The two cannot both hold; the current one is ported.
 *   (Sluice delays that watermark too: a join passes on the least of its sides' state watermarks.)
 * - The `Execute { query => ... }` steps of "stream-stream time interval left outer join ->
 *   aggregation, append mode" and "stream-stream time interval right outer join -> aggregation,
 *   append mode": they read Spark's physical plan (eventTimeWatermarkForLateEvents and
 *   eventTimeWatermarkForEviction of StreamingSymmetricHashJoinExec and StateStoreSaveExec), which
 *   Sluice does not expose. Their AddData / CheckAnswer steps are ported.
 * - "stream-stream time interval join - output watermark for various intervals": it only asserts
 *   StreamingSymmetricHashJoinExec.produceOutputWatermark(0) of Spark's physical plan (an internal
 *   API); its only answer check is an empty CheckAnswer().
 * - Spark's `withSQLConf("spark.sql.streaming.unsupportedOperationCheck" -> "false")` (earlier
 *   revision): Sluice has no such switch; the two plans it wraps are not refused by Sluice, so they
 *   run as they are.
 * - Spark's suite has no test of flatMapGroupsWithState, of update or complete mode with several
 *   stateful operators, or of a join after an aggregation beyond SPARK-49829 (ported, in its own
 *   describe); nothing else is left out.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { col, count, expr, sum, window, window_time, type DataFrame, type MemoryStream, type Session } from '@sluice/driver';
import { removeTempDirs, withSession } from './helpers.js';
import { add, addTuples, memoryStream, runSparkTest, SPARK_TEST_CONF, SparkStreamTest } from './sparkStreamTest.js';

afterAll(removeTempDirs);

/** Spark's StreamTest actions, and the suite's per-operator assertions (see the file comment). */
class MultiTest extends SparkStreamTest {
  /** The suite's assertNumStateRows(Seq(...)): numRowsTotal per operator of the last progress. */
  async assertNumStateRows(numTotalRows: number[]): Promise<void> {
    await this.processAll();
    const last = this.query.recentProgress[this.query.recentProgress.length - 1];
    if (last === undefined) throw new Error('no progress made');
    expect(
      last.stateOperators.map((o) => o.numRowsTotal),
      `assertNumStateRows; progress: ${this.trace()}`,
    ).toEqual(numTotalRows);
  }

  /** The suite's assertNumRowsDroppedByWatermark(Seq(...)): per operator, of the last progress that read rows. */
  async assertNumRowsDroppedByWatermark(numRowsDroppedByWatermark: number[]): Promise<void> {
    await this.processAll();
    const withData = this.query.recentProgress.filter((p) => p.numInputRows !== 0);
    const last = withData[withData.length - 1];
    if (last === undefined) throw new Error('no progress read rows');
    expect(
      last.stateOperators.map((o) => o.numRowsDroppedByWatermark),
      `assertNumRowsDroppedByWatermark; progress: ${this.trace()}`,
    ).toEqual(numRowsDroppedByWatermark);
  }
}

/** Runs a Spark testStream: a session of the suite's conf, the query started, stopped at the end. */
const testStream = (df: (s: Session) => DataFrame, body: (t: MultiTest) => Promise<void>): Promise<void> =>
  runSparkTest((s, d) => new MultiTest(s, d), df, body);

/** Scala's `a to b`. */
const to = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
/** Spark's Timestamp.valueOf, as that wall-clock time in UTC. */
const ts = (s: string): Date => new Date(`${s.replace(' ', 'T')}Z`);

/** `$"window".getField(name).cast("long")`. */
const windowField = (name: string) => col('window').getField(name).cast('long');

// ---- MultiStatefulOperatorsSuite --------------------------------------------------------------

describe('MultiStatefulOperatorsSuite', () => {
  it('window agg -> window agg, append mode', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData = m;
        return df
          .withColumn('eventTime', expr('timestamp_seconds(value)'))
          .withWatermark('eventTime', '0 seconds')
          .groupBy(window(col('eventTime'), '5 seconds').alias('window'))
          .agg(count('*').alias('count'))
          .groupBy(window(col('window'), '10 seconds'))
          .agg(count('*').alias('count'), sum('count').alias('sum'))
          .select(windowField('start'), col('count'), col('sum'));
      },
      async (t) => {
        add(inputData, ...to(10, 21));
        // op1 W (0, 21): output [10, 15) 5, [15, 20) 5; state [20, 25) 2
        // op2 W (0, 21): output [10, 20) (2, 10); state None
        await t.checkNewAnswer([10, 2, 10]);
        await t.assertNumStateRows([0, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);

        add(inputData, ...to(10, 29));
        // op1 W (21, 21): [10, 15) 5 and [15, 20) 5 late; state [20, 25) 7, [25, 30) 5
        // op1 W (21, 29): output [20, 25) 7; state [25, 30) 5
        // op2 W (21, 29): state [20, 30) (1, 7)
        await t.checkNewAnswer();
        await t.assertNumStateRows([1, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 2]);

        // Move the watermark.
        add(inputData, 30, 31);
        // op1 W (29, 31): output [25, 30) 5; state [30, 35) 2
        // op2 W (29, 31): output [20, 30) (2, 12); state None
        await t.checkNewAnswer([20, 2, 12]);
        await t.assertNumStateRows([0, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);
      },
    );
  });

  it('agg -> agg -> agg, append mode', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData = m;
        return df
          .withColumn('eventTime', expr('timestamp_seconds(value)'))
          .withWatermark('eventTime', '0 seconds')
          .groupBy(window(col('eventTime'), '5 seconds').alias('window'))
          .agg(count('*').alias('count'))
          .groupBy(window(window_time(col('window')), '10 seconds'))
          .agg(count('*').alias('count'), sum('count').alias('sum'))
          .groupBy(window(window_time(col('window')), '20 seconds'))
          .agg(count('*').alias('count'), sum('sum').alias('sum'))
          .select(windowField('start'), windowField('end'), col('count'), col('sum'));
      },
      async (t) => {
        add(inputData, ...to(0, 37));
        // op1 W (0, 37): output [0, 5) .. [30, 35) 5 each; state [35, 40) 3
        // op2 W (0, 37): output [0, 10) (2, 10), [10, 20) (2, 10), [20, 30) (2, 10); state [30, 40) (1, 5)
        // op3 W (0, 37): output [0, 20) (2, 20); state [20, 40) (1, 10)
        await t.checkNewAnswer([0, 20, 2, 20]);
        await t.assertNumStateRows([1, 1, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 0, 0]);

        add(inputData, ...to(30, 60));
        // op1 W (37, 37): dropped rows: [30, 35), 1 row <= 35, 36, 37 are still in effect
        // op1 W (37, 60): output [35, 40) 8, [40, 45) .. [55, 60) 5; state [60, 65) 1
        // op2 W (37, 60): output [30, 40) (2, 13), [40, 50) (2, 10), [50, 60) (2, 10); state None
        // op3 W (37, 60): output [20, 40) (2, 23), [40, 60) (2, 20); state None
        await t.checkNewAnswer([20, 40, 2, 23], [40, 60, 2, 20]);
        await t.assertNumStateRows([0, 0, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 0, 1]);
      },
    );
  });

  it('stream deduplication -> aggregation, append mode', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData = m;
        const deduplication = df
          .withColumn('eventTime', expr('timestamp_seconds(value)'))
          .withWatermark('eventTime', '10 seconds')
          .dropDuplicates(['value', 'eventTime']);
        return deduplication
          .groupBy(window(col('eventTime'), '5 seconds').alias('window'))
          .agg(count('*').alias('count'), sum('value').alias('sum'))
          .select(windowField('start'), col('count'));
      },
      async (t) => {
        add(inputData, ...to(1, 15));
        // op1 W (0, 5): state 6 .. 15
        // op2 W (0, 5): output [0, 5) 4; state [5, 10) 5, [10, 15) 5, [15, 20) 1
        await t.checkNewAnswer([0, 4]);
        await t.assertNumStateRows([3, 10]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);
      },
    );
  });

  it('join -> window agg, append mode', async () => {
    let input1!: MemoryStream;
    let input2!: MemoryStream;
    await testStream(
      (s) => {
        const [m1, d1] = memoryStream(s);
        const [m2, d2] = memoryStream(s);
        [input1, input2] = [m1, m2];
        const inputDF1 = d1
          .select(col('value').alias('value1'))
          .withColumn('eventTime1', expr('timestamp_seconds(value1)'))
          .withWatermark('eventTime1', '0 seconds');
        const inputDF2 = d2
          .select(col('value').alias('value2'))
          .withColumn('eventTime2', expr('timestamp_seconds(value2)'))
          .withWatermark('eventTime2', '0 seconds');
        return inputDF1
          .join(inputDF2, expr('eventTime1 = eventTime2'), 'inner')
          .groupBy(window(col('eventTime1'), '5 seconds').alias('window'))
          .agg(count('*').alias('count'))
          .select(windowField('start'), col('count'));
      },
      async (t) => {
        await t.multiAdd(
          () => add(input1, ...to(1, 4)),
          () => add(input2, ...to(1, 4)),
        );
        // op1 W (0, 4): join state None
        // op2 W (0, 4): output None; state [0, 5) 4
        await t.checkNewAnswer();
        await t.assertNumStateRows([1, 0]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);

        // Move the watermark
        await t.multiAdd(
          () => add(input1, 5),
          () => add(input2, 5),
        );
        // op1 W (4, 5): join output (5, 5) in the data batch; state None
        // op2 W (4, 5): output [0, 5) 4; state [5, 10) 1
        await t.checkNewAnswer([0, 4]);
        await t.assertNumStateRows([1, 0]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);
      },
    );
  });

  it('aggregation -> stream deduplication, append mode', async () => {
    /** aggStream over a memory stream of its own (see the file comment). */
    const aggStream = (df: DataFrame): DataFrame =>
      df
        .withColumn('eventTime', expr('timestamp_seconds(value)'))
        .withWatermark('eventTime', '0 seconds')
        .groupBy(window(col('eventTime'), '5 seconds').alias('window'))
        .agg(count('*').alias('count'))
        .withColumn('windowEnd', expr('window.end'));

    // dropDuplicates from aggStream without event time column for dropDuplicates - the
    // state does not get trimmed due to watermark advancement.
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData = m;
        return aggStream(df).dropDuplicates(['count', 'windowEnd']).select(col('windowEnd').cast('long'), col('count'));
      },
      async (t) => {
        add(inputData, 1, 5, 10, 15);
        // op1 W (0, 15): output [0, 5) 1, [5, 10) 1, [10, 15) 1; state [15, 20) 1
        // op2 W (0, 15): output (5, 1), (10, 1), (15, 1); state (5, 1), (10, 1), (15, 1)
        await t.checkNewAnswer([5, 1], [10, 1], [15, 1]);
        await t.assertNumStateRows([3, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);
      },
    );

    // Similar to the above but add event time. The dedup state will get trimmed.
    let inputData2!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData2 = m;
        return aggStream(df)
          .withColumn('windowTime', expr('window_time(window)'))
          .withColumn('windowTimeMillis', expr('unix_millis(windowTime)'))
          .dropDuplicates(['count', 'windowEnd', 'windowTime'])
          .select(col('windowEnd').cast('long'), col('windowTimeMillis').cast('long'), col('count'));
      },
      async (t) => {
        add(inputData2, 1, 5, 10, 15);
        // op1 W (0, 15): output [0, 5) 1, [5, 10) 1, [10, 15) 1; state [15, 20) 1
        // op2 W (0, 15): output (5, 4999999, 1), (10, 9999999, 1), (15, 14999999, 1);
        //   state None - trimmed by watermark
        // Spark's unix_micros 4999999, 9999999, 14999999: in milliseconds 4999, 9999, 14999.
        await t.checkNewAnswer([5, 4999, 1], [10, 9999, 1], [15, 14999, 1]);
        await t.assertNumStateRows([0, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);
      },
    );
  });

  it("join with range join on non-time intervals -> window agg, append mode, shouldn't fail", async () => {
    let input1!: MemoryStream;
    let input2!: MemoryStream;
    await testStream(
      (s) => {
        const [m1, d1] = memoryStream(s);
        const [m2, d2] = memoryStream(s, '_1 INT, _2 INT');
        [input1, input2] = [m1, m2];
        const inputDF1 = d1
          .select(col('value').alias('value1'))
          .withColumn('eventTime1', expr('timestamp_seconds(value1)'))
          .withColumn('v1', expr('timestamp_seconds(value1)'))
          .withWatermark('eventTime1', '0 seconds');
        const inputDF2 = d2
          .select(col('_1').alias('start'), col('_2').alias('end'))
          .withColumn('eventTime2Start', expr('timestamp_seconds(start)'))
          .withColumn('start2', expr('timestamp_seconds(start)'))
          .withColumn('end2', expr('timestamp_seconds(end)'))
          .withWatermark('eventTime2Start', '0 seconds');
        return inputDF1
          .join(inputDF2, expr('v1 >= start2 AND v1 < end2 AND eventTime1 = start2'), 'inner')
          .groupBy(window(col('eventTime1'), '5 seconds').alias('window'))
          .agg(count('*').alias('count'))
          .select(windowField('start'), col('count'));
      },
      async (t) => {
        add(input1, 1, 2, 3, 4);
        addTuples(input2, ['_1', '_2'], [1, 2], [2, 3], [3, 4], [4, 5]);
        await t.checkNewAnswer();
        await t.assertNumStateRows([1, 0]);
        await t.assertNumRowsDroppedByWatermark([0, 0]);
      },
    );
  });

  /**
   * The two streams of (id, timestamp) of the time-interval outer joins: s1 (id1, timestamp1) and
   * s2 (id2, timestamp2), each watermarked 0 seconds, joined on id within an hour, then a
   * 10-minute window of `windowOf` counted, its bounds cast to strings.
   */
  function intervalJoinAgg(s: Session, joinType: string, windowOf: string): { input1: MemoryStream; input2: MemoryStream; agg: DataFrame } {
    const [input1, d1] = memoryStream(s, '_1 STRING, _2 TIMESTAMP');
    const [input2, d2] = memoryStream(s, '_1 STRING, _2 TIMESTAMP');
    const s1 = d1.selectExpr('_1 AS id1', '_2 AS timestamp1').withWatermark('timestamp1', '0 seconds');
    const s2 = d2.selectExpr('_1 AS id2', '_2 AS timestamp2').withWatermark('timestamp2', '0 seconds');
    const s3 = s1.join(s2, expr('id1 = id2 AND (timestamp1 BETWEEN timestamp2 - INTERVAL 1 hour AND timestamp2 + INTERVAL 1 hour)'), joinType);
    const agg = s3
      .groupBy(window(col(windowOf), '10 minutes'))
      .agg(count('*').alias('cnt'))
      .selectExpr("date_format(window.start, 'yyyy-MM-dd HH:mm:ss') AS window_start", "date_format(window.end, 'yyyy-MM-dd HH:mm:ss') AS window_end", 'cnt');
    return { input1, input2, agg };
  }
  const addIdTs = (m: MemoryStream, ...rows: Array<[string, Date]>): number => addTuples(m, ['_1', '_2'], ...rows);

  it('stream-stream time interval left outer join -> aggregation, append mode', async () => {
    // This test performs stream-stream time interval left outer join against two streams, and
    // applies tumble time window aggregation based on the event time column from the output of
    // stream-stream join.
    let input1!: MemoryStream;
    let input2!: MemoryStream;
    await testStream(
      (s) => {
        const made = intervalJoinAgg(s, 'leftOuter', 'timestamp1');
        [input1, input2] = [made.input1, made.input2];
        return made.agg;
      },
      async (t) => {
        await t.multiAdd(
          () => addIdTs(input1, ['1', ts('2023-01-01 01:00:10')], ['2', ts('2023-01-01 01:00:30')]),
          () => addIdTs(input2, ['1', ts('2023-01-01 01:00:20')]),
        );
        // no-data batch: global watermark (0, 2023-01-01 01:00:20); join OW 2023-01-01 00:00:19.999999
        // aggregation state ("2023-01-01 01:00:00", "2023-01-01 01:10:00", 1), result None
        await t.checkAnswer();

        await t.multiAdd(
          () => addIdTs(input1, ['5', ts('2023-01-01 01:15:00')]),
          () => addIdTs(input2, ['6', ts('2023-01-01 01:15:00')]),
        );
        // no-data batch: global watermark (2023-01-01 01:00:20, 2023-01-01 01:15:00);
        // join OW 2023-01-01 00:14:59.999999; aggregation result None
        await t.checkAnswer();

        await t.multiAdd(
          () => addIdTs(input1, ['5', ts('2023-01-01 02:16:00')]),
          () => addIdTs(input2, ['6', ts('2023-01-01 02:16:00')]),
        );
        // no-data batch: global watermark (2023-01-01 01:15:00, 2023-01-01 02:16:00);
        // join OW 2023-01-01 01:15:59.999999, result ("1", 01:00:30, null, null), ("5", 01:15:00, null, null)
        // aggregation result ("2023-01-01 01:00:00", "2023-01-01 01:10:00", 2)
        await t.checkAnswer(['2023-01-01 01:00:00', '2023-01-01 01:10:00', 2]);
      },
    );
  });

  // This test case simply swaps the left and right from the test case "stream-stream time interval
  // left outer join -> aggregation, append mode". This test case intends to verify the behavior
  // that both event time columns from both inputs are available to use after stream-stream join.
  it('stream-stream time interval right outer join -> aggregation, append mode', async () => {
    let input1!: MemoryStream;
    let input2!: MemoryStream;
    await testStream(
      (s) => {
        const made = intervalJoinAgg(s, 'rightOuter', 'timestamp2');
        [input1, input2] = [made.input1, made.input2];
        return made.agg;
      },
      async (t) => {
        await t.multiAdd(
          () => addIdTs(input2, ['1', ts('2023-01-01 01:00:10')], ['2', ts('2023-01-01 01:00:30')]),
          () => addIdTs(input1, ['1', ts('2023-01-01 01:00:20')]),
        );
        await t.checkAnswer();

        await t.multiAdd(
          () => addIdTs(input2, ['5', ts('2023-01-01 01:15:00')]),
          () => addIdTs(input1, ['6', ts('2023-01-01 01:15:00')]),
        );
        await t.checkAnswer();

        await t.multiAdd(
          () => addIdTs(input2, ['5', ts('2023-01-01 02:16:00')]),
          () => addIdTs(input1, ['6', ts('2023-01-01 02:16:00')]),
        );
        await t.checkAnswer(['2023-01-01 01:00:00', '2023-01-01 01:10:00', 2]);
      },
    );
  });
});

// ---- the earlier revision's tests -------------------------------------------------------------

describe('MultiStatefulOperatorsSuite: a join of two aggregations', () => {
  it('SPARK-49829 time window agg per each source followed by stream-stream join', async () => {
    let inputStream1!: MemoryStream;
    let inputStream2!: MemoryStream;
    await testStream(
      (s) => {
        const [m1, d1] = memoryStream(s, 'value LONG');
        const [m2, d2] = memoryStream(s, 'value LONG');
        [inputStream1, inputStream2] = [m1, m2];
        const df1 = d1.selectExpr('value', 'timestamp_seconds(value) AS ts').withWatermark('ts', '5 seconds');
        const df2 = d2.selectExpr('value', 'timestamp_seconds(value) AS ts').withWatermark('ts', '5 seconds');
        const df1Window = df1.groupBy(window(col('ts'), '10 seconds')).agg(sum('value').alias('sum_df1'));
        const df2Window = df2.groupBy(window(col('ts'), '10 seconds')).agg(sum('value').alias('sum_df2'));
        return df1Window.join(df2Window, 'window', 'inner').selectExpr('CAST(window.end AS long) AS window_end', 'sum_df1', 'sum_df2');
      },
      async (t) => {
        await t.multiAdd(
          () => add(inputStream1, 1, 2, 3, 4, 5),
          () => add(inputStream2, 5, 6, 7, 8, 9),
        );
        // watermark: 5 - 5 = 0
        await t.checkNewAnswer();
        await t.multiAdd(
          () => add(inputStream1, 11, 12, 13, 14, 15),
          () => add(inputStream2, 15, 16, 17, 18, 19),
        );
        // watermark: 15 - 5 = 10 (windows for [0, 10) are completed)
        await t.checkNewAnswer([10, 15, 35]);
        await t.multiAdd(
          () => add(inputStream1, 100),
          () => add(inputStream2, 101),
        );
        // watermark: 100 - 5 = 95 (windows for [0, 20) are completed)
        await t.checkNewAnswer([20, 65, 85]);
      },
    );
  });
});

describe('MultiStatefulOperatorsSuite, earlier revision', () => {
  it('stream-stream time interval left outer join -> aggregation, append mode', async () => {
    let input1!: MemoryStream;
    let input2!: MemoryStream;
    await testStream(
      (s) => {
        const [m1, i1] = memoryStream(s, '_1 TIMESTAMP, _2 STRING, _3 STRING');
        const [m2, i2] = memoryStream(s, '_1 TIMESTAMP, _2 STRING, _3 STRING');
        [input1, input2] = [m1, m2];
        const df1 = i1.selectExpr('_1 as leftEventTime', '_2 as leftId', '_3 as comment').withWatermark('leftEventTime', '2 minutes');
        const df2 = i2.selectExpr('_1 as rightEventTime', '_2 as rightId', '_3 as name').withWatermark('rightEventTime', '4 minutes');
        const joined = df1.join(
          df2,
          expr('leftId = rightId AND leftEventTime BETWEEN rightEventTime - INTERVAL 40 seconds AND rightEventTime + INTERVAL 30 seconds'),
          'leftOuter',
        );
        return joined
          .groupBy(window(col('leftEventTime'), '30 seconds'))
          .agg(count('*').alias('cnt'))
          .selectExpr('window.start AS window_start', 'window.end AS window_end', 'cnt');
      },
      async (t) => {
        const ev = (m: MemoryStream, ...rows: Array<[Date, string, string]>) => addTuples(m, ['_1', '_2', '_3'], ...rows);
        await t.multiAdd(
          () =>
            ev(
              input1,
              [ts('2020-01-01 00:00:00'), 'abc', 'has no join partner'],
              [ts('2020-01-02 00:00:00'), 'abc', 'joined with A'],
              [ts('2020-01-02 01:00:00'), 'abc', 'joined with B'],
            ),
          () => ev(input2, [ts('2020-01-02 00:00:10'), 'abc', 'A'], [ts('2020-01-02 00:59:59'), 'abc', 'B'], [ts('2020-01-02 02:00:00'), 'abc', 'C']),
        );
        // no-data batch: global watermark (0, 2020-01-02 00:58:00); join evicts
        // (2020-01-01 00:00:00, "abc", "has no join partner", null, null, null)
        // aggregation state (2020-01-02 01:00:00, 2020-01-02 01:00:30, 1)
        await t.checkNewAnswer([ts('2020-01-01 00:00:00'), ts('2020-01-01 00:00:30'), 1], [ts('2020-01-02 00:00:00'), ts('2020-01-02 00:00:30'), 1]);

        await t.multiAdd(
          () => ev(input1, [ts('2020-01-05 00:00:00'), 'abc', 'joined with D']),
          () => ev(input2, [ts('2020-01-05 00:00:10'), 'abc', 'D']),
        );
        // no-data batch: global watermark (2020-01-02 00:58:00, 2020-01-04 23:56:10)
        // aggregation state (2020-01-05 00:00:00, 2020-01-05 00:00:30, 1)
        await t.checkNewAnswer([ts('2020-01-02 01:00:00'), ts('2020-01-02 01:00:30'), 1]);
      },
    );
  });

  it('stream-stream time interval left outer join (left side condition) -> time window aggregation', async () => {
    let adImprStream!: MemoryStream;
    let adClickStream!: MemoryStream;
    await testStream(
      (s) => {
        const [m1, i1] = memoryStream(s, 'id INT, ts TIMESTAMP');
        const [m2, i2] = memoryStream(s, 'id INT, ts TIMESTAMP');
        [adImprStream, adClickStream] = [m1, m2];
        const adImpr = i1.select(col('id').alias('tb1Id'), col('ts').alias('tb1Ts')).withWatermark('tb1Ts', '1 hour');
        const adClick = i2.select(col('id').alias('tb2Id'), col('ts').alias('tb2Ts')).withWatermark('tb2Ts', '1 hour');
        return adImpr
          .join(adClick, expr('tb1Id == tb2Id AND tb1Ts + interval 5 minutes > tb2Ts'), 'leftOuter')
          .groupBy(window(col('tb1Ts'), '5 minutes'))
          .count()
          .select(col('window.start'), col('window.end'), col('count'));
      },
      async (t) => {
        const rec = (m: MemoryStream, ...rows: Array<[number, Date]>) => addTuples(m, ['id', 'ts'], ...rows);
        await t.multiAdd(
          () => rec(adImprStream, [1, ts('2022-01-01 01:30:55.888')], [2, ts('2022-01-01 03:30:55.888')], [4, ts('2022-01-01 05:30:55.888')]),
          () => rec(adClickStream, [1, ts('2022-01-01 01:31:55.888')], [3, ts('2022-01-01 02:40:55.888')], [6, ts('2022-01-01 05:30:55.888')]),
        );
        await t.checkNewAnswer([ts('2022-01-01 01:30:00'), ts('2022-01-01 01:35:00'), 1], [ts('2022-01-01 03:30:00'), ts('2022-01-01 03:35:00'), 1]);
      },
    );
  });
});

// ---- Beyond Spark's suite ---------------------------------------------------------------------
// dropDuplicatesWithinWatermark after another stateful operator: Spark runs these plans, and its
// suites have no scenario of them. The expected rows follow Spark's rules, step by step in the
// comments: the deduplication drops late rows by the watermark of the batch before, keeps a key
// until its event time plus the delay of the watermark its column carries, and evicts by the
// batch's watermark (after a join, the join's output watermark).

describe('dropDuplicatesWithinWatermark after another stateful operator', () => {
  it('window agg -> dropDuplicatesWithinWatermark on the count, by window_time', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData = m;
        return df
          .withColumn('eventTime', expr('timestamp_seconds(value)'))
          .withWatermark('eventTime', '5 seconds')
          .groupBy(window(col('eventTime'), '5 seconds').alias('window'))
          .agg(count('*').alias('count'))
          .select(window_time(col('window')).alias('windowTime'), col('window').getField('end').alias('windowEnd'), col('count'))
          .dropDuplicatesWithinWatermark(['count'])
          .select(col('windowEnd').cast('long'), col('count'));
      },
      async (t) => {
        add(inputData, 1, 2, 6, 11);
        // op1 W (0, 6): output [0, 5) 2; state [5, 10) 1, [10, 15) 1
        // op2 W (0, 6): output (5, 2); state count 2 until 9.999
        await t.checkNewAnswer([5, 2]);
        await t.assertNumStateRows([1, 2]);

        add(inputData, 16, 17);
        // op1 W (6, 12): output [5, 10) 1; state [10, 15) 1, [15, 20) 2
        // op2 W (6, 12): output (10, 1); state count 1 until 14.999 (count 2 evicted)
        await t.checkNewAnswer([10, 1]);
        await t.assertNumStateRows([1, 2]);

        add(inputData, 30, 3);
        // op1 W (12, 25): 3 is late; output [10, 15) 1, [15, 20) 2; state [30, 35) 1
        // op2 W (12, 25): count 1 is a duplicate (kept until 14.999); count 2 is new, and expires at
        //   once (24.999 <= 25); state none
        await t.checkNewAnswer([20, 2]);
        await t.assertNumStateRows([0, 1]);
        await t.assertNumRowsDroppedByWatermark([0, 1]);
      },
    );
  });

  it("stream-stream join -> dropDuplicatesWithinWatermark, by the join side's event time", async () => {
    let input1!: MemoryStream;
    let input2!: MemoryStream;
    await testStream(
      (s) => {
        const [m1, d1] = memoryStream(s);
        const [m2, d2] = memoryStream(s);
        [input1, input2] = [m1, m2];
        const inputDF1 = d1
          .select(col('value').alias('value1'))
          .withColumn('eventTime1', expr('timestamp_seconds(value1)'))
          .withWatermark('eventTime1', '5 seconds');
        const inputDF2 = d2
          .select(col('value').alias('value2'))
          .withColumn('eventTime2', expr('timestamp_seconds(value2)'))
          .withWatermark('eventTime2', '5 seconds');
        return inputDF1
          .join(inputDF2, expr('eventTime1 = eventTime2'), 'inner')
          .select(expr('value1 % 10').alias('k'), col('eventTime1'))
          .dropDuplicatesWithinWatermark(['k'])
          .select(col('k'), col('eventTime1').cast('long'));
      },
      async (t) => {
        const both = (...values: number[]) =>
          t.multiAdd(
            () => add(input1, ...values),
            () => add(input2, ...values),
          );
        await both(1, 2);
        // op1 W (0, 0): join output 1, 2
        // op2 W (0, 0): output (1, 1), (2, 2); state k 1 until 6, k 2 until 7
        await t.checkNewAnswer([1, 1], [2, 2]);
        await t.assertNumStateRows([2, 4]);

        await both(11, 12);
        // op1 W (0, 7): join output 11, 12; rows 1 and 2 evicted
        // op2 W (0, 7): k 1 and k 2 are duplicates; both evicted (6, 7 <= 7)
        await t.checkNewAnswer();
        await t.assertNumStateRows([0, 4]);

        await both(13);
        // op2 W (7, 8): (3, 13) new; state k 3 until 18
        await t.checkNewAnswer([3, 13]);
        await t.assertNumStateRows([1, 6]);

        await both(2, 23);
        // op1 W (8, 18): 2 is late on both sides; join output 23
        // op2 W (8, 18): k 3 is a duplicate (until 18), then evicted
        await t.checkNewAnswer();
        await t.assertNumStateRows([0, 2]);
        await t.assertNumRowsDroppedByWatermark([0, 2]);

        await both(33);
        // op2 W (18, 28): (3, 33) new again
        await t.checkNewAnswer([3, 33]);
      },
    );
  });

  it('refusals: a window as its event time, and two event-time columns after a join', async () => {
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [, df] = memoryStream(s);
      const counts = df
        .withColumn('eventTime', expr('timestamp_seconds(value)'))
        .withWatermark('eventTime', '5 seconds')
        .groupBy(window(col('eventTime'), '5 seconds'))
        .agg(count('*').alias('count'));
      expect(() => counts.dropDuplicatesWithinWatermark(['count'])).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', column: 'window', message: expect.stringContaining('select window_time(window) first') }),
      );
      const side = (name: string) =>
        memoryStream(s)[1]
          .select(col('value').alias(`v${name}`))
          .withColumn(`t${name}`, expr(`timestamp_seconds(v${name})`))
          .withWatermark(`t${name}`, '5 seconds');
      const joined = side('1').join(side('2'), expr('t1 = t2'), 'inner');
      expect(() => joined.dropDuplicatesWithinWatermark(['v1'])).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('More than one event time columns are available') }),
      );
    });
  });
});
