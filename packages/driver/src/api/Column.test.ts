import { describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { planOutputSchema, type Row, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
// The evaluator is worker-side code that the executor package does not export; tests reach it
// directly to check what a built column computes.
import { compileExpr } from '../../../executor/src/expressions/compileExpr.js';
import { loadUdfs } from '../../../executor/src/expressions/udfs.js';
import type { Column } from './Column.js';
import { coalesce, col, column, concat, length, lit, lower, not, substring, toColumn, trim, udf, upper, when } from './functions.js';

const SCHEMA: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'v', type: 'double', nullable: true },
  { name: 'n', type: 'long', nullable: true },
  { name: 'ts', type: 'timestamp', nullable: true },
];

function evaluate(c: Column, row: Row): unknown {
  return compileExpr(c.expr, SCHEMA)(row);
}

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SluiceError);
    return (e as SluiceError).code;
  }
  throw new Error('expected a SluiceError');
}

describe('Column', () => {
  it('builds the serializable expression tree of a chain', () => {
    const c = col('v').gt(10).and(col('id').isNotNull());
    expect(c.expr).toEqual({
      op: 'binary',
      fn: 'and',
      left: { op: 'binary', fn: 'gt', left: { op: 'col', name: 'v' }, right: { op: 'lit', value: 10, type: 'long' } },
      right: { op: 'unary', fn: 'isNotNull', expr: { op: 'col', name: 'id' } },
    });
    expect(structuredClone(c.expr)).toEqual(c.expr);
  });

  it('evaluates Spark arithmetic with SQL nulls', () => {
    expect(evaluate(col('v').plus(1).multiply(2), { v: 1.5 })).toBe(5);
    expect(evaluate(col('n').minus(col('v')), { n: 3, v: null })).toBeNull();
    expect(evaluate(col('n').divide(2), { n: 3 })).toBe(1.5);
    expect(evaluate(col('n').divide(0), { n: 3 })).toBeNull();
    expect(evaluate(col('n').mod(4), { n: -9 })).toBe(-1);
    expect(evaluate(col('v').negate(), { v: 2 })).toBe(-2);
  });

  it('evaluates comparisons and three-valued logic', () => {
    const c = col('v').geq(1).and(col('v').leq(2)).or(col('id').equalTo('x'));
    expect(evaluate(c, { v: 1.5, id: 'y' })).toBe(true);
    expect(evaluate(c, { v: 5, id: null })).toBeNull();
    expect(evaluate(c, { v: null, id: 'x' })).toBe(true);
    expect(evaluate(col('id').notEqual('x').not(), { id: 'x' })).toBe(true);
    expect(evaluate(col('v').lt(0).or(col('v').gt(0)), { v: null })).toBeNull();
    expect(evaluate(col('v').isNull(), { v: null })).toBe(true);
  });

  it('treats strings given to methods as literals, not column names', () => {
    expect(col('id').equalTo('v').expr).toMatchObject({ right: { op: 'lit', value: 'v', type: 'string' } });
  });

  it.each([
    ['double', 'double'],
    ['DOUBLE', 'double'],
    ['long', 'long'],
    ['bigint', 'long'],
    ['int', 'int'],
    ['integer', 'int'],
    ['timestamp', 'timestamp'],
    ['string', 'string'],
    ['boolean', 'boolean'],
  ])('casts to %s', (name, type) => {
    expect(col('v').cast(name).expr).toEqual({ op: 'cast', expr: { op: 'col', name: 'v' }, to: type });
  });

  it('casts with Spark semantics and rejects unknown type names', () => {
    expect(evaluate(col('id').cast('int'), { id: '42' })).toBe(42);
    expect(evaluate(col('id').cast('int'), { id: 'x' })).toBeNull();
    expect(evaluate(col('ts').cast('string'), { ts: 0 })).toBe('1970-01-01T00:00:00.000Z');
    expect(codeOf(() => col('v').cast('decimal(10,2)'))).toBe('INVALID_SCHEMA');
  });

  it('names columns as Spark does', () => {
    const schema = planOutputSchema(
      [{ kind: 'project', exprs: [col('v').gt(10).expr, upper('id').expr, col('v').cast('long').expr, col('n').alias('k').expr, col('n').as('m').expr] }],
      SCHEMA,
    );
    expect(schema.map((f) => f.name)).toEqual(['(v > 10)', 'upper(id)', 'v', 'k', 'm']);
    expect(String(col('v').gt(10))).toBe('(v > 10)');
  });
});

describe('lit', () => {
  it('types JavaScript values', () => {
    expect(lit(1).expr).toEqual({ op: 'lit', value: 1, type: 'long' });
    expect(lit(1.5).expr).toEqual({ op: 'lit', value: 1.5, type: 'double' });
    expect(lit(2 ** 60).expr).toMatchObject({ type: 'double' });
    expect(lit('a').expr).toEqual({ op: 'lit', value: 'a', type: 'string' });
    expect(lit(false).expr).toEqual({ op: 'lit', value: false, type: 'boolean' });
    expect(lit(new Date(86_400_000)).expr).toEqual({ op: 'lit', value: 86_400_000, type: 'timestamp' });
    expect(lit(null).expr).toEqual({ op: 'lit', value: null, type: 'null' });
    expect(lit(5n).expr).toEqual({ op: 'lit', value: 5, type: 'long' });
  });

  it('returns a Column as it is', () => {
    const c = col('v');
    expect(lit(c)).toBe(c);
  });

  it('rejects values with no SQL type', () => {
    expect(codeOf(() => lit({} as unknown as string))).toBe('INVALID_EXPRESSION');
    expect(codeOf(() => lit(new Date(NaN)))).toBe('INVALID_EXPRESSION');
  });
});

describe('when', () => {
  const grade = when(col('v').gt(10), 'high').when(col('v').gt(5), 'mid').otherwise('low');

  it('takes branches in order, then otherwise', () => {
    expect([20, 7, 1, null].map((v) => evaluate(grade, { v }))).toEqual(['high', 'mid', 'low', 'low']);
  });

  it('is null without otherwise', () => {
    expect(evaluate(when(col('v').gt(10), col('n')), { v: 1, n: 3 })).toBeNull();
    expect(evaluate(when(col('v').gt(10), col('n')), { v: 11, n: 3 })).toBe(3);
  });

  it('refuses when/otherwise on other columns and after otherwise', () => {
    expect(codeOf(() => col('v').when(col('v').gt(1), 1))).toBe('INVALID_EXPRESSION');
    expect(codeOf(() => col('v').otherwise(1))).toBe('INVALID_EXPRESSION');
    expect(codeOf(() => grade.otherwise('x'))).toBe('INVALID_EXPRESSION');
  });
});

describe('functions', () => {
  it('reads strings as column names', () => {
    expect(upper('id').expr).toEqual({ op: 'call', fn: 'upper', args: [{ op: 'col', name: 'id' }] });
    expect(toColumn('id').expr).toEqual(col('id').expr);
    expect(column('id').expr).toEqual(col('id').expr);
    expect(not('v').expr).toEqual({ op: 'unary', fn: 'not', expr: { op: 'col', name: 'v' } });
  });

  it('evaluates string functions', () => {
    expect(evaluate(lower(col('id')), { id: 'AbC' })).toBe('abc');
    expect(evaluate(length('id'), { id: 'abc' })).toBe(3);
    expect(evaluate(length('id'), { id: null })).toBeNull();
    expect(evaluate(trim('id'), { id: '  x ' })).toBe('x');
    expect(evaluate(concat('id', lit(':'), 'n'), { id: 'a', n: 1 })).toBe('a:1');
    expect(evaluate(concat('id', lit(':'), 'n'), { id: 'a', n: null })).toBeNull();
    expect(evaluate(substring('id', 2, 3), { id: 'Spark' })).toBe('par');
    expect(evaluate(substring('id', -3, 2), { id: 'Spark' })).toBe('ar');
    expect(evaluate(coalesce('v', 'n', lit(0)), { v: null, n: null })).toBe(0);
  });

  it('rejects a non-integer substring position', () => {
    expect(codeOf(() => substring('id', 1.5, 2))).toBe('INVALID_EXPRESSION');
  });

  it('fails at plan time on an unknown column', () => {
    try {
      planOutputSchema([{ kind: 'filter', cond: col('nope').isNull().expr }], SCHEMA);
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'nope' });
    }
  });
});

describe('udf', () => {
  const fixtures = new URL('../../../../test/fixtures/udfs.mjs', import.meta.url);

  it('builds a udf call whose module URL is the same text in every worker', () => {
    const double = udf(fixtures, 'double', 'DOUBLE');
    expect(double('v').expr).toEqual({
      op: 'udf',
      moduleUrl: fixtures.href,
      exportName: 'double',
      returnType: 'double',
      args: [{ op: 'col', name: 'v' }],
    });
    expect(udf('test/fixtures/udfs.mjs', 'double', 'double')().expr).toMatchObject({
      moduleUrl: pathToFileURL(resolve('test/fixtures/udfs.mjs')).href,
    });
    expect(udf('data:text/javascript,export const f = () => 1', 'f', 'long')().expr).toMatchObject({
      moduleUrl: 'data:text/javascript,export const f = () => 1',
    });
  });

  it('evaluates through the worker-side loader', async () => {
    const isoDay = udf(fixtures, 'isoDay', 'string');
    const c = isoDay(col('ts')).alias('day');
    const registry = await loadUdfs([c.expr], new Map());
    expect(compileExpr(c.expr, SCHEMA, registry)({ ts: Date.UTC(2024, 5, 30, 23) })).toBe('2024-06-30');
  });

  it('checks the return type name eagerly', () => {
    expect(codeOf(() => udf(fixtures, 'double', 'number'))).toBe('INVALID_SCHEMA');
    expect(codeOf(() => udf(fixtures, '', 'double'))).toBe('INVALID_EXPRESSION');
  });
});

describe("Spark's other Column methods", () => {
  const row = { id: 'Spark', v: Number.NaN, n: 3, ts: null };
  it('isin, between, eqNullSafe, startsWith, endsWith, contains, substr, isNaN and getItem give what Spark gives', () => {
    expect(evaluate(col('n').isin(1, 2, 3), row)).toBe(true);
    expect(evaluate(col('n').isin([1, 2]), row)).toBe(false);
    expect(evaluate(col('n').isin(1, null), row)).toBeNull();
    expect(evaluate(col('n').between(3, 5), row)).toBe(true);
    expect(evaluate(col('ts').eqNullSafe(null), row)).toBe(true);
    expect(evaluate(col('n').eqNullSafe(null), row)).toBe(false);
    expect(evaluate(col('n').eqNullSafe(3), row)).toBe(true);
    expect(evaluate(col('id').startsWith('Sp'), row)).toBe(true);
    expect(evaluate(col('id').endsWith('rk'), row)).toBe(true);
    expect(evaluate(col('id').contains('par'), row)).toBe(true);
    expect(evaluate(col('id').contains(null), row)).toBeNull();
    expect(evaluate(col('id').substr(2, 3), row)).toBe('par');
    expect(evaluate(col('v').isNaN(), row)).toBe(true);
    expect(codeOf(() => col('n').isin())).toBe('INVALID_EXPRESSION');
  });
});
