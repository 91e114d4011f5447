/**
 * Expression evaluation inside a worker: an Expr, typed by exprTypes.ts, is compiled once into a
 * tree of closures, so that evaluating a row does no dispatch on operator names.
 *
 * Semantics are Spark's, non-ANSI: SQL three-valued logic, null in → null out, division and
 * modulo by zero give null, INT arithmetic wraps at 32 bits, casts of unparsable text give null.
 * LONG values are JS numbers, so they are exact up to 2^53 and do not wrap at 2^63.
 */
import { SluiceError } from '@sluice/state';
import { HIGHER_ORDER, type BinaryOp, type Expr, type HigherOrderName } from './types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import {
  ARITHMETIC_OPS,
  BITWISE_OPS,
  binaryTypes,
  callTypes,
  constantOf,
  exprType,
  lambdaScope,
  widerNumeric,
  type Arithmetic,
  type Comparison,
  type DatetimeArithmetic,
} from './exprTypes.js';
import { timestampPlusInterval, type Interval } from '../schema/intervals.js';
import { MS_PER_DAY } from '../schema/timestamps.js';
import { exprSql } from './exprNames.js';
import { resolveColumn } from './resolveColumn.js';
import { codePointLength, sparkSubstring, trimSpaces } from './sparkStrings.js';
import { isScalarFunction, SCALAR_FUNCTIONS, type ScalarFunction } from './scalarFunctions.js';
import { udfFailed, udfKey, udfResultConverter, type UdfRegistry } from './udfs.js';
import { lastWindowStart } from './windows.js';
import { createCast, createToExternalConverter, isNumericType, sameType, toInternal, typeName } from '../schema/values.js';

export type Evaluator = (row: Row) => unknown;

/** Brings values of type `from` to type `to`; widening between numbers costs nothing in JS. */
function coerce(ev: Evaluator, from: DataType, to: DataType): Evaluator {
  if (sameType(from, to) || from === 'null') return ev;
  if (isNumericType(from) && isNumericType(to) && widerNumeric(from, to) === to) return ev;
  const cast = createCast(from, to);
  if (cast === undefined) throw new SluiceError('DATATYPE_MISMATCH', `cannot cast ${typeName(from)} to ${typeName(to)}`);
  return (row) => {
    const v = ev(row);
    return v == null ? null : cast(v);
  };
}

type Binary = (l: Evaluator, r: Evaluator) => Evaluator;
type N = number;

// Every operator has its own closure so that V8 sees one operation per call site; null checks use
// `== null` so that a stray undefined in a row reads as SQL null.
const ARITHMETIC: Record<Arithmetic, Binary> = {
  plus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) + (b as N);
  },
  minus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) - (b as N);
  },
  multiply: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) * (b as N);
  },
  divide: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null || b === 0 ? null : (a as N) / (b as N);
  },
  // JS % takes the sign of the dividend, as Java's and so Spark's does.
  mod: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null || b === 0 ? null : (a as N) % (b as N);
  },
};

/** INT arithmetic wraps at 32 bits like Java's int (Spark non-ANSI). */
const INT_ARITHMETIC: Partial<Record<Arithmetic, Binary>> = {
  plus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : ((a as N) + (b as N)) | 0;
  },
  minus: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : ((a as N) - (b as N)) | 0;
  },
  multiply: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : Math.imul(a as N, b as N);
  },
};

const COMPARISON: Record<Comparison, Binary> = {
  gt: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) > (b as N);
  },
  geq: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) >= (b as N);
  },
  lt: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) < (b as N);
  },
  leq: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : (a as N) <= (b as N);
  },
  equalTo: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : a === b;
  },
  notEqual: (l, r) => (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    return b == null ? null : a !== b;
  },
};

/** Spark orders NaN above every other double and makes NaN = NaN true. */
const DOUBLE_COMPARISON: Record<Comparison, Binary> = {
  gt: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a > b || (Number.isNaN(a) && !Number.isNaN(b));
  },
  geq: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a >= b || Number.isNaN(a);
  },
  lt: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a < b || (Number.isNaN(b) && !Number.isNaN(a));
  },
  leq: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a <= b || Number.isNaN(b);
  },
  equalTo: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a === b || (Number.isNaN(a) && Number.isNaN(b));
  },
  notEqual: (l, r) => (row) => {
    const a = l(row) as N;
    if (a == null) return null;
    const b = r(row) as N;
    return b == null ? null : a !== b && (!Number.isNaN(a) || !Number.isNaN(b));
  },
};

function structEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const x = a as Row;
  const y = b as Row;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => structEquals(x[k] ?? null, y[k] ?? null));
}

/** Three-valued logic: false AND null is false, true OR null is true, otherwise null wins. */
const LOGIC: Record<'and' | 'or', Binary> = {
  and: (l, r) => (row) => {
    const a = l(row);
    if (a === false) return false;
    const b = r(row);
    if (b === false) return false;
    return a == null || b == null ? null : true;
  },
  or: (l, r) => (row) => {
    const a = l(row);
    if (a === true) return true;
    const b = r(row);
    if (b === true) return true;
    return a == null || b == null ? null : false;
  },
};

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

/**
 * a & b, a | b, a ^ b: on INT as 32-bit integers; on BIGINT as 64-bit two's complement, whose
 * result of two values within ±2^53 is within that range too (their top bits all repeat the sign).
 */
function bitwise(fn: BinaryOp, int: boolean, l: Evaluator, r: Evaluator): Evaluator {
  const op32 = fn === 'bitwiseAnd' ? (a: N, b: N) => a & b : fn === 'bitwiseOr' ? (a: N, b: N) => a | b : (a: N, b: N) => a ^ b;
  const op64 = fn === 'bitwiseAnd' ? (a: bigint, b: bigint) => a & b : fn === 'bitwiseOr' ? (a: bigint, b: bigint) => a | b : (a: bigint, b: bigint) => a ^ b;
  return (row) => {
    const a = l(row);
    if (a == null) return null;
    const b = r(row);
    if (b == null) return null;
    return int ? op32(a as N, b as N) : Number(op64(BigInt(a as N), BigInt(b as N)));
  };
}

function compileDatetimeArithmetic(dt: DatetimeArithmetic, left: Evaluator, right: Evaluator): Evaluator {
  const [time, by] = dt.swapped ? [right, left] : [left, right];
  const { sign } = dt;
  const add: (t: N, x: unknown) => N =
    dt.by === 'days'
      ? (t, n) => t + sign * (n as N)
      : dt.result === 'date'
        ? (t, iv) => Math.floor(timestampPlusInterval(t * MS_PER_DAY, iv as Interval, sign) / MS_PER_DAY)
        : (t, iv) => timestampPlusInterval(t, iv as Interval, sign);
  return (row) => {
    const t = time(row);
    if (t == null) return null;
    const x = by(row);
    return x == null ? null : add(t as N, x);
  };
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

/**
 * A higher-order function: its lambda's body compiled over the row's columns and the lambda's
 * parameters, evaluated per element in one scope object per row (the row's fields, then the
 * parameters, set anew for each element).
 */
function compileHigherOrder(expr: Extract<Expr, { op: 'call' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
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

function compileCall(expr: Extract<Expr, { op: 'call' }>, schema: Schema, udfs: UdfRegistry): Evaluator {
  if (HIGHER_ORDER.includes(expr.fn as HigherOrderName)) return compileHigherOrder(expr, schema, udfs);
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

/** A table function over its arguments' values: null in, null out, unless it takes nulls itself. */
function compileScalar(f: ScalarFunction, args: Evaluator[], argTypes: DataType[], constants: unknown[]): Evaluator {
  const [a0, a1] = args;
  const value = f.bind?.(argTypes, constants) ?? (f.value as (...xs: unknown[]) => unknown);
  if (f.nulls) return (row) => value(...args.map((a) => a(row)));
  if (args.length === 0) return () => value();
  if (args.length === 1)
    return (row) => {
      const x = a0!(row);
      return x == null ? null : value(x);
    };
  if (args.length === 2)
    return (row) => {
      const x = a0!(row);
      if (x == null) return null;
      const y = a1!(row);
      return y == null ? null : value(x, y);
    };
  return (row) => {
    const xs = args.map((a) => a(row));
    return xs.includes(null) ? null : value(...xs);
  };
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
