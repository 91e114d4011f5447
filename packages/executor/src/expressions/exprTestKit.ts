/**
 * Shared by the expression tests (compileExpr, compileOps, exprNames, exprTypes, resolveColumn,
 * udfs): a schema with one column of every type, builders for Expr trees, and error capture.
 */
import { expect } from 'vitest';
import { SluiceError } from '@sluice/state';
import { compileExpr } from './compileExpr.js';
import type { BinaryOp, Expr } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
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
    type: { struct: [{ name: 'start', type: 'timestamp', nullable: true }, { name: 'end', type: 'timestamp', nullable: true }] },
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
