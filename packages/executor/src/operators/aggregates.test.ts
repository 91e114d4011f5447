import { describe, expect, it } from 'vitest';
import { pack, unpack } from 'msgpackr';
import { aggregateOutputSchema, aggregatorOf, aggResultType, compareCodePoints, compileAggInput, type AggBuffer } from './aggregates.js';
import { statefulOutputSchema } from './registry.js';
import { col, SCHEMA, thrown } from '../expressions/exprTestKit.js';
import type { Expr } from '../expressions/types.js';
import type { AggFn, AggSpec, StatefulOp } from './types.js';
import type { Row } from '../schema/types.js';

const spec = (fn: AggFn, arg: string | null): AggSpec => ({ fn, arg: arg === null ? null : col(arg), name: `${fn}(${arg ?? '*'})` });

/** Aggregates `rows` the way the engine does: partials per chunk, msgpack between them, then a merge. */
function aggregate(s: AggSpec, rows: Row[], chunk = 2): unknown {
  const agg = aggregatorOf(s, SCHEMA);
  const input = compileAggInput(s, SCHEMA);
  const partials: AggBuffer[] = [];
  for (let i = 0; i < rows.length; i += chunk) {
    let b = agg.newBuffer();
    for (const row of rows.slice(i, i + chunk)) b = agg.update(b, input === null ? null : input(row));
    partials.push(unpack(pack(b)) as AggBuffer);
  }
  return agg.finalize(partials.reduce((a, b) => agg.merge(a, b), agg.newBuffer()));
}

const rows: Row[] = [{ n: 3, v: 1.5, id: 'b' }, { n: null, v: null, id: null }, { n: -1, v: 2.5, id: 'a' }, { n: 10, v: null, id: 'c' }, {}];

describe('aggregates', () => {
  it('count(*) counts rows, count(x) non-null values', () => {
    expect(aggregate(spec('count', null), rows)).toBe(5);
    expect(aggregate(spec('count', 'n'), rows)).toBe(3);
    expect(aggregate(spec('count', 'n'), [])).toBe(0);
  });

  it('sums skip nulls and are null without a non-null value', () => {
    expect(aggregate(spec('sum', 'n'), rows)).toBe(12);
    expect(aggregate(spec('sum', 'v'), rows)).toBe(4);
    expect(aggregate(spec('sum', 'n'), [{ n: null }, {}])).toBeNull();
    expect(aggregate(spec('sum', 'n'), [])).toBeNull();
  });

  it('averages are DOUBLE over non-null values', () => {
    expect(aggregate(spec('avg', 'n'), rows)).toBe(4);
    expect(aggregate(spec('avg', 'v'), rows)).toBe(2);
    expect(aggregate(spec('avg', 'v'), [{ v: null }])).toBeNull();
  });

  it('min and max keep the input type; strings by code point, timestamps by time', () => {
    expect(aggregate(spec('min', 'n'), rows)).toBe(-1);
    expect(aggregate(spec('max', 'n'), rows)).toBe(10);
    expect(aggregate(spec('min', 'id'), rows)).toBe('a');
    expect(aggregate(spec('max', 'id'), rows)).toBe('c');
    expect(aggregate(spec('max', 'ts'), [{ ts: 5 }, { ts: -20 }, { ts: 1_700_000_000_000 }])).toBe(1_700_000_000_000);
    expect(aggregate(spec('min', 'ts'), [{ ts: 5 }, { ts: -20 }, { ts: null }])).toBe(-20);
    expect(aggregate(spec('max', 'id'), [{ id: null }])).toBeNull();
    // U+1F600 is above U+FFFD in code points, though its first UTF-16 unit (0xD83D) is below.
    expect(aggregate(spec('max', 'id'), [{ id: '\uFFFD' }, { id: '😀' }])).toBe('😀');
    expect(aggregate(spec('min', 'ok'), [{ ok: true }, { ok: false }])).toBe(false);
  });

  it('orders NaN above every double, as Spark does', () => {
    expect(aggregate(spec('max', 'v'), [{ v: 1 }, { v: NaN }, { v: Infinity }])).toBeNaN();
    expect(aggregate(spec('min', 'v'), [{ v: NaN }, { v: 3 }])).toBe(3);
  });

  it('sums text as DOUBLE (Spark non-ANSI) and rejects what cannot be summed', () => {
    expect(aggResultType(spec('sum', 'id'), SCHEMA)).toBe('double');
    expect(aggregate(spec('sum', 'id'), [{ id: '1.5' }, { id: 'x' }, { id: '2' }])).toBe(3.5);
    const e = thrown(() => aggResultType(spec('sum', 'ts'), SCHEMA));
    expect(e.code).toBe('DATATYPE_MISMATCH');
    expect(thrown(() => aggResultType(spec('avg', 'ok'), SCHEMA)).code).toBe('DATATYPE_MISMATCH');
  });

  it('types results as Spark does', () => {
    const types = (['count', 'sum', 'avg', 'min', 'max'] as const).map((fn) => [
      fn,
      aggResultType(spec(fn, 'i'), SCHEMA),
      aggResultType(spec(fn, 'v'), SCHEMA),
    ]);
    expect(types).toEqual([
      ['count', 'long', 'long'],
      ['sum', 'long', 'double'],
      ['avg', 'double', 'double'],
      ['min', 'int', 'double'],
      ['max', 'int', 'double'],
    ]);
  });

  it('compares strings by code point', () => {
    expect(compareCodePoints('a', 'b')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    expect(compareCodePoints('😀', '\uFFFD')).toBeGreaterThan(0);
    expect(compareCodePoints('x', 'x')).toBe(0);
  });
});

describe('aggregateOutputSchema', () => {
  const window: Expr = { op: 'window', expr: col('ts'), sizeMs: 300_000, slideMs: 300_000, startMs: 0 };
  const op = (keys: Expr[], keyNames: string[], aggs: AggSpec[]): Extract<StatefulOp, { kind: 'aggregate' }> => ({
    kind: 'aggregate',
    keys,
    keyNames,
    aggs,
    eventTimeKey: null,
  });

  it('lists the keys (a window as a struct) then the aggregates; count is non-null', () => {
    const schema = aggregateOutputSchema(op([window, col('id')], ['window', 'id'], [spec('count', null), { ...spec('avg', 'v'), name: 'mean' }]), SCHEMA);
    expect(schema).toEqual([
      {
        name: 'window',
        type: {
          struct: [
            { name: 'start', type: 'timestamp', nullable: true },
            { name: 'end', type: 'timestamp', nullable: true },
          ],
        },
        nullable: false,
      },
      { name: 'id', type: 'string', nullable: true },
      { name: 'count(*)', type: 'long', nullable: false },
      { name: 'mean', type: 'double', nullable: true },
    ]);
    expect(statefulOutputSchema(op([col('n')], ['n'], [spec('max', 'n')]), SCHEMA).map((f) => f.type)).toEqual(['long', 'long']);
  });

  it('rejects a window over a non-timestamp, a duplicate name and two windows', () => {
    const bad = thrown(() => aggregateOutputSchema(op([{ ...window, expr: col('id') } as Expr], ['window'], []), SCHEMA));
    expect([bad.code, bad.column]).toEqual(['DATATYPE_MISMATCH', 'id']);
    expect(thrown(() => aggregateOutputSchema(op([col('id')], ['id'], [{ ...spec('count', null), name: 'id' }]), SCHEMA)).code).toBe('COLUMN_ALREADY_EXISTS');
    expect(thrown(() => aggregateOutputSchema(op([window, window], ['w1', 'w2'], []), SCHEMA)).code).toBe('UNSUPPORTED_OPERATION');
    const sliding: Expr = { ...window, slideMs: 60_000 } as Expr;
    expect(aggregateOutputSchema(op([{ op: 'alias', expr: sliding, name: 'w' }], ['w'], []), SCHEMA)[0]!.type).toHaveProperty('struct');
    const nested: Expr = { op: 'binary', fn: 'equalTo', left: sliding, right: col('window') };
    expect(thrown(() => aggregateOutputSchema(op([nested], ['k'], []), SCHEMA)).code).toBe('UNSUPPORTED_OPERATION');
  });

  it('passes a deduplication through unchanged, after checking its columns', () => {
    const dedup: StatefulOp = { kind: 'dropDuplicates', columns: ['id', 'ts'], eventTimeColumn: 'ts' };
    expect(statefulOutputSchema(dedup, SCHEMA)).toBe(SCHEMA);
    expect(thrown(() => statefulOutputSchema({ ...dedup, columns: ['nope'] }, SCHEMA)).code).toBe('UNRESOLVED_COLUMN');
    expect(thrown(() => statefulOutputSchema({ ...dedup, eventTimeColumn: 'id' }, SCHEMA)).code).toBe('INVALID_EVENT_TIME_COLUMN');
  });
});
