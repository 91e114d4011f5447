/**
 * Spark's rules for joins of two streams, as its UnsupportedOperationsSuite states them: a relation
 * `a` (no watermark) joined with itself, `a` joined on a watermarked column, and a nullable side
 * whose column `b` carries the watermark, with a range condition that bounds the other side or one
 * that does not.
 */
import { describe, expect, it } from 'vitest';
import type { Expr } from '@sluice/executor';
import type { StreamJoinType } from '@sluice/executor';
import { checkStreamStreamJoin, type StreamStreamJoin } from './UnsupportedOperationChecker.js';

const col = (name: string): Expr => ({ op: 'col', name });
const ten: Expr = { op: 'lit', value: 10, type: 'int' };
const plusTen = (e: Expr): Expr => ({ op: 'binary', fn: 'plus', left: e, right: ten });
const equal = (l: string, r: string): Expr => ({ op: 'binary', fn: 'equalTo', left: col(l), right: col(r) });

const none = new Set<string>();
/** stream(a) JOIN stream(a2) ON a = a2, a watermarked on the side `watermarked` names. */
function selfJoin(how: StreamJoinType, watermarked: 'left' | 'right' | 'none'): StreamStreamJoin {
  return {
    how,
    left: new Set(['a']),
    right: new Set(['a2']),
    leftWatermarked: watermarked === 'left' ? new Set(['a']) : none,
    rightWatermarked: watermarked === 'right' ? new Set(['a2']) : none,
    keys: [['a', 'a2']],
    condition: equal('a', 'a2'),
  };
}

/** A stream joined with one whose `b` is watermarked (on the left for a right outer join), under `condition`. */
function rangeJoin(how: StreamJoinType, op: 'gt' | 'lt'): StreamStreamJoin {
  const condition: Expr = { op: 'binary', fn: op, left: col('a'), right: plusTen(col('b')) };
  const stream = new Set(['a']);
  const watermarkedSide = new Set(['b']);
  return how === 'right_outer'
    ? { how, left: watermarkedSide, right: stream, leftWatermarked: watermarkedSide, rightWatermarked: none, keys: [], condition }
    : { how, left: stream, right: watermarkedSide, leftWatermarked: none, rightWatermarked: watermarkedSide, keys: [], condition };
}

const ok = (join: StreamStreamJoin, mode: 'append' | 'update' | 'complete' = 'append'): void => checkStreamStreamJoin(join, mode);

describe("Spark's rules for joins of two streams", () => {
  it('an inner join runs in append mode only, with or without watermarks', () => {
    expect(() => ok(selfJoin('inner', 'none'))).not.toThrow();
    expect(() => ok(selfJoin('inner', 'none'), 'update')).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_OUTPUT_MODE', message: expect.stringContaining('is not supported in Update output mode') }),
    );
  });

  it.each<StreamJoinType>(['left_outer', 'right_outer', 'full_outer', 'left_semi'])('%s: not in update or complete mode', (how) => {
    expect(() => ok(selfJoin(how, 'left'), 'update')).toThrow(/is not supported in Update output mode/);
    expect(() => ok(selfJoin(how, 'left'), 'complete')).toThrow(/is not supported in Complete output mode/);
  });

  it.each<StreamJoinType>(['left_outer', 'right_outer', 'full_outer', 'left_semi'])(
    '%s: joined on a watermarked column of either side, or not at all',
    (how) => {
      expect(() => ok(selfJoin(how, 'left'))).not.toThrow();
      expect(() => ok(selfJoin(how, 'right'))).not.toThrow();
      expect(() => ok(selfJoin(how, 'none'))).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('without a watermark in the join keys') }),
      );
    },
  );

  it.each<StreamJoinType>(['left_outer', 'right_outer', 'full_outer', 'left_semi'])(
    '%s: a range condition that bounds the state, and one that does not',
    (how) => {
      expect(() => ok(rangeJoin(how, 'gt'))).not.toThrow();
      expect(() => ok(rangeJoin(how, 'lt'))).toThrow(
        /is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition/,
      );
    },
  );

  it('refuses a left anti join of two streams', () => {
    expect(() => ok(selfJoin('left_anti', 'left'))).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_OPERATION', message: expect.stringContaining('Left anti joins') }),
    );
  });

  it('names the join type as Spark does: Stream-stream LeftOuter join', () => {
    expect(() => ok(selfJoin('left_outer', 'none'))).toThrow(/^Stream-stream LeftOuter join between two streaming DataFrame\/Datasets/);
  });
});
