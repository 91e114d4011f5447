import { describe, expect, it } from 'vitest';
import { compileExpr } from './compileExpr.js';
import { exprName } from './exprNames.js';
import { exprType } from './exprTypes.js';
import { bin, col, evaluate, lit, SCHEMA, thrown } from './exprTestKit.js';

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
