import { describe, expect, it } from 'vitest';
import { compileExpr } from './compileExpr.js';
import { exprName } from './exprNames.js';
import { exprType } from './exprTypes.js';
import { expandStar } from './resolveColumn.js';
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

  it("suggests the closest columns as Spark's UNRESOLVED_COLUMN.WITH_SUGGESTION does, and a struct's fields for a path into it", () => {
    const e = thrown(() => exprType(col('iid'), SCHEMA));
    expect(e.suggestions?.slice(0, 2)).toEqual(['id', 'i']);
    expect(e.message).toContain('A column, variable, or function parameter with name `iid` cannot be resolved. Did you mean one of the following? [`id`, `i`,');
    const inner = thrown(() => compileExpr(col('window.strat'), SCHEMA));
    expect(inner.suggestions).toEqual(['window.start', 'window.end']);
    expect(inner.message).toContain('[`window`.`start`, `window`.`end`]');
    expect(thrown(() => exprType(col('nope'), [])).message).toContain('[UNRESOLVED_COLUMN.WITHOUT_SUGGESTION]');
  });
});

describe('expandStar', () => {
  it("gives a struct's fields, each named by its field", () => {
    expect(expandStar('window', SCHEMA)).toEqual([
      { op: 'alias', expr: { op: 'col', name: 'window.start' }, name: 'start' },
      { op: 'alias', expr: { op: 'col', name: 'window.end' }, name: 'end' },
    ]);
    expect(expandStar('WINDOW', SCHEMA).map((e) => exprName(e, SCHEMA))).toEqual(['start', 'end']);
  });

  it('refuses a column that is not a struct, and one that does not exist', () => {
    expect(thrown(() => expandStar('n', SCHEMA))).toMatchObject({ code: 'DATATYPE_MISMATCH', column: 'n.*' });
    expect(thrown(() => expandStar('windw', SCHEMA))).toMatchObject({ code: 'UNRESOLVED_COLUMN', column: 'windw.*', suggestions: ['window'] });
  });
});
