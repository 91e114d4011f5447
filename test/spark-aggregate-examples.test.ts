/**
 * Spark's documented examples of its aggregate functions, through session.sql over a streaming
 * view: each `SELECT <aggregate> FROM VALUES (...) AS tab(col)` of Spark's reference becomes a
 * memory stream of those rows, viewed as `tab`, aggregated in complete mode, and its one result
 * printed as Spark's SQL shell prints it. Then the same aggregates as Column calls in a grouped
 * query, and approx_count_distinct in windowed state across a restart.
 */
import { describe, expect, it } from 'vitest';
import {
  approx_count_distinct,
  bool_and,
  col,
  collect_list,
  collect_set,
  count_if,
  first,
  last,
  max_by,
  min_by,
  percentile,
  percentile_approx,
  stddev,
  var_pop,
  window,
} from '@sluice/driver';
import { tempDir, useSession } from './helpers.js';

const session = useSession({ 'sluice.sql.shuffle.partitions': 2 });

/** [aggregate SQL, the rows of Spark's VALUES table, Spark's printed result]; `x, y` tables have two columns. */
const EXAMPLES: Array<[string, unknown[][], string]> = [
  ['approx_count_distinct(col)', [[1], [1], [2], [2], [3]], '3'],
  ['bool_and(col)', [[true], [true], [true]], 'true'],
  ['bool_and(col)', [[null], [true], [true]], 'true'],
  ['bool_and(col)', [[true], [false], [true]], 'false'],
  ['bool_or(col)', [[true], [false], [false]], 'true'],
  ['bool_or(col)', [[null], [true], [false]], 'true'],
  ['bool_or(col)', [[false], [false], [null]], 'false'],
  ['every(col)', [[true], [true], [true]], 'true'],
  ['some(col)', [[true], [false], [false]], 'true'],
  ['any(col)', [[true], [false], [false]], 'true'],
  ['collect_list(col)', [[1], [2], [1]], '[1,2,1]'],
  ['array_agg(col)', [[1], [2], [1]], '[1,2,1]'],
  ['collect_set(col)', [[1], [2], [1]], '[1,2]'],
  ['count_if(col % 2 = 0)', [[null], [0], [1], [2], [3]], '2'],
  ['count_if(col IS NULL)', [[null], [0], [1], [2], [3]], '1'],
  ['first(col)', [[10], [5], [20]], '10'],
  ['first(col)', [[null], [5], [20]], 'NULL'],
  ['first(col, true)', [[null], [5], [20]], '5'],
  ['first_value(col)', [[10], [5], [20]], '10'],
  ['any_value(col)', [[10], [5], [20]], '10'],
  ['last(col)', [[10], [5], [20]], '20'],
  ['last(col)', [[10], [5], [null]], 'NULL'],
  ['last(col, true)', [[10], [5], [null]], '5'],
  ['last_value(col)', [[10], [5], [20]], '20'],
  [
    'max_by(x, y)',
    [
      ['a', 10],
      ['b', 50],
      ['c', 20],
    ],
    'b',
  ],
  [
    'min_by(x, y)',
    [
      ['a', 10],
      ['b', 50],
      ['c', 20],
    ],
    'a',
  ],
  ['stddev(col)', [[1], [2], [3]], '1.0'],
  ['std(col)', [[1], [2], [3]], '1.0'],
  ['stddev_pop(col)', [[1], [2], [3]], '0.816496580927726'],
  ['stddev_samp(col)', [[1], [2], [3]], '1.0'],
  ['var_pop(col)', [[1], [2], [3]], '0.6666666666666666'],
  ['var_samp(col)', [[1], [2], [3]], '1.0'],
  ['variance(col)', [[1], [2], [3]], '1.0'],
  ['stddev_samp(col)', [[1]], 'NULL'],
  ['percentile_approx(col, array(0.5, 0.4, 0.1), 100)', [[0], [1], [2], [10]], '[1,1,0]'],
  ['percentile_approx(col, 0.5, 100)', [[0], [6], [7], [9], [10]], '7'],
  ['approx_percentile(col, array(0.5, 0.4, 0.1), 100)', [[0], [1], [2], [10]], '[1,1,0]'],
  ['approx_percentile(col, 0.5, 100)', [[0], [6], [7], [9], [10]], '7'],
  ['percentile(col, 0.3)', [[0], [10]], '3.0'],
  ['percentile(col, array(0.25, 0.75))', [[0], [10]], '[2.5,7.5]'],
  ['median(col)', [[0], [10]], '5.0'],
];

const printed = (v: unknown): string => (v === null ? 'NULL' : Array.isArray(v) ? `[${v.join(',')}]` : String(v));

describe("Spark's aggregate examples through session.sql", () => {
  it.each(EXAMPLES.map(([sql, rows, expected], i) => [i, sql, rows, expected] as const))(
    '#%i SELECT %s FROM VALUES %j gives %s',
    async (i, sql, rows, expected) => {
      const two = (rows[0] as unknown[]).length === 2;
      const stream = session().memoryStream(
        `agg_ex_${i}`,
        two ? 'x STRING, y INT' : `col ${typeof rows.flat().find((v) => v !== null) === 'boolean' ? 'BOOLEAN' : 'INT'}`,
      );
      session().readStream.format('memory').load(`agg_ex_${i}`).createOrReplaceTempView('tab');
      const q = await session()
        .sql(`SELECT ${sql} AS result FROM tab`)
        .writeStream.format('memory')
        .queryName(`agg_ex_${i}_out`)
        .outputMode('complete')
        .start();
      try {
        stream.addData(rows.map((r) => (two ? { x: r[0], y: r[1] } : { col: r[0] })));
        await q.processAllAvailable();
        const out = await session().memoryTable(`agg_ex_${i}_out`);
        expect(out).toHaveLength(1);
        const v = out[0]!.result;
        // Spark prints a DOUBLE with its fraction (1.0), a collection as [a,b].
        const shown = typeof v === 'number' && /stddev|std\(|var|^percentile\(|median/.test(sql) && Number.isInteger(v) ? `${v}.0` : printed(v);
        expect(shown).toBe(expected);
      } finally {
        await q.stop();
      }
    },
  );
});

describe('the new aggregates as Column calls, by key, across batches', () => {
  it('merge across batches and partitions in update mode: each key has every value of every batch', async () => {
    const stream = session().memoryStream('agg_cols', 'k STRING, v INT, ok BOOLEAN');
    const q = await session()
      .readStream.format('memory')
      .load('agg_cols')
      .groupBy('k')
      .agg(
        collect_list('v').alias('vs'),
        collect_set('v').alias('set'),
        first('v').alias('first'),
        last('v').alias('last'),
        stddev('v').alias('sd'),
        var_pop('v').alias('vp'),
        min_by('v', col('v').multiply(-1)).alias('maxv'),
        max_by('k', 'v').alias('k2'),
        count_if(col('v').gt(2)).alias('big'),
        bool_and('ok').alias('all_ok'),
        approx_count_distinct('v').alias('n'),
      )
      .writeStream.format('memory')
      .queryName('agg_cols_out')
      .outputMode('complete')
      .option('checkpointLocation', tempDir())
      .start();
    stream.addData([
      { k: 'a', v: 1, ok: true },
      { k: 'a', v: 2, ok: true },
      { k: 'b', v: 5, ok: false },
    ]);
    await q.processAllAvailable();
    stream.addData([
      { k: 'a', v: 2, ok: true },
      { k: 'a', v: 4, ok: null },
      { k: 'b', v: 5, ok: true },
    ]);
    await q.processAllAvailable();
    const rows = (await session().memoryTable('agg_cols_out')).sort((x, y) => String(x.k).localeCompare(String(y.k)));
    const a = rows[0]!;
    expect(a).toMatchObject({ k: 'a', first: 1, last: 4, maxv: 4, k2: 'a', big: 1, all_ok: true, n: 3 });
    expect(a.vs).toEqual([1, 2, 2, 4]);
    expect(a.set).toEqual([1, 2, 4]);
    expect(a.sd).toBeCloseTo(Math.sqrt(((1 - 2.25) ** 2 + 2 * (2 - 2.25) ** 2 + (4 - 2.25) ** 2) / 3), 12);
    expect(a.vp).toBeCloseTo(((1 - 2.25) ** 2 + 2 * (2 - 2.25) ** 2 + (4 - 2.25) ** 2) / 4, 12);
    expect(rows[1]).toMatchObject({ k: 'b', vs: [5, 5], set: [5], first: 5, last: 5, sd: 0, vp: 0, big: 2, all_ok: false, n: 1 });
    await q.stop();
  });
});

describe('percentile_approx past its accuracy', () => {
  it('keeps at most 2 × accuracy samples, and each answer within n / accuracy ranks of the exact one, across batches', async () => {
    const stream = session().memoryStream('pct_many', 'k STRING, v INT');
    const q = await session()
      .readStream.format('memory')
      .load('pct_many')
      .groupBy('k')
      .agg(percentile_approx('v', [0.1, 0.5, 0.99], 100).alias('p'), percentile('v', 0.5).alias('exact'))
      .writeStream.format('memory')
      .queryName('pct_many_out')
      .outputMode('complete')
      .option('checkpointLocation', tempDir())
      .start();
    // 20,000 distinct values in 4 batches, shuffled: the sketch compresses many times.
    const values = Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 20_000);
    for (let b = 0; b < 4; b++) {
      stream.addData(values.slice(b * 5000, (b + 1) * 5000).map((v) => ({ k: 'a', v })));
      await q.processAllAvailable();
    }
    const [row] = await session().memoryTable('pct_many_out');
    const p = row!.p as number[];
    // Value v is the v-th smallest (0..19999): its rank is v + 1; the exact rank is ceil(p × n).
    [0.1, 0.5, 0.99].forEach((pct, i) => {
      expect(Math.abs(p[i]! + 1 - Math.ceil(pct * 20_000))).toBeLessThanOrEqual(20_000 / 100);
    });
    expect(row!.exact).toBe(9999.5);
    await q.stop();
  });
});

describe('approx_count_distinct in windowed state', () => {
  it('gives, across a restart from the checkpoint, the estimate an uninterrupted query gives, within 5% of the true count', async () => {
    const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute));
    const batches = [0, 1, 2].map((b) => Array.from({ length: 400 }, (_, i) => ({ user: `u${(b * 250 + i) % 900}`, ts: at(i % 10) })));
    const start = (name: string, ckpt: string) =>
      session()
        .readStream.format('memory')
        .load(name)
        .withWatermark('ts', '1 hour')
        .groupBy(window('ts', '10 minutes'))
        .agg(approx_count_distinct('user').alias('users'))
        .writeStream.format('memory')
        .queryName(`${name}_out`)
        .outputMode('update')
        .option('checkpointLocation', ckpt)
        .start();
    const whole = session().memoryStream('hll_whole', 'user STRING, ts TIMESTAMP');
    const wholeQ = await start('hll_whole', tempDir());
    for (const b of batches) {
      whole.addData(b);
      await wholeQ.processAllAvailable();
    }
    const expected = (await session().memoryTable('hll_whole_out')).at(-1)!.users as number;
    await wholeQ.stop();

    const ckpt = tempDir();
    const restarted = session().memoryStream('hll_restart', 'user STRING, ts TIMESTAMP');
    let q = await start('hll_restart', ckpt);
    restarted.addData(batches[0]!);
    restarted.addData(batches[1]!);
    await q.processAllAvailable();
    await q.stop();
    q = await start('hll_restart', ckpt);
    restarted.addData(batches[2]!);
    await q.processAllAvailable();
    const rows = await session().memoryTable('hll_restart_out');
    const users = rows.at(-1)!.users as number;
    await q.stop();
    const truth = new Set(batches.flat().map((r) => r.user)).size;
    expect(truth).toBe(900);
    expect(users).toBe(expected);
    expect(Math.abs(users - truth) / truth).toBeLessThan(0.05);
  });
});
