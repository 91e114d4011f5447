import { describe, expect, it } from 'vitest';
import { compileExpr } from './compileExpr.js';
import { exprName, exprSql } from './exprNames.js';
import { exprNullable, exprType } from './exprTypes.js';
import { requiredInputSchema } from './pruning.js';
import { bin, call, cast, col, evaluate, JAN_1_2024, lit, SCHEMA, thrown } from './exprTestKit.js';
import type { Expr } from './types.js';
import type { Schema } from '../schema/types.js';

describe('three-valued logic', () => {
  const values = [true, false, null] as const;
  // Rows are [a, b, a AND b, a OR b], SQL's truth tables.
  const table: Array<[boolean | null, boolean | null, boolean | null, boolean | null]> = [
    [true, true, true, true],
    [true, false, false, true],
    [true, null, null, true],
    [false, true, false, true],
    [false, false, false, false],
    [false, null, false, null],
    [null, true, null, true],
    [null, false, false, null],
    [null, null, null, null],
  ];

  it.each(table)('%s AND/OR %s', (a, b, and, or) => {
    // Through columns, so that nothing can be folded at compile time.
    const row = { ok: a, other: b };
    const schema: Schema = [...SCHEMA, { name: 'other', type: 'boolean', nullable: true }];
    expect(compileExpr(bin('and', col('ok'), col('other')), schema)(row)).toBe(and);
    expect(compileExpr(bin('or', col('ok'), col('other')), schema)(row)).toBe(or);
  });

  it('negates true and false and keeps null', () => {
    expect(values.map((a) => evaluate({ op: 'unary', fn: 'not', expr: col('ok') }, { ok: a }))).toEqual([false, true, null]);
  });

  it('answers IS NULL and IS NOT NULL with true or false, never null', () => {
    expect(evaluate({ op: 'unary', fn: 'isNull', expr: col('v') }, { v: null })).toBe(true);
    expect(evaluate({ op: 'unary', fn: 'isNull', expr: col('v') }, {})).toBe(true);
    expect(evaluate({ op: 'unary', fn: 'isNotNull', expr: col('v') }, { v: 0 })).toBe(true);
  });
});

describe('arithmetic', () => {
  it('gives null when either side is null', () => {
    for (const fn of ['plus', 'minus', 'multiply', 'divide', 'mod', 'gt', 'equalTo', 'notEqual'] as const) {
      expect(evaluate(bin(fn, col('v'), lit(1)), { v: null })).toBeNull();
      expect(evaluate(bin(fn, lit(1), col('v')), { v: null })).toBeNull();
    }
  });

  it('divides into a double and gives null for a zero divisor', () => {
    expect(evaluate(bin('divide', col('n'), lit(2)), { n: 7 })).toBe(3.5);
    expect(exprType(bin('divide', col('n'), lit(2)), SCHEMA)).toBe('double');
    expect(evaluate(bin('divide', col('n'), lit(0)), { n: 7 })).toBeNull();
    expect(evaluate(bin('divide', col('v'), lit(0, 'double')), { v: 1.5 })).toBeNull();
  });

  it('takes the sign of the dividend in mod, and gives null for mod 0', () => {
    expect(evaluate(bin('mod', col('n'), lit(3)), { n: -7 })).toBe(-1);
    expect(evaluate(bin('mod', col('n'), lit(-3)), { n: 7 })).toBe(1);
    expect(evaluate(bin('mod', col('v'), lit(2)), { v: 5.5 })).toBe(1.5);
    expect(evaluate(bin('mod', col('n'), lit(0)), { n: 7 })).toBeNull();
  });

  it('widens int < long < double and wraps INT arithmetic at 32 bits', () => {
    expect(exprType(bin('plus', col('i'), col('i')), SCHEMA)).toBe('int');
    expect(exprType(bin('plus', col('i'), col('n')), SCHEMA)).toBe('long');
    expect(exprType(bin('multiply', col('n'), col('v')), SCHEMA)).toBe('double');
    expect(evaluate(bin('plus', col('i'), lit(1, 'int')), { i: 2147483647 })).toBe(-2147483648);
    expect(evaluate(bin('plus', col('i'), lit(1)), { i: 2147483647 })).toBe(2147483648);
  });

  it('reads text as a double in arithmetic', () => {
    expect(exprType(bin('plus', col('id'), lit(1)), SCHEMA)).toBe('double');
    expect(evaluate(bin('plus', col('id'), lit(1)), { id: '1.5' })).toBe(2.5);
    expect(evaluate(bin('plus', col('id'), lit(1)), { id: 'x' })).toBeNull();
  });

  it('negates numbers', () => {
    expect(evaluate({ op: 'unary', fn: 'negate', expr: col('n') }, { n: 4 })).toBe(-4);
    expect(evaluate({ op: 'unary', fn: 'negate', expr: col('n') }, { n: null })).toBeNull();
  });

  it('rejects arithmetic on booleans at compile time', () => {
    const e = thrown(() => compileExpr(bin('plus', col('ok'), lit(1)), SCHEMA, new Map()));
    expect(e.code).toBe('DATATYPE_MISMATCH');
    expect(e.message).toContain('(ok + 1)');
  });
});

describe('comparison', () => {
  it('orders strings lexicographically and timestamps in time', () => {
    expect(evaluate(bin('lt', col('id'), lit('b')), { id: 'apple' })).toBe(true);
    expect(evaluate(bin('lt', col('id'), lit('B')), { id: 'apple' })).toBe(false);
    expect(evaluate(bin('gt', col('ts'), lit(JAN_1_2024, 'timestamp')), { ts: JAN_1_2024 + 1 })).toBe(true);
  });

  it('casts text to the other side type, so a timestamp compares with ISO text', () => {
    expect(evaluate(bin('geq', col('ts'), lit('2024-01-01T00:00:00Z')), { ts: JAN_1_2024 })).toBe(true);
    expect(evaluate(bin('lt', col('ts'), lit('2024-01-01')), { ts: JAN_1_2024 })).toBe(false);
    expect(evaluate(bin('equalTo', col('n'), lit('7')), { n: 7 })).toBe(true);
  });

  it('treats NaN as equal to itself and above every number, as Spark does', () => {
    expect(evaluate(bin('equalTo', col('v'), lit(NaN)), { v: NaN })).toBe(true);
    expect(evaluate(bin('gt', col('v'), lit(1e308, 'double')), { v: NaN })).toBe(true);
    expect(evaluate(bin('lt', col('v'), lit(NaN)), { v: 1 })).toBe(true);
  });

  it('compares structs for equality', () => {
    const w = { start: 0, end: 10 };
    expect(evaluate(bin('equalTo', col('window'), col('window')), { window: w })).toBe(true);
  });
});

describe('cast', () => {
  it('parses text into numbers, null when it is not one', () => {
    expect(evaluate(cast(col('id'), 'int'), { id: ' 12 ' })).toBe(12);
    expect(evaluate(cast(col('id'), 'int'), { id: '1.9' })).toBe(1);
    expect(evaluate(cast(col('id'), 'int'), { id: 'abc' })).toBeNull();
    expect(evaluate(cast(col('id'), 'int'), { id: '3000000000' })).toBeNull();
    expect(evaluate(cast(col('id'), 'long'), { id: '3000000000' })).toBe(3000000000);
    expect(evaluate(cast(col('id'), 'double'), { id: '1e3' })).toBe(1000);
    expect(evaluate(cast(col('id'), 'double'), { id: '-Infinity' })).toBe(-Infinity);
  });

  it('truncates toward zero when casting to an integer type', () => {
    expect(evaluate(cast(col('v'), 'int'), { v: -1.9 })).toBe(-1);
    expect(evaluate(cast(col('v'), 'long'), { v: 2.9 })).toBe(2);
    expect(evaluate(cast(col('v'), 'int'), { v: 1e12 })).toBe(2147483647);
    expect(evaluate(cast(col('n'), 'int'), { n: 2 ** 32 + 5 })).toBe(5);
  });

  it('prints values as Spark does, timestamps as ISO-8601 UTC', () => {
    expect(evaluate(cast(col('v'), 'string'), { v: 1 })).toBe('1.0');
    expect(evaluate(cast(col('n'), 'string'), { n: 1 })).toBe('1');
    expect(evaluate(cast(col('ok'), 'string'), { ok: true })).toBe('true');
    expect(evaluate(cast(col('ts'), 'string'), { ts: JAN_1_2024 })).toBe('2024-01-01T00:00:00.000Z');
  });

  it('reads booleans from text in any case', () => {
    expect(evaluate(cast(col('id'), 'boolean'), { id: 'TRUE' })).toBe(true);
    expect(evaluate(cast(col('id'), 'boolean'), { id: 'False' })).toBe(false);
    expect(evaluate(cast(col('id'), 'boolean'), { id: 'maybe' })).toBeNull();
  });

  it('reads timestamps from ISO text, and numbers as seconds since the epoch', () => {
    expect(evaluate(cast(col('id'), 'timestamp'), { id: '2024-01-01T00:00:00.000Z' })).toBe(JAN_1_2024);
    expect(evaluate(cast(col('id'), 'timestamp'), { id: 'yesterday' })).toBeNull();
    expect(evaluate(cast(col('n'), 'timestamp'), { n: 1 })).toBe(1000);
    expect(evaluate(cast(col('v'), 'timestamp'), { v: 1.5 })).toBe(1500);
    expect(evaluate(cast(col('ts'), 'long'), { ts: JAN_1_2024 + 999 })).toBe(JAN_1_2024 / 1000);
  });

  it('keeps null as null', () => {
    expect(evaluate(cast(col('id'), 'int'), { id: null })).toBeNull();
  });

  it('rejects casts Spark has not, before any row', () => {
    expect(thrown(() => exprType(cast(col('ts'), { struct: [] }), SCHEMA)).code).toBe('DATATYPE_MISMATCH');
  });
});

describe('functions', () => {
  it('upper, lower, trim and length keep null as null', () => {
    expect(evaluate(call('upper', col('id')), { id: 'aBc' })).toBe('ABC');
    expect(evaluate(call('lower', col('id')), { id: 'aBc' })).toBe('abc');
    expect(evaluate(call('upper', col('id')), { id: null })).toBeNull();
    expect(evaluate(call('length', col('id')), { id: null })).toBeNull();
    expect(evaluate(call('length', col('id')), { id: 'héllo' })).toBe(5);
    // Characters are code points, as Spark counts them.
    expect(evaluate(call('length', col('id')), { id: 'a😀' })).toBe(2);
    expect(evaluate(call('upper', col('n')), { n: 42 })).toBe('42');
  });

  it('trim removes spaces only, as Spark does', () => {
    expect(evaluate(call('trim', col('id')), { id: '  a b  ' })).toBe('a b');
    expect(evaluate(call('trim', col('id')), { id: '\ta ' })).toBe('\ta');
  });

  it('concat is null when any argument is null', () => {
    expect(evaluate(call('concat', col('id'), lit('-'), col('n')), { id: 'a', n: 1 })).toBe('a-1');
    expect(evaluate(call('concat', col('id'), lit('-'), col('n')), { id: 'a', n: null })).toBeNull();
  });

  it.each([
    ['Spark', 1, 3, 'Spa'],
    ['Spark', 0, 3, 'Spa'],
    ['Spark', 2, 3, 'par'],
    ['Spark', -3, 2, 'ar'],
    ['Spark', -10, 3, ''],
    ['Spark', -7, 4, 'Sp'],
    ['Spark', 4, 100, 'rk'],
    ['Spark', 6, 2, ''],
    ['Spark', 2, 0, ''],
    ['Spark', 2, -1, ''],
    ['a😀b', 2, 1, '😀'],
  ])('substring(%s, %i, %i) is %s', (s, pos, len, expected) => {
    expect(evaluate(call('substring', col('id'), lit(pos, 'int'), lit(len, 'int')), { id: s })).toBe(expected);
  });

  it('substring without a length runs to the end, and is null for null', () => {
    expect(evaluate(call('substring', col('id'), lit(3, 'int')), { id: 'Spark' })).toBe('ark');
    expect(evaluate(call('substring', col('id'), lit(1, 'int'), lit(2, 'int')), { id: null })).toBeNull();
  });

  it('coalesce returns the first non-null argument in the common type', () => {
    const e = call('coalesce', col('v'), col('n'), lit(0));
    expect(exprType(e, SCHEMA)).toBe('double');
    expect(evaluate(e, { v: null, n: 5 })).toBe(5);
    expect(evaluate(e, { v: 2.5, n: 5 })).toBe(2.5);
    expect(evaluate(e, { v: null, n: null })).toBe(0);
  });
});

describe('when', () => {
  const grade: Expr = {
    op: 'when',
    branches: [
      { cond: bin('gt', col('v'), lit(10)), value: lit('high') },
      { cond: bin('gt', col('v'), lit(5)), value: lit('mid') },
    ],
    otherwise: lit('low'),
  };

  it('takes the first branch whose condition is true', () => {
    expect([20, 7, 1].map((v) => evaluate(grade, { v }))).toEqual(['high', 'mid', 'low']);
  });

  it('skips a branch whose condition is null', () => {
    expect(evaluate(grade, { v: null })).toBe('low');
  });

  it('is null without otherwise when no branch holds', () => {
    const e: Expr = { op: 'when', branches: [{ cond: col('ok'), value: col('n') }] };
    expect(evaluate(e, { ok: false, n: 1 })).toBeNull();
    expect(evaluate(e, { ok: true, n: 1 })).toBe(1);
  });

  it('brings branch values to a common type', () => {
    const e: Expr = { op: 'when', branches: [{ cond: col('ok'), value: col('n') }], otherwise: col('v') };
    expect(exprType(e, SCHEMA)).toBe('double');
  });
});

describe('window', () => {
  const MIN = 60_000;
  const tumbling = (startMs = 0): Expr => ({ op: 'window', expr: col('ts'), sizeMs: 5 * MIN, slideMs: 5 * MIN, startMs });

  it('is the struct of the tumbling window holding the time, before the epoch too', () => {
    expect(evaluate(tumbling(), { ts: JAN_1_2024 + 7 * MIN })).toEqual({ start: JAN_1_2024 + 5 * MIN, end: JAN_1_2024 + 10 * MIN });
    expect(evaluate(tumbling(), { ts: JAN_1_2024 + 10 * MIN })).toEqual({ start: JAN_1_2024 + 10 * MIN, end: JAN_1_2024 + 15 * MIN });
    expect(evaluate(tumbling(), { ts: -1 })).toEqual({ start: -5 * MIN, end: 0 });
    expect(evaluate(tumbling(MIN), { ts: 30_000 })).toEqual({ start: -4 * MIN, end: MIN });
  });

  it('is null for a null time, and its fields read like any struct', () => {
    expect(evaluate(tumbling(), { ts: null })).toBeNull();
    expect(evaluate(bin('equalTo', tumbling(), col('window')), { ts: 7 * MIN, window: { start: 5 * MIN, end: 10 * MIN } })).toBe(true);
  });

  it('types as struct<start, end>, nullable as its time column', () => {
    expect(exprType(tumbling(), SCHEMA)).toEqual({
      struct: [
        { name: 'start', type: 'timestamp', nullable: true },
        { name: 'end', type: 'timestamp', nullable: true },
      ],
    });
    const schema: Schema = [{ name: 'ts', type: 'timestamp', nullable: false }];
    expect(exprNullable(tumbling(), schema)).toBe(false);
    expect(exprNullable(tumbling(), SCHEMA)).toBe(true);
  });

  it('needs a TIMESTAMP time column, and names it', () => {
    const e = thrown(() => compileExpr({ ...tumbling(), expr: col('n') } as Expr, SCHEMA));
    expect(e.code).toBe('DATATYPE_MISMATCH');
    expect(e.column).toBe('n');
    expect(e.message).toContain("'n'");
  });

  it('refuses a sliding window outside groupBy at compile time', () => {
    const sliding: Expr = { op: 'window', expr: col('ts'), sizeMs: 10 * MIN, slideMs: 5 * MIN, startMs: 0 };
    expect(exprType(sliding, SCHEMA)).toHaveProperty('struct');
    expect(thrown(() => compileExpr(sliding, SCHEMA)).code).toBe('UNSUPPORTED_OPERATION');
  });

  it('is named window, and its time column is read from the input', () => {
    expect(exprName(tumbling(), SCHEMA)).toBe('window');
    expect(exprSql({ op: 'window', expr: col('ts'), sizeMs: 10, slideMs: 5, startMs: 1 })).toBe('window(ts, 10 milliseconds, 5 milliseconds, 1 milliseconds)');
    const schema: Schema = [...SCHEMA.slice(0, 5)];
    expect(requiredInputSchema([{ kind: 'project', exprs: [tumbling()] }], schema).map((f) => f.name)).toEqual(['ts']);
  });
});
