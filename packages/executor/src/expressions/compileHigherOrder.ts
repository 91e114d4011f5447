/**
 * The higher-order functions (transform, filter, exists, forall, aggregate, zip_with, map_filter,
 * transform_keys, transform_values) compiled: each lambda's body over the row's columns and its
 * parameters.
 */
import { SluiceError } from '@sluice/state';
import type { Expr, HigherOrderName } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { callTypes, exprType } from './exprTypes.js';
import { lambdaScope } from './typeRules.js';
import type { UdfRegistry } from './udfs.js';
import { createCast } from '../schema/values.js';
import type { Evaluator } from './compileExpr.js';

/** Compiles an expression (compileExpr.ts's compile, passed in: lambdas' bodies are any expression). */
export type Compile = (expr: Expr, schema: Schema, udfs: UdfRegistry) => Evaluator;

/**
 * A higher-order function: its lambda's body compiled over the row's columns and the lambda's
 * parameters, evaluated per element in one scope object per row (the row's fields, then the
 * parameters, set anew for each element).
 */
export function compileHigherOrder(expr: Extract<Expr, { op: 'call' }>, schema: Schema, udfs: UdfRegistry, compile: Compile): Evaluator {
  callTypes(expr, schema); // type errors fail here, before any row
  const input = compile(expr.args[0]!, schema, udfs);
  const inputType = exprType(expr.args[0]!, schema);
  const elementOf = (t: DataType): DataType => (typeof t === 'object' && 'array' in t ? t.array : 'null');
  /** Lambda `at` over parameters of `types` (the arity its own parameter list has): a function of the row and the parameters' values. */
  const lambda = (at: number, ...types: DataType[][]): ((row: Row, ...values: unknown[]) => unknown) => {
    const l = expr.args[at] as Extract<Expr, { op: 'lambda' }>;
    const scope = lambdaScope(schema, l.params, types.find((t) => t.length === l.params.length)!);
    const body = compile(l.body, scope, udfs);
    const params = l.params;
    return (row, ...values) => {
      const s: Row = { ...row };
      for (let i = 0; i < params.length; i++) s[params[i]!] = values[i] ?? null;
      return body(s);
    };
  };
  const fn = expr.fn as HigherOrderName;
  if (fn === 'aggregate') {
    const accType = exprType(expr.args[1]!, schema);
    const start = compile(expr.args[1]!, schema, udfs);
    const merge = lambda(2, [accType, elementOf(inputType)]);
    const mergedType = exprType(
      (expr.args[2] as Extract<Expr, { op: 'lambda' }>).body,
      lambdaScope(schema, (expr.args[2] as Extract<Expr, { op: 'lambda' }>).params, [accType, elementOf(inputType)]),
    );
    const toAcc = createCast(mergedType, accType)!;
    const finish = expr.args.length === 4 ? lambda(3, [accType]) : undefined;
    return (row) => {
      const xs = input(row) as unknown[] | null;
      if (xs == null) return null;
      let acc = start(row);
      for (const x of xs) {
        const m = merge(row, acc, x);
        acc = m == null ? null : toAcc(m);
      }
      return finish === undefined ? acc : finish(row, acc);
    };
  }
  if (fn === 'zip_with') {
    const other = compile(expr.args[1]!, schema, udfs);
    const f = lambda(2, [elementOf(inputType), elementOf(exprType(expr.args[1]!, schema))]);
    return (row) => {
      const a = input(row) as unknown[] | null;
      const b = other(row) as unknown[] | null;
      if (a == null || b == null) return null;
      return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => f(row, a[i] ?? null, b[i] ?? null));
    };
  }
  if (fn === 'map_filter' || fn === 'transform_keys' || fn === 'transform_values') {
    const m = (inputType as { map: { key: DataType; value: DataType } }).map;
    const f = lambda(1, [m.key, m.value]);
    return (row) => {
      const entries = input(row) as Array<[unknown, unknown]> | null;
      if (entries == null) return null;
      if (fn === 'map_filter') return entries.filter(([k, v]) => f(row, k, v) === true);
      if (fn === 'transform_values') return entries.map(([k, v]) => [k, f(row, k, v) ?? null]);
      const out = entries.map(([k, v]): [unknown, unknown] => {
        const key = f(row, k, v);
        if (key == null) throw new SluiceError('INVALID_EXPRESSION', '[NULL_MAP_KEY] Cannot use null as map key.');
        return [key, v];
      });
      if (new Set(out.map(([k]) => (typeof k === 'object' ? JSON.stringify(k) : k))).size !== out.length) {
        throw new SluiceError('INVALID_EXPRESSION', '[DUPLICATED_MAP_KEY] transform_keys gave a duplicate map key.');
      }
      return out;
    };
  }
  // transform, filter, exists, forall: the lambda takes the element, and its 0-based index when it has two parameters.
  const e = elementOf(inputType);
  const f = lambda(1, [e], [e, 'int']);
  return (row) => {
    const xs = input(row) as unknown[] | null;
    if (xs == null) return null;
    switch (fn) {
      case 'transform':
        return xs.map((x, i) => f(row, x, i) ?? null);
      case 'filter':
        return xs.filter((x, i) => f(row, x, i) === true);
      default: {
        // Three-valued, as Spark's defaults: exists is true when one element holds and forall false
        // when one does not; else null when one is unknown.
        const decisive = fn === 'exists';
        let unknown = false;
        for (let i = 0; i < xs.length; i++) {
          const p = f(row, xs[i], i);
          if (p === decisive) return decisive;
          if (p == null) unknown = true;
        }
        return unknown ? null : !decisive;
      }
    }
  };
}
