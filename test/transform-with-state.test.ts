/**
 * transformWithState and flatMapGroupsWithState end to end: the README's counter, and engine
 * behaviour Spark's suites (spark-transform-with-state.test.ts, spark-flat-map-groups.test.ts) do
 * not cover.
 */
import { describe, expect, it } from 'vitest';
import { statefulProcessor } from '@sluice/driver';
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
