import { describe, expect, it } from 'vitest';
import { exprName } from './exprNames.js';
import { bin, call, cast, col, lit, SCHEMA } from './exprTestKit.js';
import type { Expr } from './types.js';

describe('exprName', () => {
  it.each<[Expr, string]>([
    [{ op: 'alias', expr: bin('gt', col('v'), lit(10)), name: 'big' }, 'big'],
    [col('v'), 'v'],
    [bin('gt', col('v'), lit(10)), '(v > 10)'],
    [bin('notEqual', col('v'), lit(1.5)), '(NOT (v = 1.5))'],
    [bin('and', col('ok'), { op: 'unary', fn: 'isNotNull', expr: col('id') }), '(ok AND (id IS NOT NULL))'],
    [call('upper', col('id')), 'upper(id)'],
    [call('substring', col('id'), lit(1, 'int'), lit(3, 'int')), 'substring(id, 1, 3)'],
    [call('concat', col('id'), lit('x')), 'concat(id, x)'],
    [cast(col('v'), 'long'), 'v'],
    [bin('plus', cast(col('v'), 'long'), lit(1)), '(CAST(v AS BIGINT) + 1)'],
    [{ op: 'unary', fn: 'not', expr: col('ok') }, '(NOT ok)'],
    [{ op: 'when', branches: [{ cond: col('ok'), value: lit(1) }], otherwise: lit(null) }, 'CASE WHEN ok THEN 1 ELSE NULL END'],
    [lit(2, 'double'), '2.0'],
    [{ op: 'udf', moduleUrl: 'file:///u.mjs', exportName: 'double', returnType: 'double', args: [col('v')] }, 'double(v)'],
  ])('names %j %s', (e, name) => {
    expect(exprName(e)).toBe(name);
  });

  it('names a nested field by its last part when given the schema', () => {
    expect(exprName(col('window.start'), SCHEMA)).toBe('start');
  });
});
