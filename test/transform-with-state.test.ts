/**
 * transformWithState and flatMapGroupsWithState end to end: the README's counter, and engine
 * behaviour Spark's suites (spark-transform-with-state.test.ts, spark-flat-map-groups.test.ts) do
 * not cover.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, statefulProcessor } from '@sluice/driver';
import { memoryStream, runSparkTest, SparkStreamTest } from './sparkStreamTest.js';

const fixtures = new URL('./fixtures/processors.mjs', import.meta.url);
const processor = (name: string) => statefulProcessor(fixtures, name);

describe('transformWithState', () => {
  it('runs a running count per key over restarts (TransformWithStateSuite: streaming should succeed)', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [m, df] = memoryStream(s, 'value STRING');
        input = m;
        return df.groupBy('value').transformWithState(processor('RunningCount'), { outputSchema: 'key STRING, value STRING', outputMode: 'update', timeMode: 'none' });
      },
      async (t) => {
        const add = (...v: string[]) => input.addData(v.map((value) => ({ value })));
        add('a');
        await t.checkNewAnswer(['a', '1']);
        add('a', 'b');
        await t.checkNewAnswer(['a', '2'], ['b', '1']);
        await t.restart();
        add('a', 'b');
        await t.checkNewAnswer(['b', '2']);
        await t.restart();
        add('a', 'c');
        await t.checkNewAnswer(['a', '1'], ['c', '1']);
      },
    );
  });
});

describe('transformWithState timers', () => {
  it('fires processing-time timers by the manual clock (TransformWithStateSuite: processing time timer should succeed)', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    const clock = new ManualClock();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update', clock),
      (s) => {
        const [m, df] = memoryStream(s, 'value STRING');
        input = m;
        return df.groupBy('value').transformWithState(processor('RunningCountWithProcessingTimeTimer'), { outputSchema: 'key STRING, value STRING', outputMode: 'update', timeMode: 'processingTime' });
      },
      async (t) => {
        const add = (...v: string[]) => input.addData(v.map((value) => ({ value })));
        add('a');
        await t.advance(1000);
        await t.checkNewAnswer(['a', '1']);
        add('b');
        await t.advance(1000);
        await t.checkNewAnswer(['b', '1']);
        add('b');
        await t.advance(10_000);
        await t.checkNewAnswer(['a', '-1'], ['b', '2']);
        await t.restart();
        add('b');
        add('c');
        await t.advance(1000);
        await t.checkNewAnswer(['c', '1']);
        add('d');
        await t.advance(10_000);
        await t.checkNewAnswer(['c', '-1'], ['d', '1']);
      },
    );
  });

  it('runs the README counter: event-time timers a minute past the watermark', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    const ts = (s: number) => new Date(s * 1000).toISOString();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [m, events] = memoryStream(s, 'id STRING, t TIMESTAMP');
        input = m;
        const counter = processor('Counter');
        return events.withWatermark('t', '1 minute').groupBy('id').transformWithState(counter, { outputSchema: 'id STRING, count LONG', outputMode: 'update', timeMode: 'eventTime' });
      },
      async (t) => {
        input.addData([{ id: 'a', t: ts(10) }, { id: 'a', t: ts(20) }, { id: 'b', t: ts(30) }]);
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
