/**
 * transformWithState end to end: the counter of docs/guides/arbitrary-state.md, and engine behaviour Spark's suites
 * (spark-transform-with-state.test.ts, spark-flat-map-groups.test.ts) do not cover.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, statefulProcessor, window, type Session } from '@sluice/driver';
import { fresh, memoryStream, runSparkTest, SPARK_TEST_CONF, SparkStreamTest } from './sparkStreamTest.js';
import { tempDir, withSession } from './helpers.js';

const fixtures = new URL('./fixtures/processors.mjs', import.meta.url);
const processor = (name: string) => statefulProcessor(fixtures, name);

describe('transformWithState timers', () => {
  it('runs the counter of docs/guides/arbitrary-state.md: event-time timers a minute past the watermark', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    const ts = (s: number) => new Date(s * 1000).toISOString();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [m, events] = memoryStream(s, 'id STRING, t TIMESTAMP');
        input = m;
        const counter = processor('Counter');
        return events
          .withWatermark('t', '1 minute')
          .groupBy('id')
          .transformWithState(counter, { outputSchema: 'id STRING, count LONG', outputMode: 'update', timeMode: 'eventTime' });
      },
      async (t) => {
        input.addData([
          { id: 'a', t: ts(10) },
          { id: 'a', t: ts(20) },
          { id: 'b', t: ts(30) },
        ]);
        await t.checkNewAnswer(['a', 2], ['b', 1]);
        // The watermark was 0 in both batches: both timers are at 60 s. This batch moves it to 140 s,
        // and the batch without data after it fires them.
        input.addData([{ id: 'a', t: ts(200) }]);
        await t.checkNewAnswer(['a', 3], ['a', -1], ['b', -1]);
        // Late for the watermark of 140 s: dropped.
        input.addData([{ id: 'c', t: ts(100) }]);
        await t.checkNewAnswer();
        // A new count for a, and its timer (at 140 s + 60 s) fires once the watermark reaches 240 s.
        input.addData([{ id: 'a', t: ts(300) }]);
        await t.checkNewAnswer(['a', 1], ['a', -1]);
        const ops = t.query.recentProgress.map((p) => p.stateOperators[0]);
        expect(ops.some((o) => o?.numRowsDroppedByWatermark === 1)).toBe(true);
        expect(ops.at(-1)?.operatorName).toBe('transformWithStateExec');
      },
    );
  });
});

describe('transformWithState state variables', () => {
  it('keeps list and map state per key, and clears them', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [m, df] = memoryStream(s, 'k STRING, v STRING');
        input = m;
        return df.groupBy('k').transformWithState(processor('ListAndMap'), { outputSchema: 'k STRING, size INT, v STRING, n LONG', outputMode: 'update' });
      },
      async (t) => {
        input.addData([
          { k: 'a', v: 'x' },
          { k: 'a', v: 'y' },
          { k: 'b', v: 'x' },
        ]);
        await t.checkNewAnswer(['a', 2, 'x', 1], ['a', 2, 'y', 1], ['b', 1, 'x', 1]);
        await t.restart();
        input.addData([
          { k: 'a', v: 'x' },
          { k: 'a', v: 'x' },
        ]);
        await t.checkNewAnswer(['a', 4, 'x', 3], ['a', 4, 'y', 1]);
        // Cleared at 4: a starts over; b kept its state.
        input.addData([
          { k: 'a', v: 'y' },
          { k: 'b', v: 'z' },
        ]);
        await t.checkNewAnswer(['a', 1, 'y', 1], ['b', 2, 'x', 1], ['b', 2, 'z', 1]);
        // Spark's rows: a list is one, a map one per entry: a's list and {y}, b's list and {x, z}.
        const last = t.query.lastProgress?.stateOperators[0];
        expect(last?.numRowsTotal).toBe(5);
        // Updated: a's append and map update (2), b's (2); removed: none.
        expect([last?.numRowsUpdated, last?.numRowsRemoved]).toEqual([4, 0]);
      },
    );
  });

  it('expires a value whose time to live has passed by the manual clock, and removes it from state', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    const clock = new ManualClock();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update', clock),
      (s) => {
        const [m, df] = memoryStream(s, 'k STRING, v STRING');
        input = m;
        return df
          .groupBy('k')
          .transformWithState(processor('TtlValue'), { outputSchema: 'k STRING, before STRING', outputMode: 'update', timeMode: 'processingTime' });
      },
      async (t) => {
        input.addData([
          { k: 'a', v: '1' },
          { k: 'b', v: '1' },
        ]);
        await t.advance(1000); // batch at 1 s: both expire at 11 s
        await t.checkNewAnswer(['a', null], ['b', null]);
        input.addData([{ k: 'a', v: '2' }]);
        await t.advance(5000); // 6 s: a refreshed, expires at 16 s
        await t.checkNewAnswer(['a', '1']);
        input.addData([
          { k: 'a', v: 'peek' },
          { k: 'b', v: 'peek' },
        ]);
        await t.advance(6000); // 12 s: b's value expired at 11 s
        await t.checkNewAnswer(['a', '2'], ['b', null]);
        expect(t.query.lastProgress?.stateOperators[0]?.numRowsTotal).toBe(1);
        expect(t.query.lastProgress?.stateOperators[0]?.customMetrics.numValuesRemovedDueToTTLExpiry).toBe(1);
        // No data: at 16 s a batch without data removes a's value too.
        await t.advance(4000);
        await t.checkNewAnswer();
        expect(t.query.lastProgress?.stateOperators[0]?.numRowsTotal).toBe(0);
      },
    );
  });
});

describe('transformWithState errors', () => {
  const start = async (name: string, rows: Array<Record<string, unknown>>) => {
    let failure: unknown;
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [m, df] = memoryStream(s, 'k STRING, v STRING');
      const q = await df
        .groupBy('k')
        .transformWithState(processor(name), { outputSchema: 'k STRING', outputMode: 'update' })
        .writeStream.format('memory')
        .queryName(fresh('out'))
        .outputMode('update')
        .start();
      m.addData(rows);
      failure = await q.processAllAvailable().then(
        () => q.exception,
        (e: unknown) => e,
      );
      await q.stop();
    });
    return failure as { code?: string; message: string; cause?: { message?: string } };
  };

  it('fails the query with STATE_VALUE_TYPE_MISMATCH naming the variable', async () => {
    const e = await start('WrongType', [{ k: 'a', v: 'x' }]);
    expect(e.code).toBe('STATE_VALUE_TYPE_MISMATCH');
    expect(e.message).toContain("state variable 'name'");
    expect(e.message).toContain('STRING');
  });

  it('fails the query with UDF_FAILED naming the module and export, the error kept as its cause', async () => {
    const e = await start('Throws', [{ k: 'a', v: 'boom' }]);
    expect(e.code).toBe('UDF_FAILED');
    expect(e.message).toContain("'Throws'");
    expect(e.message).toContain('processors.mjs');
    expect(e.cause?.message).toBe('the processor broke on boom');
  });

  it('refuses a restart whose processor changed a variable type: STATE_SCHEMA_INCOMPATIBLE', async () => {
    const ckpt = tempDir();
    await withSession(SPARK_TEST_CONF, async (s) => {
      const [m, df] = memoryStream(s, 'k STRING, v STRING');
      const run = (name: string) =>
        df
          .groupBy('k')
          .transformWithState(processor(name), { outputSchema: 'k STRING, size INT, v STRING, n LONG', outputMode: 'update' })
          .writeStream.format('memory')
          .queryName(fresh('out'))
          .outputMode('update')
          .option('checkpointLocation', ckpt)
          .start();
      const q = await run('ListAndMap');
      m.addData([{ k: 'a', v: 'x' }]);
      await q.processAllAvailable();
      await q.stop();
      const refused = await run('SeenAsValue').then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string; file?: string },
      );
      expect(refused?.code).toBe('STATE_SCHEMA_INCOMPATIBLE');
      expect(refused?.message).toContain("state variable 'seen'");
      expect(refused?.file).toContain(ckpt);
    });
  });
});

describe('transformWithState with other stateful operators', () => {
  it('feeds a deduplication after it, and follows a windowed aggregation (append mode)', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    let s_: Session;
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'append'),
      (s) => {
        s_ = s;
        const [m, df] = memoryStream(s, 'k STRING, v STRING');
        input = m;
        return df
          .groupBy('k')
          .transformWithState(processor('LatestChange'), { outputSchema: 'k STRING, v STRING', outputMode: 'append' })
          .dropDuplicates(['v']);
      },
      async (t) => {
        // Which key's x comes first is not defined: the deduplication keeps one of them.
        const values = async () => {
          await t.query.processAllAvailable();
          return (await s_.memoryTable(t.name)).map((r) => r.v).sort();
        };
        input.addData([
          { k: 'a', v: 'x' },
          { k: 'a', v: 'x' },
          { k: 'b', v: 'x' },
        ]);
        expect(await values()).toEqual(['x']);
        // a's change to y, b's to y then z: y once, z once.
        input.addData([
          { k: 'a', v: 'y' },
          { k: 'b', v: 'y' },
          { k: 'b', v: 'z' },
        ]);
        expect(await values()).toEqual(['x', 'y', 'z']);
        // Spark's progress order: the operator nearest the sink first.
        expect(t.query.lastProgress?.stateOperators.map((o) => o.operatorName)).toEqual(['dedupe', 'transformWithStateExec']);
      },
    );
    let events: ReturnType<typeof memoryStream>[0];
    const ts = (sec: number) => new Date(sec * 1000).toISOString();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'append'),
      (s) => {
        const [m, df] = memoryStream(s, 'k STRING, t TIMESTAMP');
        events = m;
        return df
          .withWatermark('t', '10 seconds')
          .groupBy(window('t', '10 seconds'), 'k')
          .count()
          .selectExpr('k', 'CAST(count AS STRING) AS v')
          .groupBy('k')
          .transformWithState(processor('LatestChange'), { outputSchema: 'k STRING, v STRING', outputMode: 'append' });
      },
      async (t) => {
        events.addData([
          { k: 'a', t: ts(1) },
          { k: 'a', t: ts(2) },
          { k: 'b', t: ts(3) },
        ]);
        await t.checkNewAnswer();
        // The watermark passes the first window: its counts reach the processor.
        events.addData([
          { k: 'a', t: ts(25) },
          { k: 'a', t: ts(26) },
        ]);
        await t.checkNewAnswer(['a', '2'], ['b', '1']);
        // The second window's count for a is 2 again: no change, nothing emitted.
        events.addData([{ k: 'c', t: ts(50) }]);
        await t.checkNewAnswer();
      },
    );
  });
});
