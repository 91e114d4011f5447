import { describe, expect, it } from 'vitest';
import { planOutputSchema } from './exprTypes.js';
import { bin, col, lit, SCHEMA, thrown } from './exprTestKit.js';
import type { Expr } from './types.js';
import type { Schema } from '../schema/types.js';

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
      planOutputSchema(
        [
          { kind: 'project', exprs: [col('v')] },
          { kind: 'filter', cond: bin('gt', col('n'), lit(0)) },
        ],
        SCHEMA,
      ),
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

  it('refuses a sliding window outside groupBy, and types a tumbling one', () => {
    const w = (slideMs: number): Expr => ({ op: 'window', expr: col('ts'), sizeMs: 600_000, slideMs, startMs: 0 });
    expect(planOutputSchema([{ kind: 'project', exprs: [w(600_000)] }], SCHEMA)[0]).toMatchObject({ name: 'window', nullable: true });
    expect(thrown(() => planOutputSchema([{ kind: 'project', exprs: [{ op: 'alias', expr: w(300_000), name: 'x' }] }], SCHEMA)).code).toBe(
      'UNSUPPORTED_OPERATION',
    );
    const inFilter = bin('equalTo', w(300_000), col('window'));
    expect(thrown(() => planOutputSchema([{ kind: 'filter', cond: inFilter }], SCHEMA)).code).toBe('UNSUPPORTED_OPERATION');
  });
});
