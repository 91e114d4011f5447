/**
 * The state watermark of a stream-stream join's side, from its condition: the cases of Spark's
 * StreamingJoinHelperSuite ("extract watermark from time condition"), with Spark's expected
 * values: leftTime and leftOther are the side's columns, rightTime the other side's watermarked
 * one (at 10000 ms), rightOther its other column. The suite's ANSI `interval '...' day to second`
 * cases are left out: Sluice's grammar has no `... TO ...` intervals yet.
 */
import { describe, expect, it } from 'vitest';
import { stateValueWatermark } from '@sluice/executor';
import { expr } from '../functions.js';

const sides = { side: new Set(['lefttime', 'leftother']), watermarked: new Set(['righttime']) };
const watermarkFrom = (condition: string, watermarkMs = 10_000): number | undefined => stateValueWatermark(expr(condition).expr, sides, watermarkMs);

const CASES: Array<[string, number | undefined]> = [
  // Comparison directionality.
  ['leftTime > rightTime', 10000],
  ['leftTime >= rightTime', 9999],
  ['leftTime < rightTime', undefined],
  ['leftTime <= rightTime', undefined],
  ['rightTime > leftTime', undefined],
  ['rightTime >= leftTime', undefined],
  ['rightTime < leftTime', 10000],
  ['rightTime <= leftTime', 9999],
  // Type conversions.
  ['CAST(leftTime AS LONG) > CAST(rightTime AS LONG)', 10000],
  ['CAST(leftTime AS LONG) < CAST(rightTime AS LONG)', undefined],
  ['CAST(leftTime AS DOUBLE) > CAST(rightTime AS DOUBLE)', 10000],
  ['CAST(leftTime AS LONG) > CAST(rightTime AS DOUBLE)', 10000],
  ['CAST(leftTime AS LONG) > CAST(rightTime AS FLOAT)', 10000],
  ['CAST(leftTime AS DOUBLE) > CAST(rightTime AS FLOAT)', 10000],
  ['CAST(leftTime AS STRING) > CAST(rightTime AS STRING)', undefined],
  // A timestamp and an interval on either side.
  ['leftTime > rightTime + interval 1 second', 11000],
  ['leftTime + interval 2 seconds > rightTime ', 8000],
  ['leftTime > rightTime - interval 3 second', 7000],
  ['rightTime < leftTime - interval 3 second', 13000],
  ['rightTime - interval 1 second < leftTime - interval 3 second', 12000],
  // Cast longs and constants, constants on the right.
  ['CAST(leftTime AS LONG) > CAST(rightTime AS LONG) + 1', 11000],
  ['CAST(leftTime AS LONG) > CAST(rightTime AS LONG) - 1', 9000],
  ['CAST(leftTime AS LONG) > CAST((rightTime + interval 1 second) AS LONG)', 11000],
  ['CAST(leftTime AS LONG) > 2 + CAST(rightTime AS LONG)', 12000],
  ['CAST(leftTime AS LONG) > -0.5 + CAST(rightTime AS LONG)', 9500],
  ['CAST(leftTime AS LONG) - CAST(rightTime AS LONG) > 2', 12000],
  ['-CAST(rightTime AS DOUBLE) + CAST(leftTime AS LONG) > 0.1', 10100],
  ['0 > CAST(rightTime AS LONG) - CAST(leftTime AS LONG) + 0.2', 10200],
  // Constants on the left.
  ['CAST(leftTime AS LONG) + 2 > CAST(rightTime AS LONG)', 8000],
  ['1 + CAST(leftTime AS LONG) > CAST(rightTime AS LONG)', 9000],
  ['CAST((leftTime  + interval 3 second) AS LONG) > CAST(rightTime AS LONG)', 7000],
  ['CAST(leftTime AS LONG) - 2 > CAST(rightTime AS LONG)', 12000],
  ['CAST(leftTime AS LONG) + 0.5 > CAST(rightTime AS LONG)', 9500],
  ['CAST(leftTime AS LONG) - CAST(rightTime AS LONG) - 2 > 0', 12000],
  ['-CAST(rightTime AS LONG) + CAST(leftTime AS LONG) - 0.1 > 0', 10100],
  // Constants on both sides, mixed types.
  ['CAST(leftTime AS LONG) - 2.0 > CAST(rightTime AS LONG) + 1', 13000],
  // Several conditions: the least watermark.
  ['leftTime > rightTime - interval 3 second AND rightTime < leftTime + interval 2 seconds', 7000],
  ['leftTime > rightTime - interval 3 second AND rightTime < leftTime + interval 4 seconds', 6000],
  // Invalid comparisons.
  ['cast(leftTime AS LONG) > leftOther', undefined],
  ['leftOther > rightOther', undefined],
  ['leftOther > rightOther AND leftTime > rightTime', 10000],
  ['cast(rightTime AS DOUBLE) < rightOther', undefined],
  ['leftTime > rightTime + interval 1 month', undefined],
  // Static comparisons.
  ['cast(leftTime AS LONG) > 10', 10000],
  // Non-positive results.
  ['CAST(leftTime AS LONG) > CAST(rightTime AS LONG) - 10', 0],
  ['CAST(leftTime AS LONG) > CAST(rightTime AS LONG) - 100', -90000],
];

describe("a join side's state watermark from the condition (Spark's StreamingJoinHelperSuite)", () => {
  it.each(CASES)('%s gives %s', (condition, expected) => {
    expect(watermarkFrom(condition)).toBe(expected);
  });

  it('gives no bound without a watermarked column on the other side', () => {
    expect(stateValueWatermark(expr('leftTime > rightTime').expr, { side: sides.side, watermarked: new Set() }, 10_000)).toBeUndefined();
  });

  it("bounds the impressions of Spark's ad example by the clicks' watermark (and the clicks by the impressions')", () => {
    const condition = expr('clickAdId = impressionAdId AND clickTime >= impressionTime AND clickTime <= impressionTime + interval 1 hour').expr;
    const impressions = { side: new Set(['impressionadid', 'impressiontime']), watermarked: new Set(['clicktime']) };
    const clicks = { side: new Set(['clickadid', 'clicktime']), watermarked: new Set(['impressiontime']) };
    // An impression older than the clicks' watermark less an hour can match no later click.
    expect(stateValueWatermark(condition, impressions, 10 * 3_600_000)).toBe(9 * 3_600_000 - 1);
    // A click older than the impressions' watermark can match no later impression.
    expect(stateValueWatermark(condition, clicks, 10 * 3_600_000)).toBe(10 * 3_600_000 - 1);
  });
});
