import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/state';
import { compileExpr, compileOps, exprName, exprType, loadUdfs, planOutputSchema, udfKey, type UdfRegistry } from './expr.js';
import type { BinaryOp, DataType, Expr, Row, Schema } from './types.js';

const SCHEMA: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'v', type: 'double', nullable: true },
  { name: 'n', type: 'long', nullable: true },
  { name: 'i', type: 'int', nullable: true },
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'ok', type: 'boolean', nullable: true },
  {
    name: 'window',
    type: { struct: [{ name: 'start', type: 'timestamp', nullable: true }, { name: 'end', type: 'timestamp', nullable: true }] },
    nullable: true,
  },
];

const col = (name: string): Expr => ({ op: 'col', name });
function lit(value: string | number | boolean | null, type?: DataType): Expr {
  const t: DataType =
    type ??
    (value === null ? 'null' : typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'boolean' : Number.isInteger(value) ? 'long' : 'double');
  return { op: 'lit', value, type: t };
}
const bin = (fn: BinaryOp, left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right });
const cast = (expr: Expr, to: DataType): Expr => ({ op: 'cast', expr, to });
const call = (fn: Extract<Expr, { op: 'call' }>['fn'], ...args: Expr[]): Expr => ({ op: 'call', fn, args });

function evaluate(expr: Expr, row: Row = {}, udfs: UdfRegistry = new Map()): unknown {
  return compileExpr(expr, SCHEMA, udfs)(row);
}

function thrown(f: () => unknown): SluiceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SluiceError);
    return e as SluiceError;
  }
  throw new Error('expected a SluiceError');
}

const JAN_1_2024 = Date.UTC(2024, 0, 1);

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

describe('columns', () => {
  it('reads a struct field with a dotted name', () => {
    expect(evaluate(col('window.start'), { window: { start: 5, end: 9 } })).toBe(5);
    expect(evaluate(col('window.start'), { window: null })).toBeNull();
  });

  it('resolves names case-insensitively when no exact match exists', () => {
    expect(evaluate(col('ID'), { id: 'x' })).toBe('x');
    expect(exprName(col('ID'), SCHEMA)).toBe('id');
  });

  it('fails on an unknown column with UNRESOLVED_COLUMN naming it and the available ones', () => {
    const e = thrown(() => exprType(bin('gt', col('nope'), lit(1)), SCHEMA));
    expect(e.code).toBe('UNRESOLVED_COLUMN');
    expect(e.column).toBe('nope');
    expect(e.message).toContain('id, v, n');
    expect(thrown(() => compileExpr(col('window.middle'), SCHEMA)).column).toBe('window.middle');
  });
});

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

describe('compileOps', () => {
  const rows: Row[] = [
    { id: 'a', v: 1, n: 1 },
    { id: 'b', v: 20, n: null },
    { id: null, v: null, n: 3 },
  ];

  it('keeps only rows whose filter is true, then projects named columns', () => {
    const ops = [
      { kind: 'filter' as const, cond: bin('lt', col('v'), lit(10)) },
      { kind: 'project' as const, exprs: [col('id'), bin('plus', col('v'), lit(1)), { op: 'alias' as const, expr: call('upper', col('id')), name: 'ID' }] },
    ];
    const { outputSchema, run } = compileOps(ops, SCHEMA, new Map());
    expect(outputSchema.map((f) => [f.name, f.type])).toEqual([['id', 'string'], ['(v + 1)', 'double'], ['ID', 'string']]);
    expect(run(rows)).toEqual([{ id: 'a', '(v + 1)': 2, ID: 'A' }]);
    expect(rows[0]).toEqual({ id: 'a', v: 1, n: 1 });
  });

  it('drops rows whose condition is null (SQL filter)', () => {
    const { run } = compileOps([{ kind: 'filter', cond: bin('equalTo', col('n'), col('n')) }], SCHEMA);
    expect(run(rows).map((r) => r['id'])).toEqual(['a', null]);
  });

  it('lets rows through a watermark marker unchanged', () => {
    const { outputSchema, run } = compileOps([{ kind: 'watermark', column: 'ts', delayMs: 1000 }], SCHEMA);
    expect(outputSchema).toBe(SCHEMA);
    expect(run(rows)).toEqual(rows);
  });

  it('writes a missing field as null, never undefined', () => {
    const { run } = compileOps([{ kind: 'project', exprs: [col('id'), col('ts')] }], SCHEMA);
    expect(run([{ id: 'x' }])).toEqual([{ id: 'x', ts: null }]);
    expect(Object.prototype.hasOwnProperty.call(run([{ id: 'x' }])[0], 'ts')).toBe(true);
  });

  it('keeps a column named __proto__ as a plain field', () => {
    const { run } = compileOps([{ kind: 'project', exprs: [{ op: 'alias', expr: col('id'), name: '__proto__' }] }], SCHEMA);
    const [out] = run([{ id: 'x' }]);
    expect(Object.keys(out!)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe('planOutputSchema', () => {
  it('checks every operator in order without loading udfs', () => {
    const udf: Expr = { op: 'udf', moduleUrl: 'file:///missing.mjs', exportName: 'f', returnType: 'timestamp', args: [col('id')] };
    const schema = planOutputSchema(
      [
        { kind: 'project', exprs: [{ op: 'alias', expr: udf, name: 't' }, col('v')] },
        { kind: 'filter', cond: bin('gt', col('v'), lit(0)) },
      ],
      SCHEMA,
    );
    expect(schema).toEqual([
      { name: 't', type: 'timestamp', nullable: true },
      { name: 'v', type: 'double', nullable: true },
    ]);
  });

  it('fails on a column that an earlier projection dropped', () => {
    const e = thrown(() =>
      planOutputSchema([{ kind: 'project', exprs: [col('v')] }, { kind: 'filter', cond: bin('gt', col('n'), lit(0)) }], SCHEMA),
    );
    expect(e.code).toBe('UNRESOLVED_COLUMN');
    expect(e.column).toBe('n');
  });

  it('rejects a non-boolean filter and two outputs with one name', () => {
    expect(thrown(() => planOutputSchema([{ kind: 'filter', cond: col('v') }], SCHEMA)).code).toBe('DATATYPE_MISMATCH');
    const dup = thrown(() => planOutputSchema([{ kind: 'project', exprs: [col('v'), { op: 'alias', expr: col('n'), name: 'v' }] }], SCHEMA));
    expect(dup.code).toBe('COLUMN_ALREADY_EXISTS');
    expect(dup.column).toBe('v');
  });

  it('derives nullability', () => {
    const schema: Schema = [{ name: 'k', type: 'long', nullable: false }];
    const out = planOutputSchema(
      [{ kind: 'project', exprs: [bin('plus', col('k'), lit(1)), bin('divide', col('k'), lit(2)), { op: 'unary', fn: 'isNull', expr: col('k') }] }],
      schema,
    );
    expect(out.map((f) => f.nullable)).toEqual([false, true, false]);
  });
});

describe('udf', () => {
  const fixtures = new URL('../../../test/fixtures/udfs.mjs', import.meta.url).href;
  const udf = (exportName: string, returnType: DataType, ...args: Expr[]): Expr => ({ op: 'udf', moduleUrl: fixtures, exportName, returnType, args });

  async function run(expr: Expr, row: Row): Promise<unknown> {
    const registry = await loadUdfs([expr], new Map());
    return compileExpr(expr, SCHEMA, registry)(row);
  }

  it('calls the named export of the module', async () => {
    expect(await run(udf('double', 'double', col('v')), { v: 21 })).toBe(42);
    expect(await run(udf('double', 'double', col('v')), { v: null })).toBeNull();
  });

  it('hands timestamps to user code as Dates and takes Dates back as epoch ms', async () => {
    expect(await run(udf('isoDay', 'string', col('ts')), { ts: JAN_1_2024 })).toBe('2024-01-01');
    expect(await run(udf('addDays', 'timestamp', col('ts'), lit(1)), { ts: JAN_1_2024 })).toBe(JAN_1_2024 + 86_400_000);
  });

  it('reads undefined from a udf as null', async () => {
    expect(await run(udf('nothing', 'string'), {})).toBeNull();
  });

  it('runs on the calling thread (0 on the main thread)', async () => {
    expect(await run(udf('threadId', 'long'), {})).toBe(0);
  });

  it('lets an error thrown by user code propagate unchanged, for the scheduler to retry', async () => {
    await expect(run(udf('fail', 'double'), {})).rejects.toThrow('udf failed on purpose');
    await expect(run(udf('fail', 'double'), {})).rejects.not.toBeInstanceOf(SluiceError);
  });

  it('rejects a promise result with UDF_ASYNC_RESULT', async () => {
    await expect(run(udf('later', 'double', col('v')), { v: 1 })).rejects.toMatchObject({ code: 'UDF_ASYNC_RESULT' });
  });

  it('registers each udf once under moduleUrl#exportName, for ops too', async () => {
    const registry: UdfRegistry = new Map();
    await loadUdfs([{ kind: 'filter', cond: bin('gt', udf('double', 'double', col('v')), lit(1)) }], registry);
    expect([...registry.keys()]).toEqual([udfKey(fixtures, 'double')]);
  });

  it('imports a module once per worker', async () => {
    const source = 'globalThis.__sluiceUdfLoads = (globalThis.__sluiceUdfLoads ?? 0) + 1; export const one = () => 1;';
    const url = `data:text/javascript,${encodeURIComponent(source)}`;
    const e: Expr = { op: 'udf', moduleUrl: url, exportName: 'one', returnType: 'long', args: [] };
    await loadUdfs(e, new Map());
    const registry = await loadUdfs(e, new Map());
    expect(compileExpr(e, SCHEMA, registry)({})).toBe(1);
    expect((globalThis as { __sluiceUdfLoads?: number }).__sluiceUdfLoads).toBe(1);
  });

  it('fails with UDF_NOT_FOUND for a missing module, export or non-function', async () => {
    const missingModule = { ...udf('double', 'double'), moduleUrl: new URL('./no-such-udfs.mjs', fixtures).href } as Expr;
    await expect(loadUdfs(missingModule, new Map())).rejects.toMatchObject({ code: 'UDF_NOT_FOUND' });
    await expect(loadUdfs(udf('noSuchExport', 'double'), new Map())).rejects.toMatchObject({ code: 'UDF_NOT_FOUND' });
    await expect(loadUdfs(udf('notAFunction', 'double'), new Map())).rejects.toMatchObject({ code: 'UDF_NOT_FOUND' });
  });

  it('fails with UDF_NOT_FOUND when compiled before loading', () => {
    expect(thrown(() => compileExpr(udf('double', 'double', col('v')), SCHEMA, new Map())).code).toBe('UDF_NOT_FOUND');
  });
});
