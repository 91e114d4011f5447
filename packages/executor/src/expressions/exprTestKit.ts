/**
 * Shared by the expression tests (compileExpr, compileOps, exprNames, exprTypes, resolveColumn,
 * udfs): a schema with one column of every type, builders for Expr trees, and error capture.
 */
import { expect } from 'vitest';
import { SluiceError } from '@sluice/state';
import { compileExpr } from './compileExpr.js';
import type { BinaryOp, Expr } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { formatDouble, formatTimestamp } from '../schema/values.js';
import { formatDate } from '../schema/timestamps.js';
import { formatInterval, type Interval } from '../schema/intervals.js';
import type { UdfRegistry } from './udfs.js';

export const SCHEMA: Schema = [
  { name: 'id', type: 'string', nullable: true },
  { name: 'v', type: 'double', nullable: true },
  { name: 'n', type: 'long', nullable: true },
  { name: 'i', type: 'int', nullable: true },
  { name: 'ts', type: 'timestamp', nullable: true },
  { name: 'ok', type: 'boolean', nullable: true },
  {
    name: 'window',
    type: {
      struct: [
        { name: 'start', type: 'timestamp', nullable: true },
        { name: 'end', type: 'timestamp', nullable: true },
      ],
    },
    nullable: true,
  },
];

export const col = (name: string): Expr => ({ op: 'col', name });
export function lit(value: string | number | boolean | null, type?: DataType): Expr {
  const t: DataType =
    type ??
    (value === null ? 'null' : typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'boolean' : Number.isInteger(value) ? 'long' : 'double');
  return { op: 'lit', value, type: t };
}
export const bin = (fn: BinaryOp, left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right });
export const cast = (expr: Expr, to: DataType): Expr => ({ op: 'cast', expr, to });
export const call = (fn: Extract<Expr, { op: 'call' }>['fn'], ...args: Expr[]): Expr => ({ op: 'call', fn, args });

export function evaluate(expr: Expr, row: Row = {}, udfs: UdfRegistry = new Map()): unknown {
  return compileExpr(expr, SCHEMA, udfs)(row);
}

export function thrown(f: () => unknown): SluiceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SluiceError);
    return e as SluiceError;
  }
  throw new Error('expected a SluiceError');
}

export const JAN_1_2024 = Date.UTC(2024, 0, 1);

/**
 * A value as Spark's SQL shell prints a SELECT's result (HiveResult.toHiveString), the form of
 * the results in Spark's function documentation: NULL, [1,2,null], {1:"a"}, {"a":1},
 * 2024-01-01, 2024-01-01 10:00:00.5, strings quoted only inside a collection.
 */
export function hiveString(value: unknown, type: DataType, nested = false): string {
  if (value === null || value === undefined) return nested ? 'null' : 'NULL';
  if (typeof type === 'object') {
    if ('array' in type) return `[${(value as unknown[]).map((x) => hiveString(x, type.array, true)).join(',')}]`;
    if ('map' in type)
      return `{${(value as Array<[unknown, unknown]>).map(([k, v]) => `${hiveString(k, type.map.key, true)}:${hiveString(v, type.map.value, true)}`).join(',')}}`;
    return `{${type.struct.map((f) => `"${f.name}":${hiveString((value as Row)[f.name], f.type, true)}`).join(',')}}`;
  }
  switch (type) {
    case 'string':
      return nested ? `"${value as string}"` : (value as string);
    case 'double':
      return formatDouble(value as number);
    case 'date':
      return formatDate(value as number) as string;
    case 'interval':
      return formatInterval(value as Interval);
    case 'timestamp':
      return (formatTimestamp(value as number) as string)
        .replace('T', ' ')
        .replace(/\.?0*Z$/, '')
        .replace(/(\.\d*?)0+$/, '$1');
    default:
      return String(value);
  }
}
