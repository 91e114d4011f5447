/**
 * limit(n) on a stream: Spark's StreamSuite scenarios ("streaming limit ..." and the SPARK-30657 /
 * SPARK-30658 ones), with Spark's inputs and expected outputs, through Spark's StreamTest actions
 * (sparkStreamTest.ts). Sluice's limit emits the first rows of each batch in batch order (its map
 * tasks' splits in order, each split's rows in order), so where Spark checks only how many rows
 * came, these tests check which ones too.
 *
 * Adaptations:
 * - "streaming limit in multiple partitions" (and "by column"): Spark spreads the rows with
 *   repartition(2); Sluice runs no stateful operator after a repartition yet, so the rows come in
 *   four input partitions instead (a memory stream splits a batch over the executor's cores).
 * - "SPARK-30658: streaming limits before and after agg in complete mode": Sluice has no orderBy,
 *   so the limit after the aggregation takes any 3 of the result's rows (the aggregation's output
 *   has no order): the test checks that each batch gives 3 of the counts of 1 to 4, all 1.
 * - "SPARK-30657: streaming limit should not apply on limits on state subplans" limits a static
 *   DataFrame: Sluice refuses limit on a static DataFrame (not yet supported), with its code.
 * - "SPARK-30657: streaming limit optimization from StreamingLocalLimitExec to LocalLimitExec"
 *   inspects Spark's physical plan, which Sluice does not expose: not ported.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { count, Trigger, type DataFrame, type MemoryStream, type Session, type StreamingQueryProgress } from '@sluice/driver';
import { jsonLines, readSinkJson, removeTempDirs, tempDir, thrown, withSession, writeInput } from './helpers.js';
import { add, addTuples, memoryStream, multiset, runSparkTest, SPARK_TEST_CONF, SparkStreamTest, type Values } from './sparkStreamTest.js';

afterAll(removeTempDirs);

/** Spark's StreamTest actions, and progress's limit operator. */
class LimitTest extends SparkStreamTest {
  constructor(
    private readonly session: Session,
    df: DataFrame,
    mode: 'append' | 'complete',
  ) {
    super(session, df, mode);
  }

  /** The last progress's state operators: name, numRowsTotal, numRowsUpdated. */
  async stateOperators(): Promise<Array<[string, number, number]>> {
    await this.processAll();
    const last = this.query.recentProgress.at(-1);
    if (last === undefined) throw new Error('no progress made');
    return last.stateOperators.map((o) => [o.operatorName, o.numRowsTotal, o.numRowsUpdated]);
  }

  /** Every row the sink holds, as CheckAnswerRowsByFunc reads them. */
  async rows(): Promise<Values[]> {
    await this.processAll();
    return (await this.session.memoryTable(this.name)).map((r) => Object.values(r));
  }
}

/** testStream(df, mode): a session of Spark's test conf (and `conf`), the query started, stopped at the end. */
function testStream(
  df: (s: Session) => DataFrame,
  body: (t: LimitTest) => Promise<void>,
  mode: 'append' | 'complete' = 'append',
  conf: Record<string, unknown> = {},
): Promise<void> {
  return runSparkTest((s, d) => new LimitTest(s, d, mode), df, body, conf);
}

/** testStream over one memory stream (Spark's `MemoryStream[Int]`): `query` builds the frame from it, `body` adds to it and checks. */
function testOnStream(
  query: (df: DataFrame) => DataFrame,
  body: (input: MemoryStream, t: LimitTest) => Promise<void>,
  mode: 'append' | 'complete' = 'append',
  conf: Record<string, unknown> = {},
): Promise<void> {
  let input!: MemoryStream;
  return testStream(
    (s) => {
      const [m, df] = memoryStream(s);
      input = m;
      return query(df);
    },
    (t) => body(input, t),
    mode,
    conf,
  );
}

/** Scala's `a to b`. */
const to = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const rows = (...values: number[]): Values[] => values.map((v) => [v]);

describe('StreamSuite: streaming limit', () => {
  it('streaming limit without state', async () => {
    await testOnStream(
      (df) => df.limit(0),
      async (inputData1, t) => {
        add(inputData1, ...to(1, 8));
        await t.checkAnswer();
      },
    );
    await testOnStream(
      (df) => df.limit(4),
      async (inputData2, t) => {
        add(inputData2, ...to(1, 8));
        await t.checkAnswer(...rows(...to(1, 4)));
      },
    );
  });

  it('streaming limit with state', async () => {
    await testOnStream(
      (df) => df.limit(4),
      async (inputData, t) => {
        add(inputData, ...to(1, 2));
        await t.checkAnswer(...rows(...to(1, 2)));
        // Spark's name and metrics: one state row, the count, updated in a batch that emitted.
        expect(await t.stateOperators()).toEqual([['globalLimit', 1, 1]]);
        add(inputData, ...to(3, 6));
        await t.checkAnswer(...rows(...to(1, 4)));
        add(inputData, ...to(7, 9));
        await t.checkAnswer(...rows(...to(1, 4)));
        // A batch past the limit emits nothing and leaves the count as it was.
        expect(await t.stateOperators()).toEqual([['globalLimit', 1, 0]]);
      },
    );
  });

  it('streaming limit with other operators', async () => {
    await testOnStream(
      (df) => df.where('value % 2 = 1').limit(4),
      async (inputData, t) => {
        add(inputData, ...to(1, 5));
        await t.checkAnswer(...rows(1, 3, 5));
        add(inputData, ...to(6, 9));
        await t.checkAnswer(...rows(1, 3, 5, 7));
        add(inputData, ...to(10, 12));
        await t.checkAnswer(...rows(1, 3, 5, 7));
      },
    );
  });

  it('streaming limit with multiple limits', async () => {
    await testOnStream(
      (df) => df.limit(4).limit(2),
      async (inputData1, t) => {
        add(inputData1, 1);
        await t.checkAnswer(...rows(1));
        add(inputData1, ...to(2, 8));
        await t.checkAnswer(...rows(1, 2));
      },
    );
    await testOnStream(
      (df) => df.limit(4).limit(100).limit(3),
      async (inputData2, t) => {
        add(inputData2, 1, 2);
        await t.checkAnswer(...rows(1, 2));
        add(inputData2, ...to(3, 8));
        await t.checkAnswer(...rows(...to(1, 3)));
      },
    );
  });

  it('SPARK-30658: streaming limit before agg in complete mode', async () => {
    await testOnStream(
      (df) => df.limit(5).groupBy('value').agg(count('*').alias('count')),
      async (inputData, t) => {
        add(inputData, ...to(1, 3));
        await t.checkAnswer([1, 1], [2, 1], [3, 1]);
        add(inputData, ...to(1, 9));
        await t.checkAnswer([1, 2], [2, 2], [3, 1]);
      },
      'complete',
    );
  });

  it('SPARK-30658: streaming limits before and after agg in complete mode (after limit < before limit)', async () => {
    await testOnStream(
      (df) => df.limit(4).groupBy('value').agg(count('*').alias('count')).limit(3),
      async (inputData, t) => {
        /** The sink holds 3 of the counts of 1 to 4, each 1. */
        const threeOfTheFirstFour = async () => {
          const got = await t.rows();
          expect(got).toHaveLength(3);
          expect(
            multiset([
              [1, 1],
              [2, 1],
              [3, 1],
              [4, 1],
            ]),
          ).toEqual(expect.arrayContaining(multiset(got)));
        };
        // only 1 to 4 should be allowed to aggregate; Spark outputs the counts of 1 to 3 (ordered by value)
        add(inputData, ...to(1, 9));
        await threeOfTheFirstFour();
        // None of the new values should be allowed to aggregate: again 3 of the counts of 1 to 4
        add(inputData, ...to(2, 6));
        await threeOfTheFirstFour();
      },
      'complete',
      { 'sluice.sql.shuffle.partitions': 1 },
    );
  });

  it('SPARK-30658: streaming limits before and after agg in complete mode (before limit < after limit)', async () => {
    await testOnStream(
      (df) => df.limit(2).groupBy('value').agg(count('*').alias('count')).limit(3),
      async (inputData, t) => {
        add(inputData, ...to(1, 9));
        await t.checkAnswer([1, 1], [2, 1]);
        add(inputData, ...to(2, 6));
        await t.checkAnswer([1, 1], [2, 1]);
      },
      'complete',
      { 'sluice.sql.shuffle.partitions': 1 },
    );
  });

  it('SPARK-30657: streaming limit after streaming dedup in append mode', async () => {
    await testOnStream(
      (df) => df.dropDuplicates().limit(1),
      async (inputData, t) => {
        add(inputData, 1, 2);
        await t.checkAnswer([1]);
        add(inputData, 3, 4);
        await t.checkAnswer([1]);
      },
    );
  });

  it('streaming limit in update mode', async () => {
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [, df] = memoryStream(s);
      const start = df.limit(5).writeStream.format('memory').queryName('limit_update').outputMode('update').option('checkpointLocation', tempDir()).start();
      await expect(start).rejects.toMatchObject({
        code: 'UNSUPPORTED_OUTPUT_MODE',
        message: expect.stringContaining('Limits are not supported on streaming DataFrames/Datasets in Update output mode'),
      });
    });
  });

  it('streaming limit in multiple partitions', async () => {
    await testOnStream(
      (df) => df.limit(7),
      async (inputData, t) => {
        add(inputData, ...to(1, 10));
        // Spark: 7 rows, each <= 10; the first 7 of the batch, in order
        await t.checkAnswer(...rows(...to(1, 7)));
        add(inputData, ...to(11, 20));
        await t.checkAnswer(...rows(...to(1, 7)));
      },
      'append',
      { 'sluice.executor.cores': 4 },
    );
  });

  it('streaming limit in multiple partitions by column', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s, '_1 INT, _2 INT');
        inputData = m;
        return df.limit(7);
      },
      async (t) => {
        addTuples(inputData, ['_1', '_2'], [1, 0], [2, 0], [3, 1], [4, 1]);
        // Spark: 4 rows, each _1 <= 4
        await t.checkAnswer([1, 0], [2, 0], [3, 1], [4, 1]);
        addTuples(inputData, ['_1', '_2'], [5, 0], [6, 0], [7, 1], [8, 1]);
        // Spark: 7 rows, each _1 <= 8
        await t.checkAnswer([1, 0], [2, 0], [3, 1], [4, 1], [5, 0], [6, 0], [7, 1]);
      },
      'append',
      { 'sluice.executor.cores': 4 },
    );
  });

  it('SPARK-30657: streaming limit should not apply on limits on state subplans', async () => {
    await withSession(SPARK_TEST_CONF, async (s) => {
      const staticDF = s.createDataFrame([{ value: 1 }], 'value INT');
      expect(thrown(() => staticDF.limit(1))).toMatchObject({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('static DataFrame') });
    });
  });
});

describe('limit: restarts, complete mode, bad input, SQL', () => {
  it('the count survives a restart from the checkpoint: no rows past n', async () => {
    await testOnStream(
      (df) => df.limit(4),
      async (inputData, t) => {
        add(inputData, 1, 2);
        await t.checkNewAnswer([1], [2]);
        await t.restart();
        add(inputData, ...to(3, 6));
        await t.checkNewAnswer([3], [4]);
        await t.restart();
        add(inputData, ...to(7, 9));
        await t.checkNewAnswer();
        expect(await t.stateOperators()).toEqual([['globalLimit', 1, 0]]);
      },
    );
  });

  it('the count stays exact through repartitions: restarts with other partition and shard counts emit nothing past n', async () => {
    const input = tempDir();
    const out = join(tempDir(), 'out');
    const ckpt = join(tempDir(), 'ckpt');
    const file = (i: number, values: number[]) => writeInput(input, `part-${i}.json`, jsonLines(values.map((v) => ({ v }))), 1_700_000_000 + i);
    /** One run to the end of the input with this layout; its progress events. */
    const runWith = (partitions: number, shards: number): Promise<StreamingQueryProgress[]> =>
      withSession({ 'sluice.sql.streaming.stateStore.partitions': partitions, 'sluice.sql.streaming.stateStore.shards': shards }, async (s) => {
        const q = await s.readStream
          .format('json')
          .schema('v INT')
          .option('maxFilesPerTrigger', 1)
          .load(input)
          .limit(5)
          .writeStream.format('json')
          .option('checkpointLocation', ckpt)
          .trigger(Trigger.AvailableNow())
          .start(out);
        await q.awaitTermination();
        return q.recentProgress;
      });
    const emitted = () => readSinkJson(out).map((r) => r.v);

    file(0, [1, 2, 3]);
    await runWith(8, 2);
    expect(emitted()).toEqual([1, 2, 3]);
    file(1, [4, 5, 6, 7]);
    const moved = await runWith(5, 3);
    expect(moved[0]?.durationMs).toHaveProperty(['controlBatch.REPARTITION']);
    expect(moved[0]?.stateOperators[0]).toMatchObject({ operatorName: 'globalLimit', numShufflePartitions: 5, numStateStoreInstances: 3, numRowsTotal: 1 });
    expect(emitted()).toEqual([1, 2, 3, 4, 5]);
    file(2, [8, 9]);
    await runWith(3, 1);
    expect(emitted()).toEqual([1, 2, 3, 4, 5]);
  });

  it('after an aggregation in complete mode, each batch whole result is limited, without state', async () => {
    await testOnStream(
      (df) => df.groupBy('value').agg(count('*').alias('count')).limit(2),
      async (inputData, t) => {
        add(inputData, 1, 1, 2, 3);
        const first = await t.rows();
        expect(first).toHaveLength(2);
        expect(
          multiset([
            [1, 2],
            [2, 1],
            [3, 1],
          ]),
        ).toEqual(expect.arrayContaining(multiset(first)));
        // The next batch's result is limited again (a limit with state would emit nothing more).
        add(inputData, 4);
        const second = await t.rows();
        expect(second).toHaveLength(2);
        expect(
          multiset([
            [1, 2],
            [2, 1],
            [3, 1],
            [4, 1],
          ]),
        ).toEqual(expect.arrayContaining(multiset(second)));
        // The limit keeps no state: its operator holds no row.
        expect((await t.stateOperators()).find(([name]) => name === 'globalLimit')).toEqual(['globalLimit', 0, 0]);
      },
      'complete',
    );
  });

  it('a limit alone in complete mode is refused, as a query without an aggregation', async () => {
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [, df] = memoryStream(s);
      const start = df.limit(5).writeStream.format('memory').queryName('limit_complete').outputMode('complete').option('checkpointLocation', tempDir()).start();
      await expect(start).rejects.toMatchObject({ code: 'UNSUPPORTED_OUTPUT_MODE', message: expect.stringContaining('no streaming aggregations') });
    });
  });

  it('n must be a non-negative integer: INVALID_OPTION naming n', async () => {
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [, df] = memoryStream(s);
      for (const n of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3' as unknown as number]) {
        expect(thrown(() => df.limit(n))).toMatchObject({ code: 'INVALID_OPTION', option: 'n', message: expect.stringContaining('non-negative integer') });
      }
    });
  });

  it('LIMIT in session.sql is the same limit', async () => {
    let inputData!: MemoryStream;
    await testStream(
      (s) => {
        const [m, df] = memoryStream(s);
        inputData = m;
        df.createOrReplaceTempView('limited_input');
        return s.sql('SELECT value FROM limited_input WHERE value % 2 = 1 LIMIT 2');
      },
      async (t) => {
        add(inputData, 1, 2, 3, 4, 5);
        await t.checkAnswer([1], [3]);
        add(inputData, 7);
        await t.checkAnswer([1], [3]);
      },
    );
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [, df] = memoryStream(s);
      df.createOrReplaceTempView('limited_input');
      expect(thrown(() => s.sql('SELECT value FROM limited_input LIMIT -1'))).toMatchObject({ code: 'INVALID_OPTION', option: 'n' });
      expect(thrown(() => s.sql('SELECT value FROM limited_input LIMIT value'))).toMatchObject({ code: 'INVALID_OPTION', option: 'n' });
    });
  });
});
