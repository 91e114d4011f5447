import { describe, expect, it } from 'vitest';
import { requiredInputSchema } from './pruning.js';
import type { Expr } from './types.js';
import type { Schema } from '../schema/types.js';

const schema: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'v', type: 'long', nullable: true },
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 's', type: { struct: [{ name: 'a', type: 'int', nullable: true }] }, nullable: true },
];
const col = (name: string): Expr => ({ op: 'col', name });
const names = (s: Schema) => s.map((f) => f.name);

describe('requiredInputSchema', () => {
  it('keeps the columns read by filters and the first projection', () => {
    const ops = [
      {
        kind: 'filter' as const,
        cond: { op: 'binary' as const, fn: 'gt' as const, left: col('v'), right: { op: 'lit' as const, value: 1, type: 'long' as const } },
      },
      { kind: 'project' as const, exprs: [col('ID')] },
      { kind: 'filter' as const, cond: col('ID') },
    ];
    expect(names(requiredInputSchema(ops, schema))).toEqual(['id', 'v']);
  });

  it('reads nested struct fields through their struct, and udf and when arguments', () => {
    const ops = [
      {
        kind: 'project' as const,
        exprs: [
          { op: 'udf' as const, moduleUrl: 'm', exportName: 'f', returnType: 'string' as const, args: [col('s.a')] },
          { op: 'when' as const, branches: [{ cond: col('ts'), value: col('id') }] },
        ],
      },
    ];
    expect(names(requiredInputSchema(ops, schema))).toEqual(['id', 'ts', 's']);
  });

  it('keeps every column when nothing projects, and the watermark column before a projection', () => {
    expect(requiredInputSchema([{ kind: 'filter', cond: col('v') }], schema)).toBe(schema);
    expect(
      names(
        requiredInputSchema(
          [
            { kind: 'watermark', column: 'ts', delayMs: 1 },
            { kind: 'project', exprs: [col('v')] },
          ],
          schema,
        ),
      ),
    ).toEqual(['v', 'ts']);
  });
});
