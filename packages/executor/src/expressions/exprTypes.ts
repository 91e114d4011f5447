/**
 * Typing of expressions: the serializable Expr tree of a plan is type-checked against the input
 * schema, with Spark's (non-ANSI) implicit casts and widening. The same rules let the driver
 * reject a bad plan before any batch runs (planOutputSchema) and let the compiler choose operand
 * types once per expression (compileExpr.ts). The rules that need no sub-expression typed are
 * typeRules.ts's.
 */
import { didYouMean, SluiceError, suggest } from '@sluice/state';
import { childrenOf } from './exprTree.js';
import { GENERATORS, HIGHER_ORDER, type Expr, type GeneratorName, type HigherOrderName } from './types.js';
import type { Op } from '../operators/types.js';
import { WINDOW_TYPE, type DataType, type Field, type Schema } from '../schema/types.js';
import { exprName, exprSql } from './exprNames.js';
import { resolveColumn } from './resolveColumn.js';
import { isScalarFunction, SCALAR_FUNCTIONS } from './scalarFunctions.js';
import { createCast, isArrayType, isAtomicType, isMapType, isNumericType, isStructType, sameType, typeName } from '../schema/values.js';
import { widerNumeric } from '../schema/widening.js';
import {
  ARITHMETIC_OPS,
  arithmeticOperand,
  BITWISE_OPS,
  commonType,
  constantOf,
  datetimeArithmetic,
  functionArity,
  isIntegral,
  lambdaScope,
  mismatch,
  STRING_FUNCTIONS,
  type DatetimeArithmetic,
} from './typeRules.js';

export { widerNumeric, widerType } from '../schema/widening.js';

export { WINDOW_TYPE };

/** Checks a window's time column (TIMESTAMP only) and durations; shared by typing and compilation. */
function checkWindow(expr: Extract<Expr, { op: 'window' }>, schema: Schema): void {
  const t = exprType(expr.expr, schema);
  if (t !== 'timestamp') {
    const column = exprName(expr.expr, schema);
    throw mismatch(expr, `the time column '${column}' of a window must be TIMESTAMP, not ${typeName(t)}`, column);
  }
  const { sizeMs, slideMs, startMs } = expr;
  // Spark's own checks on window(): a positive size, and a slide in (0, size].
  if (!(sizeMs > 0) || !(slideMs > 0) || slideMs > sizeMs || !Number.isFinite(sizeMs) || !Number.isFinite(startMs)) {
    throw new SluiceError('INVALID_EXPRESSION', `${exprSql(expr)}: the window duration must be positive and the slide duration in (0, window duration]`);
  }
}

/** Both sides of a binary operator are brought to `operand`; the result has type `result` (datetime arithmetic: see `datetime`). */
export function binaryTypes(expr: Extract<Expr, { op: 'binary' }>, schema: Schema): { operand: DataType; result: DataType; datetime?: DatetimeArithmetic } {
  const lt = exprType(expr.left, schema);
  const rt = exprType(expr.right, schema);
  const pair = `${typeName(lt)} and ${typeName(rt)}`;
  const datetime = datetimeArithmetic(expr.fn, lt, rt);
  if (datetime !== undefined) return { operand: datetime.result, result: datetime.result, datetime };
  if (ARITHMETIC_OPS.has(expr.fn)) {
    const l = arithmeticOperand(lt);
    const r = arithmeticOperand(rt);
    if (l === undefined || r === undefined) throw mismatch(expr, `arithmetic needs numbers, not ${pair}`);
    const operand = widerNumeric(l, r);
    if (operand === 'null') return { operand, result: 'null' };
    return { operand, result: expr.fn === 'divide' ? 'double' : operand };
  }
  if (BITWISE_OPS.has(expr.fn)) {
    if (!isIntegral(lt) || !isIntegral(rt)) throw mismatch(expr, `bitwise operators need integers (INT or BIGINT), not ${pair}`);
    const operand = widerNumeric(lt, rt);
    return { operand, result: operand };
  }
  if (expr.fn === 'and' || expr.fn === 'or') {
    if ((lt !== 'boolean' && lt !== 'null') || (rt !== 'boolean' && rt !== 'null')) {
      throw mismatch(expr, `${expr.fn.toUpperCase()} needs booleans, not ${pair}`);
    }
    return { operand: 'boolean', result: 'boolean' };
  }
  // Comparison (Spark's findCommonTypeForBinaryComparison): text compared with another atomic
  // type is cast to that type, so ts > '2024-01-01' compares timestamps.
  let operand: DataType | undefined;
  if (sameType(lt, rt)) operand = lt;
  else if (lt === 'null' || rt === 'null') operand = lt === 'null' ? rt : lt;
  else if (isNumericType(lt) && isNumericType(rt)) operand = widerNumeric(lt, rt);
  else if (lt === 'string' && isAtomicType(rt)) operand = rt;
  else if (rt === 'string' && isAtomicType(lt)) operand = lt;
  if (operand === undefined) throw mismatch(expr, `cannot compare ${pair}`);
  if (!isAtomicType(operand) && expr.fn !== 'equalTo' && expr.fn !== 'notEqual') {
    throw mismatch(expr, 'structs, arrays and maps can be compared for equality only');
  }
  return { operand, result: 'boolean' };
}

export function callTypes(expr: Extract<Expr, { op: 'call' }>, schema: Schema): { args: DataType[]; result: DataType } {
  const [min, max] = functionArity(expr.fn);
  if (expr.args.length < min || expr.args.length > max) {
    throw new SluiceError('WRONG_NUM_ARGS', `${expr.fn} takes ${min === max ? min : `${min} to ${max}`} arguments, got ${expr.args.length}`);
  }
  if (GENERATORS.includes(expr.fn as GeneratorName)) {
    throw new SluiceError(
      'UNSUPPORTED_OPERATION',
      `[UNSUPPORTED_GENERATOR.OUTSIDE_SELECT] the generator ${exprSql(expr)} can only be a select item, not inside an expression`,
    );
  }
  if (HIGHER_ORDER.includes(expr.fn as HigherOrderName)) return higherOrderTypes(expr, schema);
  const types = expr.args.map((a) => exprType(a, schema));
  if (expr.fn === 'named_struct') return { args: types, result: { struct: namedStructFields(expr, types, schema) } };
  if (isScalarFunction(expr.fn)) {
    const typed = SCALAR_FUNCTIONS[expr.fn].types(types, expr.args.map(constantOf));
    if (typeof typed === 'string') throw mismatch(expr, `${expr.fn} ${typed}`);
    return typed;
  }
  // concat of arrays (Spark's): one array of their wider element type.
  if (expr.fn === 'concat' && types.length > 0 && types.every((t) => isArrayType(t) || t === 'null') && types.some(isArrayType)) {
    const t = commonType(types, expr);
    return { args: types.map(() => t), result: t };
  }
  if (STRING_FUNCTIONS.has(expr.fn)) {
    return { args: types.map(() => 'string'), result: expr.fn === 'length' ? 'int' : 'string' };
  }
  if (expr.fn === 'substring') {
    for (const t of types.slice(1)) {
      if (!isNumericType(t) && t !== 'string' && t !== 'null') throw mismatch(expr, `position and length must be integers, not ${typeName(t)}`);
    }
    return { args: types.map((_, i) => (i === 0 ? 'string' : 'int')), result: 'string' };
  }
  const t = commonType(types, expr); // coalesce
  return { args: types.map(() => t), result: t };
}

/** A lambda argument of `expr` taking parameters of `types` (its arity checked), and its body's type over them. */
function lambdaType(expr: Extract<Expr, { op: 'call' }>, at: number, schema: Schema, ...types: DataType[][]): DataType {
  const lambda = expr.args[at];
  if (lambda?.op !== 'lambda') throw mismatch(expr, `argument ${at + 1} of ${expr.fn} must be a lambda such as x -> x + 1`);
  const fit = types.find((t) => t.length === lambda.params.length);
  if (fit === undefined)
    throw mismatch(expr, `the lambda of ${expr.fn} takes ${types.map((t) => t.length).join(' or ')} parameters, not ${lambda.params.length}`);
  return exprType(lambda.body, lambdaScope(schema, lambda.params, fit));
}

/**
 * Types of the higher-order functions: the collection argument as it is, a lambda by its body's
 * type over its parameters (elements, their 0-based index, a map's key and value, an accumulator).
 */
function higherOrderTypes(expr: Extract<Expr, { op: 'call' }>, schema: Schema): { args: DataType[]; result: DataType } {
  const first = exprType(expr.args[0]!, schema);
  const predicate = (t: DataType): void => {
    if (t !== 'boolean' && t !== 'null') throw mismatch(expr, `the lambda of ${expr.fn} must give a boolean, not ${typeName(t)}`);
  };
  const element = (t: DataType): DataType => {
    if (isArrayType(t)) return t.array;
    if (t === 'null') return 'null';
    throw mismatch(expr, `${expr.fn} needs an array, not ${typeName(t)}`);
  };
  const mapOf = (t: DataType): { key: DataType; value: DataType } => {
    if (isMapType(t)) return t.map;
    throw mismatch(expr, `${expr.fn} needs a map, not ${typeName(t)}`);
  };
  const lambdaArg: DataType = 'null'; // a lambda is no value: compileExpr reads it itself
  switch (expr.fn as HigherOrderName) {
    case 'transform':
    case 'filter':
    case 'exists':
    case 'forall': {
      const e = element(first);
      const body = lambdaType(expr, 1, schema, [e], [e, 'int']);
      if (expr.fn !== 'transform') predicate(body);
      const result: DataType = expr.fn === 'transform' ? { array: body } : expr.fn === 'filter' ? first : 'boolean';
      return { args: [first, lambdaArg], result };
    }
    case 'aggregate': {
      const e = element(first);
      const acc = exprType(expr.args[1]!, schema);
      const merged = lambdaType(expr, 2, schema, [acc, e]);
      if (createCast(merged, acc) === undefined)
        throw mismatch(expr, `the merge lambda gives ${typeName(merged)}, which is not the accumulator's ${typeName(acc)}`);
      const result = expr.args.length === 4 ? lambdaType(expr, 3, schema, [acc]) : acc;
      return { args: [first, acc, lambdaArg, ...(expr.args.length === 4 ? [lambdaArg] : [])], result };
    }
    case 'zip_with': {
      const b = exprType(expr.args[1]!, schema);
      const body = lambdaType(expr, 2, schema, [element(first), element(b)]);
      return { args: [first, b, lambdaArg], result: { array: body } };
    }
    default: {
      // map_filter, transform_keys, transform_values
      const m = mapOf(first);
      const body = lambdaType(expr, 1, schema, [m.key, m.value]);
      if (expr.fn === 'map_filter') predicate(body);
      const result: DataType =
        expr.fn === 'map_filter' ? first : expr.fn === 'transform_keys' ? { map: { key: body, value: m.value } } : { map: { key: m.key, value: body } };
      return { args: [first, lambdaArg], result };
    }
  }
}

/** named_struct's fields: its odd arguments must be literal names (Spark's rule), its even ones the values. */
export function namedStructFields(expr: Extract<Expr, { op: 'call' }>, types: DataType[], schema: Schema): Schema {
  if (expr.args.length % 2 !== 0) throw mismatch(expr, 'named_struct needs names and values in pairs');
  const fields: Schema = [];
  for (let i = 0; i < expr.args.length; i += 2) {
    const name = expr.args[i] as Expr;
    if (name.op !== 'lit' || typeof name.value !== 'string') throw mismatch(expr, `the field name ${exprSql(name)} of named_struct must be a literal string`);
    fields.push({ name: name.value, type: types[i + 1] as DataType, nullable: exprNullable(expr.args[i + 1] as Expr, schema) });
  }
  return fields;
}

/** A generator's columns over its argument's type: [pos,] col for an array, [pos,] key, value for a map, a struct's fields for inline. */
export function generatorFields(fn: GeneratorName, arg: DataType, expr: Expr): Array<{ name: string; type: DataType; nullable: boolean }> {
  const pos = fn.startsWith('posexplode') ? [{ name: 'pos', type: 'int' as DataType, nullable: fn.endsWith('_outer') }] : [];
  if (fn.startsWith('inline')) {
    if (isArrayType(arg) && isStructType(arg.array)) return arg.array.struct.map((f) => ({ ...f, nullable: true }));
    throw mismatch(expr, `${fn} needs an array of structs, not ${typeName(arg)}`);
  }
  if (isArrayType(arg)) return [...pos, { name: 'col', type: arg.array, nullable: true }];
  if (isMapType(arg)) {
    return [...pos, { name: 'key', type: arg.map.key, nullable: fn.endsWith('_outer') }, { name: 'value', type: arg.map.value, nullable: true }];
  }
  throw mismatch(expr, `${fn} needs an array or a map, not ${typeName(arg)}`);
}

/** The type of an expression's values over rows of `schema`; throws on unknown columns and type errors. */
export function exprType(expr: Expr, schema: Schema): DataType {
  switch (expr.op) {
    case 'col':
      return resolveColumn(expr.name, schema).field.type;
    case 'lit':
      return expr.type;
    case 'alias':
      return exprType(expr.expr, schema);
    case 'binary':
      return binaryTypes(expr, schema).result;
    case 'unary': {
      const t = exprType(expr.expr, schema);
      if (expr.fn === 'isNull' || expr.fn === 'isNotNull') return 'boolean';
      if (expr.fn === 'not') {
        if (t !== 'boolean' && t !== 'null') throw mismatch(expr, `NOT needs a boolean, not ${typeName(t)}`);
        return 'boolean';
      }
      if (expr.fn === 'bitwiseNot') {
        if (!isIntegral(t)) throw mismatch(expr, `~ needs an integer (INT or BIGINT), not ${typeName(t)}`);
        return t;
      }
      const operand = arithmeticOperand(t); // negate
      if (operand === undefined) throw mismatch(expr, `negation needs a number, not ${typeName(t)}`);
      return operand;
    }
    case 'cast': {
      const from = exprType(expr.expr, schema);
      if (createCast(from, expr.to) === undefined) throw mismatch(expr, `cannot cast ${typeName(from)} to ${typeName(expr.to)}`);
      return expr.to;
    }
    case 'when': {
      for (const b of expr.branches) {
        const t = exprType(b.cond, schema);
        if (t !== 'boolean' && t !== 'null') throw mismatch(expr, `WHEN conditions must be boolean, not ${typeName(t)}`);
      }
      const values = expr.branches.map((b) => b.value);
      if (expr.otherwise !== undefined) values.push(expr.otherwise);
      return commonType(
        values.map((v) => exprType(v, schema)),
        expr,
      );
    }
    case 'call':
      return callTypes(expr, schema).result;
    case 'udf':
      for (const a of expr.args) exprType(a, schema);
      return expr.returnType;
    case 'window':
      checkWindow(expr, schema);
      return WINDOW_TYPE;
    case 'lambda':
      throw new SluiceError('INVALID_EXPRESSION', `a lambda (${exprSql(expr)}) is only an argument of a higher-order function such as transform`);
  }
}

/** Whether an expression may be null (conservative: true when unsure). */
export function exprNullable(expr: Expr, schema: Schema): boolean {
  const any = (es: Expr[]): boolean => es.some((e) => exprNullable(e, schema));
  switch (expr.op) {
    case 'col':
      return resolveColumn(expr.name, schema).field.nullable;
    case 'lit':
      return expr.value === null;
    case 'alias':
      return exprNullable(expr.expr, schema);
    case 'binary':
      return expr.fn === 'divide' || expr.fn === 'mod' || any([expr.left, expr.right]);
    case 'unary':
      return expr.fn === 'isNull' || expr.fn === 'isNotNull' ? false : exprNullable(expr.expr, schema);
    case 'cast': {
      const from = exprType(expr.expr, schema);
      // Text may not parse, and a far timestamp has no ISO form.
      return from === 'string' || expr.to === 'timestamp' || from === 'timestamp' || from === 'date' || exprNullable(expr.expr, schema);
    }
    case 'when':
      return expr.otherwise === undefined || any([...expr.branches.map((b) => b.value), expr.otherwise]);
    case 'call':
      if (expr.fn === 'named_struct') return false;
      // A table function may give null for non-null arguments (from_json, element_at, to_date).
      if (isScalarFunction(expr.fn)) return true;
      return expr.fn === 'coalesce' ? expr.args.every((a) => exprNullable(a, schema)) : any(expr.args);
    case 'udf':
      return true;
    case 'window':
      return exprNullable(expr.expr, schema);
    case 'lambda':
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Operators

/**
 * A sliding window gives several values per row, so only a groupBy key may hold one; refusing it
 * here makes start() fail rather than the first task (compileExpr refuses it too).
 */
export function rejectSlidingWindow(expr: Expr): void {
  if (expr.op === 'window' && expr.slideMs !== expr.sizeMs) {
    throw new SluiceError('UNSUPPORTED_OPERATION', `a sliding window ${exprSql(expr)} can only be a groupBy key`);
  }
  for (const c of childrenOf(expr)) rejectSlidingWindow(c);
}

/** The schema after one operator; shared by planOutputSchema and compileOps. */
export function opOutputSchema(op: Op, schema: Schema): Schema {
  switch (op.kind) {
    case 'filter': {
      const t = exprType(op.cond, schema);
      if (t !== 'boolean' && t !== 'null') throw mismatch(op.cond, `filter condition must be boolean, not ${typeName(t)}`);
      rejectSlidingWindow(op.cond);
      return schema;
    }
    case 'project': {
      const out: Schema = [];
      const seen = new Set<string>();
      for (const e of op.exprs) {
        const name = exprName(e, schema);
        // Rows are objects keyed by name, so two outputs with one name cannot both exist.
        if (seen.has(name)) throw new SluiceError('COLUMN_ALREADY_EXISTS', `column '${name}' is selected twice; alias one of them`, { column: name });
        seen.add(name);
        rejectSlidingWindow(e);
        out.push({ name, type: exprType(e, schema), nullable: exprNullable(e, schema) });
      }
      return out;
    }
    case 'generate': {
      const fields = generatorFields(op.fn, exprType(op.expr, schema), op.expr);
      if (fields.length !== op.names.length) {
        throw new SluiceError(
          'UNSUPPORTED_OPERATION',
          `${op.fn} gives ${fields.length} columns (${fields.map((f) => f.name).join(', ')}) but ${op.names.length} names were given`,
        );
      }
      return [...schema, ...fields.map((f, i) => ({ ...f, name: op.names[i] as string }))];
    }
    case 'watermark':
      // Rows pass unchanged; the worker measures event time at this marker.
      resolveColumn(op.column, schema);
      return schema;
    case 'join':
      return joinOutputSchema(op, schema);
  }
}

/** The schema after `ops`, checked eagerly (unknown columns, type errors) without loading udfs. */
export function planOutputSchema(ops: readonly Op[], schema: Schema): Schema {
  return ops.reduce((s, op) => opOutputSchema(op, s), schema);
}

/** A join of a stream with a static table: the stream is the left side. */
function joinOutputSchema(op: Extract<Op, { kind: 'join' }>, left: Schema): Schema {
  const using = op.rightKeys === undefined;
  const join = { how: op.how, leftKeys: op.keys, rightKeys: op.rightKeys ?? op.keys, using, ...(op.residual && { residual: op.residual }) };
  return joinedSchema(join, left, op.rightSchema, ['stream', 'static side']);
}

/** A join as its output schema sees it (both kinds: with a static table, and of two streams). */
export interface JoinShape {
  how: string;
  leftKeys: readonly string[];
  rightKeys: readonly string[];
  using: boolean;
  residual?: Expr;
}

/**
 * The output of a join: on names (`using`) the keys once, then the left side's other fields, then
 * the right side's; on a condition every field of both sides, as in Spark. A semi or anti join
 * gives the left side's only. The keys are the left side's, the right's for a right outer join;
 * a full outer join's may be either's. The side that may be missing has nullable fields.
 */
export function joinedSchema(op: JoinShape, left: Schema, right: Schema, sides: [string, string] = ['left side', 'right side']): Schema {
  const field = (schema: Schema, name: string, side: string) => {
    const f = schema.find((x) => x.name === name);
    if (!f) {
      const suggestions = suggest(
        name,
        schema.map((x) => x.name),
      );
      throw new SluiceError(
        'UNRESOLVED_COLUMN',
        `join key ${name} is not a column of the ${side} (${schema.map((x) => x.name).join(', ')}).${didYouMean(suggestions)}`,
        { column: name, suggestions },
      );
    }
    return f;
  };
  const leftNullable = op.how === 'right_outer' || op.how === 'full_outer';
  const rightNullable = op.how === 'left_outer' || op.how === 'full_outer';
  const keys = op.leftKeys.map((k, i) => {
    const l = field(left, k, sides[0]);
    const r = field(right, op.rightKeys[i] as string, sides[1]);
    if (typeName(l.type) !== typeName(r.type)) {
      throw new SluiceError('DATATYPE_MISMATCH', `join key ${k} is ${typeName(l.type)} in the ${sides[0]} and ${typeName(r.type)} in the ${sides[1]}`, {
        column: k,
      });
    }
    return op.how === 'right_outer' ? r : op.how === 'full_outer' ? { ...l, nullable: l.nullable || r.nullable } : l;
  });
  if (op.residual !== undefined) {
    const t = exprType(op.residual, [...left, ...right]);
    if (t !== 'boolean' && t !== 'null') throw mismatch(op.residual, `a join condition must be boolean, not ${typeName(t)}`);
  }
  const nullable = (f: Field, yes: boolean): Field => (yes ? { ...f, nullable: true } : f);
  const others = (op.using ? left.filter((f) => !op.leftKeys.includes(f.name)) : left).map((f) => nullable(f, leftNullable));
  const head = op.using ? keys : [];
  if (op.how === 'left_semi' || op.how === 'left_anti') return [...head, ...others];
  const rest = op.using ? right.filter((f) => !op.rightKeys.includes(f.name)) : right;
  for (const f of rest) {
    if (others.some((o) => o.name === f.name)) {
      throw new SluiceError('COLUMN_ALREADY_EXISTS', `column '${f.name}' is on both sides of the join; rename one side's first`, { column: f.name });
    }
  }
  return [...head, ...others, ...rest.map((f) => nullable(f, rightNullable))];
}
