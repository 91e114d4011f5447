/**
 * Ports of Spark's FlatMapGroupsWithStateWithInitialStateSuite (initial state of
 * flatMapGroupsWithState and mapGroupsWithState), with Spark's expected outputs. Functions in
 * fixtures/initial-state-functions.mjs; the initial states are static DataFrames
 * (session.createDataFrame), grouped by their key.
 *
 * Ported: "all cases" (once: the shuffle partition counts 1, 2 and 6 change nothing, run here at
 * 1 and 6), "duplicate keys", "mapGroupsWithState - initial state - null key", "processing time
 * timeout", "skipEmittingInitialStateKeys=false" (Spark's default; the conf itself is not
 * offered), "initial state and initial batch have same keys".
 * Not ported: the batch-mode tests (Sluice runs [flat]MapGroupsWithState on streams only), the
 * case class key (a struct grouping key: not a groupBy column here), a streaming initial state (a
 * static DataFrame is required by the API, INVALID_OPTION otherwise, tested below), an initial state
 * computed by a batch mapGroupsWithState, and skipEmittingInitialStateKeys=true.
 */
import { describe, expect, it } from 'vitest';
import { GroupStateTimeout, ManualClock, statefulProcessor, type Session } from '@sluice/driver';
import { memoryStream, runSparkTest, SparkStreamTest } from './sparkStreamTest.js';

const fixtures = new URL('./fixtures/initial-state-functions.mjs', import.meta.url);
const fn = (name: string) => statefulProcessor(fixtures, name);

/** assertNumStateRows: the last progress's total, and the updated rows summed since the last check. */
class StateRowsTest extends SparkStreamTest {
  private checked = 0;
  protected override started(): void {
    this.checked = 0;
  }
  numStateRows(): { total: number | undefined; updated: number } {
    const progress = this.query.recentProgress;
    const since = progress.slice(this.checked);
    this.checked = progress.length;
    return { total: progress.at(-1)?.stateOperators[0]?.numRowsTotal, updated: since.reduce((n, p) => n + (p.stateOperators[0]?.numRowsUpdated ?? 0), 0) };
  }
}

const initialCounts = (s: Session, rows: Array<[string | null, number]>) =>
  s
    .createDataFrame(
      rows.map(([value, count]) => ({ value, count })),
      'value STRING, count LONG',
    )
    .groupBy('value');

describe('FlatMapGroupsWithStateWithInitialStateSuite', () => {
  for (const partitions of [1, 6]) {
    it(`flatMapGroupsWithState - initial state - all cases - shuffle partitions ${partitions}`, async () => {
      let input: ReturnType<typeof memoryStream>[0];
      await runSparkTest(
        (s, df) => new StateRowsTest(s, df, 'update'),
        (s) => {
          const [m, df] = memoryStream(s, 'value STRING');
          input = m;
          const initialState = initialCounts(s, [
            ['keyInStateAndData-1', 1],
            ['keyInStateAndData-2', 2],
            ['keyNoUpdate', 2],
            ['keyOnlyInState-1', 1],
          ]);
          return df.groupBy('value').flatMapGroupsWithState(fn('countWithInitial'), {
            outputMode: 'update',
            timeoutConf: GroupStateTimeout.NoTimeout,
            stateSchema: 'count LONG',
            outputSchema: 'key STRING, values ARRAY<STRING>, count STRING',
            initialState,
          });
        },
        async (t) => {
          input.addData([{ value: 'keyOnlyInData' }, { value: 'keyInStateAndData-2' }]);
          await t.checkNewAnswer(
            ['keyOnlyInState-1', [], '1'],
            ['keyNoUpdate', [], '2'],
            ['keyInStateAndData-2', ['keyInStateAndData-2'], '3'],
            ['keyInStateAndData-1', [], '1'],
            ['keyOnlyInData', ['keyOnlyInData'], '1'],
          );
          // keyNoUpdate is kept from its initial state, not counted as updated.
          expect(t.numStateRows()).toEqual({ total: 5, updated: 4 });
          await t.restart();
          input.addData([{ value: 'keyInStateAndData-1' }]);
          await t.checkNewAnswer(['keyInStateAndData-1', ['keyInStateAndData-1'], '2']);
          expect(t.numStateRows()).toEqual({ total: 5, updated: 1 });
        },
        { 'sluice.sql.shuffle.partitions': partitions },
      );
    });
  }

  it('flatMapGroupsWithState - initial state - duplicate keys', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [m, df] = memoryStream(s, 'value STRING');
        input = m;
        return df.groupBy('value').flatMapGroupsWithState(fn('countWithInitial'), {
          outputMode: 'update',
          stateSchema: 'count LONG',
          outputSchema: 'key STRING, values ARRAY<STRING>, count STRING',
          initialState: initialCounts(s, [
            ['a', 2],
            ['a', 1],
          ]),
        });
      },
      async (t) => {
        input.addData([{ value: 'a' }]);
        const failure = await t.query.processAllAvailable().then(
          () => t.query.exception,
          (e: unknown) => e,
        );
        expect(failure).toMatchObject({ code: 'STATEFUL_PROCESSOR_INVALID_OPERATION' });
        expect((failure as Error).message).toContain('The initial state provided contained multiple rows(state) with the same key');
      },
    );
  });

  it('mapGroupsWithState - initial state - null key', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    await runSparkTest(
      (s, df) => new StateRowsTest(s, df, 'update'),
      (s) => {
        const [m, df] = memoryStream(s, 'value STRING');
        input = m;
        return df.groupBy('value').mapGroupsWithState(fn('countMapped'), {
          stateSchema: 'count LONG',
          outputSchema: 'key STRING, count STRING',
          initialState: initialCounts(s, [
            ['key', 5],
            [null, 2],
          ]),
        });
      },
      async (t) => {
        input.addData([{ value: 'key' }, { value: null }]);
        await t.checkNewAnswer(['key', '6'], [null, '3']);
        expect(t.numStateRows()).toEqual({ total: 2, updated: 2 });
      },
    );
  });

  it('flatMapGroupsWithState - initial state - processing time timeout', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    const clock = new ManualClock();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update', clock),
      (s) => {
        const [m, df] = memoryStream(s, 'key STRING, time LONG');
        input = m;
        return df
          .selectExpr('key', 'timestamp_seconds(time) AS timestamp')
          .withWatermark('timestamp', '10 second')
          .groupBy('key')
          .flatMapGroupsWithState(fn('countWithTimeout'), {
            outputMode: 'update',
            timeoutConf: GroupStateTimeout.ProcessingTimeTimeout,
            stateSchema: 'count LONG',
            outputSchema: 'key STRING, count STRING',
            initialState: s.createDataFrame([{ key: 'c', count: 2 }], 'key STRING, count LONG').groupBy('key'),
          });
      },
      async (t) => {
        input.addData([{ key: 'a', time: 1 }]);
        await t.advance(1000); // batch 0 at 1 s: c from its initial state, a from its row; both time out at 11 s
        await t.checkNewAnswer(['a', '1'], ['c', '2']);
        await t.advance(10_000); // 11 s: a timeout is strictly before the clock, so none fires
        await t.checkNewAnswer();
        input.addData([{ key: 'b', time: 1 }]);
        await t.advance(1000);
        await t.checkNewAnswer(['a', '-1'], ['b', '1'], ['c', '-1']);
      },
    );
  });

  it('flatMapGroupsWithState - initial state - skipEmittingInitialStateKeys=false', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [m, df] = memoryStream(s, 'value STRING');
        input = m;
        const initialState = s
          .createDataFrame(
            [
              { value: 'apple', n: 1 },
              { value: 'orange', n: 2 },
              { value: 'mango', n: 5 },
            ],
            'value STRING, n LONG',
          )
          .groupBy('value');
        return df
          .groupBy('value')
          .flatMapGroupsWithState(fn('fruitCount'), { outputMode: 'update', stateSchema: 'LONG', outputSchema: 'fruit STRING, count LONG', initialState });
      },
      async (t) => {
        await t.multiAdd(
          () => input.addData([{ value: 'apple' }]),
          () => input.addData([{ value: 'banana' }]),
        );
        await t.checkNewAnswer(['apple', 2], ['banana', 1], ['orange', 2], ['mango', 5]);
        input.addData([{ value: 'orange' }]);
        await t.checkNewAnswer(['orange', 3]);
      },
    );
  });

  it('flatMapGroupsWithState - initial state and initial batch have same keys', async () => {
    let input: ReturnType<typeof memoryStream>[0];
    const clock = new ManualClock();
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update', clock),
      (s) => {
        const [m, df] = memoryStream(s, 'value STRING');
        input = m;
        const initialState = s
          .createDataFrame(
            [
              { value: 'apple', n: 1 },
              { value: 'orange', n: 2 },
            ],
            'value STRING, n LONG',
          )
          .groupBy('value');
        return df
          .groupBy('value')
          .flatMapGroupsWithState(fn('fruitCount'), { outputMode: 'update', stateSchema: 'LONG', outputSchema: 'fruit STRING, count LONG', initialState });
      },
      async (t) => {
        input.addData([{ value: 'apple' }]);
        input.addData([{ value: 'apple' }]);
        input.addData([{ value: 'orange' }]);
        await t.advance(1000);
        await t.checkNewAnswer(['apple', 3], ['orange', 3]);
        input.addData([{ value: 'orange' }]);
        await t.advance(1000);
        await t.checkNewAnswer(['orange', 4]);
      },
    );
  });

  it('refuses an initial state that is a stream, or whose keys have other types', async () => {
    await runSparkTest(
      (s, df) => new SparkStreamTest(s, df, 'update'),
      (s) => {
        const [, df] = memoryStream(s, 'value STRING');
        const [, stream] = memoryStream(s, 'value STRING, count LONG');
        const options = { outputMode: 'update' as const, stateSchema: 'count LONG', outputSchema: 'key STRING, values ARRAY<STRING>, count STRING' };
        expect(() => df.groupBy('value').flatMapGroupsWithState(fn('countWithInitial'), { ...options, initialState: stream.groupBy('value') })).toThrow(
          expect.objectContaining({ code: 'INVALID_OPTION', option: 'initialState' }),
        );
        const numbers = s.createDataFrame([{ value: 1, count: 1 }], 'value INT, count LONG').groupBy('value');
        expect(() => df.groupBy('value').flatMapGroupsWithState(fn('countWithInitial'), { ...options, initialState: numbers })).toThrow(
          expect.objectContaining({ code: 'DATATYPE_MISMATCH' }),
        );
        return df.groupBy('value').count();
      },
      async () => {},
    );
  });
});
