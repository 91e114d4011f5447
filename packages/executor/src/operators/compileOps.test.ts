import { describe, expect, it } from 'vitest';
import { compileOps } from './compileOps.js';
import { bin, call, col, lit, SCHEMA } from '../expressions/exprTestKit.js';
import type { Row } from '../schema/types.js';

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
    expect(outputSchema.map((f) => [f.name, f.type])).toEqual([
      ['id', 'string'],
      ['(v + 1)', 'double'],
      ['ID', 'string'],
    ]);
    expect(run(rows)).toEqual([{ id: 'a', '(v + 1)': 2, ID: 'A' }]);
    expect(rows[0]).toEqual({ id: 'a', v: 1, n: 1 });
  });

  it('drops rows whose condition is null (SQL filter)', () => {
    const { run } = compileOps([{ kind: 'filter', cond: bin('equalTo', col('n'), col('n')) }], SCHEMA);
    expect(run(rows).map((r) => r.id)).toEqual(['a', null]);
  });

  it('lets rows through a watermark marker unchanged', () => {
    const { outputSchema, run } = compileOps([{ kind: 'watermark', column: 'ts', delayMs: 1000 }], SCHEMA);
    expect(outputSchema).toBe(SCHEMA);
    expect(run(rows)).toEqual(rows);
  });

  it('writes a missing field as null, never undefined', () => {
    const { run } = compileOps([{ kind: 'project', exprs: [col('id'), col('ts')] }], SCHEMA);
    expect(run([{ id: 'x' }])).toEqual([{ id: 'x', ts: null }]);
    expect(Object.hasOwn(run([{ id: 'x' }])[0]!, 'ts')).toBe(true);
  });

  it('keeps a column named __proto__ as a plain field', () => {
    const { run } = compileOps([{ kind: 'project', exprs: [{ op: 'alias', expr: col('id'), name: '__proto__' }] }], SCHEMA);
    const [out] = run([{ id: 'x' }]);
    expect(Object.keys(out!)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
