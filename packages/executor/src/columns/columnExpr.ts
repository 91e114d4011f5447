/**
 * Expressions over column vectors: an Expr compiles once into a function from a batch to a
 * vector, whose hot operators are loops over typed arrays (generated per operator, so each loop
 * is monomorphic). Semantics are those of compileExpr.ts, which stays the reference:
 *
 * - arithmetic and comparisons of numbers and timestamps, comparisons of strings, AND, OR, NOT,
 *   IS [NOT] NULL and column references run as loops;
 * - a table function (split, regexp_extract, date_format, to_timestamp, from_json, hash, ...) of
 *   one column, its other arguments constants, runs over the column's values with no row, and
 *   over a string column once per distinct string of the batch (its dictionary);
 * - everything else (casts, functions, CASE WHEN, udfs, windows, nested fields, anything whose
 *   operands need an implicit cast) evaluates the row evaluator of compileExpr.ts over one reused
 *   row per batch that holds just the columns it reads, so udfs are still called with plain values.
 */
import type { Expr } from '../expressions/types.js';
import type { DataType, Row, Schema } from '../schema/types.js';
import { binaryTypes, callTypes, exprType, widerNumeric } from '../expressions/exprTypes.js';
import { ARITHMETIC_OPS, BITWISE_OPS, constantOf, type Arithmetic, type Comparison } from '../expressions/typeRules.js';
import { isScalarFunction, SCALAR_FUNCTIONS } from '../expressions/scalarFunctions.js';
import { compileExpr } from '../expressions/compileExpr.js';
import { resolveColumn } from '../expressions/resolveColumn.js';
import { childrenOf } from '../expressions/exprTree.js';
import type { UdfRegistry } from '../expressions/udfs.js';
import { createCast, isNumberBacked, isNumericType, sameType, toInternal } from '../schema/values.js';
import { VectorBuilder, valueAt, type ColumnBatch, type Vector } from './vectors.js';

export type ColumnEvaluator = (batch: ColumnBatch) => Vector;

/** Whether bringing `from` to `to` changes no value (compileExpr's coerce is then the identity). */
function identityCoercion(from: DataType, to: DataType): boolean {
  return sameType(from, to) || (isNumericType(from) && isNumericType(to) && widerNumeric(from, to) === to);
}

// ---- generated numeric loops -------------------------------------------------------------------

const ARITH: Record<Arithmetic, string> = { plus: 'a + b', minus: 'a - b', multiply: 'a * b', divide: 'a / b', mod: 'a % b' };
const INT_ARITH: Partial<Record<Arithmetic, string>> = { plus: '(a + b) | 0', minus: '(a - b) | 0', multiply: 'Math.imul(a, b)' };
const CMP: Record<Comparison, string> = { gt: 'a > b', geq: 'a >= b', lt: 'a < b', leq: 'a <= b', equalTo: 'a === b', notEqual: 'a !== b' };
/** Spark orders NaN above every other double and makes NaN = NaN true (compileExpr.ts). */
const DOUBLE_CMP: Record<Comparison, string> = {
  gt: 'a > b || (a !== a && b === b)',
  geq: 'a >= b || a !== a',
  lt: 'a < b || (b !== b && a === a)',
  leq: 'a <= b || b !== b',
  equalTo: 'a === b || (a !== a && b !== b)',
  notEqual: 'a !== b && (a === a || b === b)',
};

type NumKernel = (l: Vector & { kind: 'num' }, r: (Vector & { kind: 'num' }) | number, n: number) => Vector;
const kernels = new Map<string, NumKernel>();

/**
 * One loop per operator and shape (vector-vector or vector-scalar): `body` computes from `a` and
 * `b`; the result is a number (num) or a boolean (bool). Divide and modulo by zero give null.
 */
function numKernel(body: string, result: 'num' | 'bool', zeroIsNull: boolean, scalar: boolean): NumKernel {
  const key = `${body}|${result}|${zeroIsNull}|${scalar}`;
  let k = kernels.get(key);
  if (k !== undefined) return k;
  const out = result === 'num' ? 'Float64Array' : 'Uint8Array';
  const store = result === 'num' ? `out[i] = ${body};` : `out[i] = (${body}) ? 1 : 0;`;
  const src = `
    const L = l.values, LN = l.nulls;
    ${scalar ? 'const b = r;' : 'const R = r.values, RN = r.nulls;'}
    const out = new ${out}(n);
    let nulls = null;
    for (let i = 0; i < n; i++) {
      if ((LN !== null && LN[i] === 1)${scalar ? '' : ' || (RN !== null && RN[i] === 1)'}) { (nulls ??= new Uint8Array(n))[i] = 1; continue; }
      const a = L[i];
      ${scalar ? '' : 'const b = R[i];'}
      ${zeroIsNull ? 'if (b === 0) { (nulls ??= new Uint8Array(n))[i] = 1; continue; }' : ''}
      ${store}
    }
    return { kind: '${result}', length: n, values: out, nulls };`;
  k = new Function('l', 'r', 'n', src) as NumKernel;
  kernels.set(key, k);
  return k;
}

// ---- compilation -------------------------------------------------------------------------------

/** The expression through the row evaluator, over a reused row holding the columns it reads. */
function viaRows(expr: Expr, schema: Schema, udfs: UdfRegistry): ColumnEvaluator {
  const ev = compileExpr(expr, schema, udfs);
  const type = exprType(expr, schema);
  const names = new Set<string>();
  // The row's columns it reads; inside a lambda, its parameters are not columns of the row.
  const visit = (e: Expr, hidden: ReadonlySet<string>): void => {
    if (e.op === 'col' && !hidden.has(e.name.split('.')[0]!.toLowerCase())) names.add(resolveColumn(e.name, schema).path[0]!);
    const inner = e.op === 'lambda' ? new Set([...hidden, ...e.params.map((p) => p.toLowerCase())]) : hidden;
    for (const c of childrenOf(e)) visit(c, inner);
  };
  visit(expr, new Set());
  const fields = [...names];
  return (batch) => {
    const vectors = fields.map((f) => batch.columns.get(f)!);
    const row: Row = {};
    const out = new VectorBuilder(type, batch.length);
    for (let i = 0; i < batch.length; i++) {
      for (let j = 0; j < fields.length; j++) row[fields[j]!] = valueAt(vectors[j]!, i);
      out.push(ev(row));
    }
    return out.build();
  };
}

/**
 * A table function whose arguments are one column expression and constants: its value function
 * bound once, called per value of the column's vector, and once per dictionary entry of a string
 * vector (every table function is deterministic for given arguments; the niladic ones have no
 * column and stay on the row evaluator).
 */
function compileTableCall(expr: Extract<Expr, { op: 'call' }>, schema: Schema, udfs: UdfRegistry): ColumnEvaluator | undefined {
  if (!isScalarFunction(expr.fn)) return undefined;
  const constants = expr.args.map(constantOf);
  const at = constants.indexOf(undefined);
  if (at < 0 || constants.some((c, i) => i !== at && c === undefined)) return undefined;
  const f = SCALAR_FUNCTIONS[expr.fn];
  const { args: argTypes, result } = callTypes(expr, schema);
  const value = f.bind?.(argTypes, constants) ?? (f.value as (...xs: unknown[]) => unknown);
  // The constants as the function takes them (brought to their argument types), the column's values cast likewise.
  const args = expr.args.map((a, i) => (i === at || constants[i] === null ? null : createCast(exprType(a, schema), argTypes[i]!)!(constants[i])));
  const nullArg = !f.nulls && args.some((x, i) => i !== at && x === null);
  const castColumn = createCast(exprType(expr.args[at]!, schema), argTypes[at]!)!;
  const input = compile(expr.args[at]!, schema, udfs);
  const call = (x: unknown): unknown => {
    const cast = x == null ? null : castColumn(x);
    if (nullArg || (cast == null && !f.nulls)) return null;
    args[at] = cast;
    return value(...args);
  };
  return (batch) => {
    const v = input(batch);
    const out = new VectorBuilder(result, batch.length);
    if (v.kind === 'str') {
      const memo = new Array<unknown>(v.dict.length);
      const done = new Uint8Array(v.dict.length);
      for (let i = 0; i < batch.length; i++) {
        if (v.nulls !== null && v.nulls[i] === 1) {
          out.push(call(null));
          continue;
        }
        const c = v.codes[i]!;
        if (done[c] === 0) {
          memo[c] = call(v.dict[c]);
          done[c] = 1;
        }
        out.push(memo[c]);
      }
    } else for (let i = 0; i < batch.length; i++) out.push(call(valueAt(v, i)));
    return out.build();
  };
}

function constant(value: unknown, type: DataType): ColumnEvaluator {
  return (batch) => {
    const b = new VectorBuilder(type, batch.length);
    for (let i = 0; i < batch.length; i++) b.push(value);
    return b.build();
  };
}

function compileBinary(expr: Extract<Expr, { op: 'binary' }>, schema: Schema, udfs: UdfRegistry): ColumnEvaluator | undefined {
  const { operand, result, datetime } = binaryTypes(expr, schema);
  if (result === 'null' || datetime !== undefined || BITWISE_OPS.has(expr.fn)) return undefined;
  const lt = exprType(expr.left, schema);
  const rt = exprType(expr.right, schema);
  if (!identityCoercion(lt, operand) || !identityCoercion(rt, operand)) return undefined;
  const fn = expr.fn;
  if (fn === 'and' || fn === 'or') {
    const l = compile(expr.left, schema, udfs);
    const r = compile(expr.right, schema, udfs);
    return (batch) => logic(fn, l(batch), r(batch), batch.length) ?? viaRowsOnce(expr, schema, udfs)(batch);
  }
  const numeric = isNumberBacked(operand);
  if (!numeric && operand !== 'string') return undefined;
  const l = compile(expr.left, schema, udfs);
  const right = expr.right;
  const scalar = right.op === 'lit' && right.value !== null && numeric ? (toInternal(right.value, right.type) as number) : undefined;
  const r = scalar === undefined ? compile(right, schema, udfs) : undefined;
  let body: string;
  let kind: 'num' | 'bool' = 'bool';
  if (ARITHMETIC_OPS.has(fn)) {
    body = (operand === 'int' && INT_ARITH[fn as Arithmetic]) || ARITH[fn as Arithmetic];
    kind = 'num';
  } else body = (operand === 'double' ? DOUBLE_CMP : CMP)[fn as Comparison];
  const zeroIsNull = fn === 'divide' || fn === 'mod';
  const fallback = viaRowsOnce(expr, schema, udfs);
  if (!numeric) {
    const cmp = new Function('a', 'b', `return ${body};`) as (a: string, b: string) => boolean;
    return (batch) => strCompare(cmp, l(batch), r!(batch), batch.length) ?? fallback(batch);
  }
  const k = numKernel(body, kind, zeroIsNull, scalar !== undefined);
  return (batch) => {
    const a = l(batch);
    if (a.kind !== 'num') return fallback(batch);
    if (scalar !== undefined) return k(a, scalar, batch.length);
    const b = r!(batch);
    return b.kind === 'num' ? k(a, b, batch.length) : fallback(batch);
  };
}

/** A fallback compiled on first use (most plans never need one). */
function viaRowsOnce(expr: Expr, schema: Schema, udfs: UdfRegistry): ColumnEvaluator {
  let ev: ColumnEvaluator | undefined;
  return (batch) => {
    ev ??= viaRows(expr, schema, udfs);
    return ev(batch);
  };
}

function strCompare(cmp: (a: string, b: string) => boolean, l: Vector, r: Vector, n: number): Vector | undefined {
  if (l.kind !== 'str' || r.kind !== 'str') return undefined;
  const out = new Uint8Array(n);
  let nulls: Uint8Array | null = null;
  // Each pair of codes is compared once when one side is a single value (a literal).
  const memo = r.dict.length === 1 ? new Int8Array(l.dict.length).fill(-1) : null;
  for (let i = 0; i < n; i++) {
    if ((l.nulls !== null && l.nulls[i] === 1) || (r.nulls !== null && r.nulls[i] === 1)) {
      nulls ??= new Uint8Array(n);
      nulls[i] = 1;
      continue;
    }
    const c = l.codes[i]!;
    if (memo !== null) {
      let m = memo[c]!;
      if (m < 0) m = memo[c] = cmp(l.dict[c]!, r.dict[0]!) ? 1 : 0;
      out[i] = m;
    } else out[i] = cmp(l.dict[c]!, r.dict[r.codes[i]!]!) ? 1 : 0;
  }
  return { kind: 'bool', length: n, values: out, nulls };
}

/** Three-valued AND and OR: false AND null is false, true OR null is true, otherwise null wins. */
function logic(fn: 'and' | 'or', l: Vector, r: Vector, n: number): Vector | undefined {
  if (l.kind !== 'bool' || r.kind !== 'bool') return undefined;
  const decisive = fn === 'and' ? 0 : 1;
  const out = new Uint8Array(n);
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const an = l.nulls !== null && l.nulls[i] === 1;
    const bn = r.nulls !== null && r.nulls[i] === 1;
    const a = l.values[i]!;
    const b = r.values[i]!;
    if ((!an && a === decisive) || (!bn && b === decisive)) out[i] = decisive;
    else if (an || bn) {
      nulls ??= new Uint8Array(n);
      nulls[i] = 1;
    } else out[i] = 1 - decisive;
  }
  return { kind: 'bool', length: n, values: out, nulls };
}

function nullTest(x: Vector, n: number, wantNull: boolean): Vector {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const isNull = x.kind === 'any' ? x.values[i] == null : x.nulls !== null && x.nulls[i] === 1;
    out[i] = isNull === wantNull ? 1 : 0;
  }
  return { kind: 'bool', length: n, values: out, nulls: null };
}

function compileUnary(expr: Extract<Expr, { op: 'unary' }>, schema: Schema, udfs: UdfRegistry): ColumnEvaluator | undefined {
  if (expr.fn === 'isNull' || expr.fn === 'isNotNull') {
    const x = compile(expr.expr, schema, udfs);
    const wantNull = expr.fn === 'isNull';
    return (batch) => nullTest(x(batch), batch.length, wantNull);
  }
  if (expr.fn === 'not' && exprType(expr.expr, schema) === 'boolean') {
    const x = compile(expr.expr, schema, udfs);
    const fallback = viaRowsOnce(expr, schema, udfs);
    return (batch) => {
      const v = x(batch);
      if (v.kind !== 'bool') return fallback(batch);
      const out = new Uint8Array(batch.length);
      for (let i = 0; i < batch.length; i++) out[i] = 1 - v.values[i]!;
      return { kind: 'bool', length: batch.length, values: out, nulls: v.nulls };
    };
  }
  return undefined;
}

function compile(expr: Expr, schema: Schema, udfs: UdfRegistry): ColumnEvaluator {
  switch (expr.op) {
    case 'alias':
      return compile(expr.expr, schema, udfs);
    case 'col': {
      const { path } = resolveColumn(expr.name, schema);
      if (path.length === 1) {
        const name = path[0]!;
        return (batch) => batch.columns.get(name)!;
      }
      break;
    }
    case 'lit':
      return constant(toInternal(expr.value, expr.type), expr.type);
    case 'binary': {
      const ev = compileBinary(expr, schema, udfs);
      if (ev !== undefined) return ev;
      break;
    }
    case 'unary': {
      const ev = compileUnary(expr, schema, udfs);
      if (ev !== undefined) return ev;
      break;
    }
    case 'call': {
      const ev = compileTableCall(expr, schema, udfs);
      if (ev !== undefined) return ev;
      break;
    }
    default:
      break;
  }
  return viaRows(expr, schema, udfs);
}

/**
 * Compiles an expression over batches of `schema`. Type errors and unknown columns throw here, as
 * compileExpr's do; udfs must already be loaded.
 */
export function compileColumnExpr(expr: Expr, schema: Schema, udfs: UdfRegistry = new Map()): ColumnEvaluator {
  exprType(expr, schema);
  return compile(expr, schema, udfs);
}
