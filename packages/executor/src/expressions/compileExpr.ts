/**
 * Expression evaluation inside a worker: an Expr, typed by exprTypes.ts, is compiled once into a
 * tree of closures, so that evaluating a row does no dispatch on operator names.
 *
 * Semantics are Spark's, non-ANSI: SQL three-valued logic, null in → null out, division and
 * modulo by zero give null, INT arithmetic wraps at 32 bits, casts of unparsable text give null.
 * LONG values are JS numbers, so they are exact up to 2^53 and do not wrap at 2^63.
 *
 * The closures of operators and table functions are evaluators.ts's; the higher-order functions
 * are compiled in compileHigherOrder.ts.
 */
import { SluiceError } from '@sluice/state';
import { HIGHER_ORDER, type Expr, type HigherOrderName } from './types.js';
import type { Row, Schema } from '../schema/types.js';
import { binaryTypes, callTypes, exprType } from './exprTypes.js';
import { ARITHMETIC_OPS, BITWISE_OPS, constantOf, type Arithmetic, type Comparison } from './typeRules.js';
import { exprSql } from './exprNames.js';
import { resolveColumn } from './resolveColumn.js';
import { codePointLength, sparkSubstring, trimSpaces } from './sparkStrings.js';
import { isScalarFunction, SCALAR_FUNCTIONS } from './scalarFunctions.js';
import { udfFailed, udfKey, udfResultConverter, type UdfRegistry } from './udfs.js';
import { lastWindowStart } from './windows.js';
import { createToExternalConverter, toInternal } from '../schema/values.js';
import {
  ARITHMETIC,
  bitwise,
  coerce,
  COMPARISON,
  compileDatetimeArithmetic,
  compileScalar,
  DOUBLE_COMPARISON,
  INT_ARITHMETIC,
  LOGIC,
  structEquals,
} from './evaluators.js';
import { compileHigherOrder } from './compileHigherOrder.js';

export type Evaluator = (row: Row) => unknown;

type N = number;

function compileBinary(expr: Extract<Expr, { op: 'binary' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  const { operand, result, datetime } = binaryTypes(expr, schema);
  if (result === 'null') return () => null;
  if (datetime !== undefined) return compileDatetimeArithmetic(datetime, compile(expr.left, schema, udfs), compile(expr.right, schema, udfs));
  const l = coerce(compile(expr.left, schema, udfs), exprType(expr.left, schema), operand);
  const r = coerce(compile(expr.right, schema, udfs), exprType(expr.right, schema), operand);
  const fn = expr.fn;
  if (fn === 'and' || fn === 'or') return LOGIC[fn](l, r);
  if (BITWISE_OPS.has(fn)) return bitwise(fn, operand === 'int', l, r);
  if (ARITHMETIC_OPS.has(fn)) {
    const f = fn as Arithmetic;
    return ((operand === 'int' && INT_ARITHMETIC[f]) || ARITHMETIC[f])(l, r);
  }
  const c = fn as Comparison;
  if (typeof operand === 'object') {
    const eq = c === 'equalTo';
    return (row) => {
      const a = l(row);
      if (a == null) return null;
      const b = r(row);
      return b == null ? null : structEquals(a, b) === eq;
    };
  }
  return (operand === 'double' ? DOUBLE_COMPARISON : COMPARISON)[c](l, r);
}

function compileUnary(expr: Extract<Expr, { op: 'unary' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  const t = exprType(expr.expr, schema);
  const x = compile(expr.expr, schema, udfs);
  switch (expr.fn) {
    case 'not':
      return (row) => {
        const a = x(row);
        return a == null ? null : !a;
      };
    case 'isNull':
      return (row) => x(row) == null;
    case 'isNotNull':
      return (row) => x(row) != null;
    case 'bitwiseNot':
      // ~x is -x - 1 in two's complement, for INT and BIGINT alike.
      return t === 'int'
        ? (row) => {
            const a = x(row);
            return a == null ? null : ~(a as N);
          }
        : (row) => {
            const a = x(row);
            return a == null ? null : -(a as N) - 1;
          };
    case 'negate': {
      const operand = exprType(expr, schema);
      const v = coerce(x, t, operand);
      if (operand === 'int')
        return (row) => {
          const a = v(row);
          return a == null ? null : (0 - (a as N)) | 0;
        };
      if (operand === 'long')
        return (row) => {
          const a = v(row);
          return a == null ? null : 0 - (a as N);
        };
      return (row) => {
        const a = v(row);
        return a == null ? null : -(a as N);
      };
    }
  }
}

function compileCall(expr: Extract<Expr, { op: 'call' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  if (HIGHER_ORDER.includes(expr.fn as HigherOrderName)) return compileHigherOrder(expr, schema, udfs, compile);
  const { args: argTypes, result } = callTypes(expr, schema);
  const args = expr.args.map((a, i) => coerce(compile(a, schema, udfs), exprType(a, schema), argTypes[i]!));
  const [a0 = () => null, a1 = () => null, a2] = args;
  if (isScalarFunction(expr.fn)) return compileScalar(SCALAR_FUNCTIONS[expr.fn], args, argTypes, expr.args.map(constantOf));
  switch (expr.fn) {
    case 'upper':
      return (row) => {
        const s = a0(row) as string | null;
        return s == null ? null : s.toUpperCase();
      };
    case 'lower':
      return (row) => {
        const s = a0(row) as string | null;
        return s == null ? null : s.toLowerCase();
      };
    case 'trim':
      return (row) => {
        const s = a0(row) as string | null;
        return s == null ? null : trimSpaces(s);
      };
    case 'length':
      return (row) => {
        const s = a0(row) as string | null;
        return s == null ? null : codePointLength(s);
      };
    case 'substring':
      return (row) => {
        const s = a0(row) as string | null;
        if (s == null) return null;
        const pos = a1(row) as number | null;
        const len = a2 === undefined ? Infinity : (a2(row) as number | null);
        return pos == null || len == null ? null : sparkSubstring(s, pos, len);
      };
    case 'concat':
      if (typeof result === 'object') {
        return (row) => {
          const out: unknown[] = [];
          for (const a of args) {
            const xs = a(row);
            if (xs == null) return null;
            out.push(...(xs as unknown[]));
          }
          return out;
        };
      }
      return (row) => {
        let out = '';
        for (const a of args) {
          const s = a(row);
          if (s == null) return null;
          out += s as string;
        }
        return out;
      };
    case 'coalesce':
      return (row) => {
        for (const a of args) {
          const v = a(row);
          if (v != null) return v;
        }
        return null;
      };
    case 'named_struct': {
      const names = expr.args.filter((_, i) => i % 2 === 0).map((n) => (n as { value: string }).value);
      const values = args.filter((_, i) => i % 2 === 1);
      return (row) => {
        const out: Row = {};
        for (let i = 0; i < names.length; i++) out[names[i]!] = values[i]!(row) ?? null;
        return out;
      };
    }
    default:
      // Generators: callTypes has refused them already.
      throw new SluiceError('UNSUPPORTED_OPERATION', `${expr.fn} can only be a select item`);
  }
}

function compileWhen(expr: Extract<Expr, { op: 'when' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  const t = exprType(expr, schema);
  const value = (e: Expr): Evaluator => coerce(compile(e, schema, udfs), exprType(e, schema), t);
  const conds = expr.branches.map((b) => compile(b.cond, schema, udfs));
  const values = expr.branches.map((b) => value(b.value));
  const otherwise = expr.otherwise === undefined ? () => null : value(expr.otherwise);
  const [c0, v0] = [conds[0], values[0]];
  if (conds.length === 1 && c0 !== undefined && v0 !== undefined) {
    return (row) => (c0(row) === true ? v0(row) : otherwise(row));
  }
  return (row) => {
    // A null condition is not true: the branch is skipped, as in SQL.
    for (let i = 0; i < conds.length; i++) if (conds[i]!(row) === true) return values[i]!(row);
    return otherwise(row);
  };
}

function compileUdf(expr: Extract<Expr, { op: 'udf' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  const fn = udfs.get(udfKey(expr.moduleUrl, expr.exportName));
  if (fn === undefined) {
    throw new SluiceError(
      'UDF_NOT_FOUND',
      `udf '${expr.exportName}' of ${expr.moduleUrl} is not loaded in this worker (loadUdfs must run before compileExpr)`,
      { file: expr.moduleUrl },
    );
  }
  // User code sees external values (Date for TIMESTAMP) and returns values of its declared type.
  const args = expr.args.map((a) => {
    const ev = compile(a, schema, udfs);
    const toExternal = createToExternalConverter(exprType(a, schema));
    return (row: Row) => toExternal(ev(row));
  });
  const toEngine = udfResultConverter(expr.returnType, expr);
  const result = (r: unknown): unknown => {
    if (r !== null && typeof r === 'object' && typeof (r as { then?: unknown }).then === 'function') {
      throw new SluiceError('UDF_ASYNC_RESULT', `udf '${expr.exportName}' of ${expr.moduleUrl} returned a promise; udfs must be synchronous`, {
        file: expr.moduleUrl,
      });
    }
    return toEngine(r);
  };
  // One shape per arity, as before udf errors were coded: no array per row for up to two
  // arguments, and only the user's function inside the try (its arguments' errors stay theirs).
  const [a0, a1] = args;
  if (args.length === 0) {
    return () => {
      let r: unknown;
      try {
        r = fn();
      } catch (e) {
        throw udfFailed(e, expr);
      }
      return result(r);
    };
  }
  if (args.length === 1 && a0 !== undefined) {
    return (row) => {
      const x = a0(row);
      let r: unknown;
      try {
        r = fn(x);
      } catch (e) {
        throw udfFailed(e, expr);
      }
      return result(r);
    };
  }
  if (args.length === 2 && a0 !== undefined && a1 !== undefined) {
    return (row) => {
      const x = a0(row);
      const y = a1(row);
      let r: unknown;
      try {
        r = fn(x, y);
      } catch (e) {
        throw udfFailed(e, expr);
      }
      return result(r);
    };
  }
  return (row) => {
    const values = args.map((a) => a(row));
    let r: unknown;
    try {
      r = fn(...values);
    } catch (e) {
      throw udfFailed(e, expr);
    }
    return result(r);
  };
}

/**
 * A tumbling window evaluates to its {start, end} object. A sliding window gives several values
 * per row, so it exists only as a grouping key, which the map side expands (mapSide.ts).
 */
function compileWindow(expr: Extract<Expr, { op: 'window' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  exprType(expr, schema); // the time column must be a TIMESTAMP
  if (expr.slideMs !== expr.sizeMs) {
    throw new SluiceError('UNSUPPORTED_OPERATION', `a sliding window ${exprSql(expr)} can only be a groupBy key`);
  }
  const time = compile(expr.expr, schema, udfs);
  const { sizeMs, startMs } = expr;
  return (row) => {
    const t = time(row) as number | null;
    if (t == null) return null;
    const start = lastWindowStart(t, sizeMs, startMs);
    return { start, end: start + sizeMs };
  };
}

function compileColumn(name: string, schema: Schema): Evaluator {
  const { path } = resolveColumn(name, schema);
  const [first, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) return (row) => row[first] ?? null;
  return (row) => {
    let v = row[first];
    for (const p of rest) {
      if (v == null) return null;
      v = (v as Row)[p];
    }
    return v ?? null;
  };
}

function compile(expr: Expr, schema: Schema, udfs: UdfRegistry): Evaluator {
  switch (expr.op) {
    case 'col':
      return compileColumn(expr.name, schema);
    case 'lit': {
      const v = toInternal(expr.value, expr.type);
      return () => v;
    }
    case 'alias':
      return compile(expr.expr, schema, udfs);
    case 'binary':
      return compileBinary(expr, schema, udfs);
    case 'unary':
      return compileUnary(expr, schema, udfs);
    case 'cast':
      exprType(expr, schema); // rejects impossible casts with the expression in the message
      return coerce(compile(expr.expr, schema, udfs), exprType(expr.expr, schema), expr.to);
    case 'when':
      return compileWhen(expr, schema, udfs);
    case 'call':
      return compileCall(expr, schema, udfs);
    case 'udf':
      return compileUdf(expr, schema, udfs);
    case 'window':
      return compileWindow(expr, schema, udfs);
    case 'lambda':
      throw new SluiceError('INVALID_EXPRESSION', `a lambda (${exprSql(expr)}) is only an argument of a higher-order function such as transform`);
  }
}

/**
 * Compiles an expression over rows of `schema` into an evaluator returning engine-form values
 * (null for SQL null, never undefined). Type errors and unknown columns throw here, not per row;
 * udfs must already be in `udfs` (see loadUdfs).
 */
export function compileExpr(expr: Expr, schema: Schema, udfs: UdfRegistry = new Map()): Evaluator {
  return compile(expr, schema, udfs);
}
