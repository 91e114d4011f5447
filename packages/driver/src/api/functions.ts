/**
 * Spark's `functions` for stateless expressions. As in Spark (and PySpark), a string passed where
 * a column is expected names a column: upper('id') is upper(col('id')). Values given to lit, when
 * and otherwise are literals.
 */
import { starTarget } from './starText.js';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { datePart, jsonTuple } from './sql/sqlFunctions.js';
import {
  parseDataType,
  parseSchema,
  schemaToDDL,
  type Schema,
  type CollectionFunctionName,
  type DataType,
  type DatetimeFunctionName,
  type Expr,
  type FunctionName,
  type GeneratorName,
  type MathFunctionName,
  type StringFunctionName,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, lit, toColumn, type ColumnOrLiteral } from './Column.js';
import { parseExpression } from './sql/parseExpression.js';

export { lit, toColumn };

/** A column by name (Spark's col): `col('v')`, a struct's field `col('s.a')`, `col('*')` in a select. */
export function col(name: string): Column {
  if (typeof name !== 'string' || name === '') {
    throw new SluiceError('INVALID_EXPRESSION', `col() needs a non-empty column name, got ${String(name)}`);
  }
  return new Column({ op: 'col', name });
}

/**
 * A column from Spark SQL expression text (Spark's expr): `expr("upper(name) AS name")`,
 * `expr("CASE WHEN v > 10 THEN 'big' ELSE 'small' END")`. An aggregate call
 * (`expr("count(*)")`) gives an AggregateColumn, which groupBy(...).agg(...) takes. A text that
 * does not parse is PARSE_SYNTAX_ERROR; an unknown function, UNRESOLVED_ROUTINE.
 */
export function expr(sql: string): Column {
  // `'s.*'` selects a struct's fields (or `'*'` every column) once select expands it, as Spark's expr does.
  const star = starTarget(sql);
  if (star !== undefined) return col(star);
  const parsed = parseExpression(sql);
  return parsed.kind === 'aggregate' ? parsed.agg : new Column(parsed.expr);
}

/** Same as col, as in Spark. */
export const column = col;

/** Starts a conditional column: when(c1, v1).when(c2, v2).otherwise(v3). */
export function when(condition: Column | boolean, value: ColumnOrLiteral): Column {
  return new Column({ op: 'when', branches: [{ cond: lit(condition).expr, value: lit(value).expr }] });
}

/** Logical NOT of a boolean column, as Column.not. */
export function not(c: Column | string): Column {
  return toColumn(c).not();
}

function call(fn: FunctionName, args: Expr[]): Column {
  return new Column({ op: 'call', fn, args });
}

/** An INT literal argument of `fn`, which must be an integer (INVALID_EXPRESSION naming `what`). */
function int(v: number, fn: string, what: string): Expr {
  if (!Number.isInteger(v)) throw new SluiceError('INVALID_EXPRESSION', `${fn}: ${what} must be an integer, got ${String(v)}`);
  return { op: 'lit', value: v, type: 'int' };
}

/** The string in upper case. */
export function upper(c: Column | string): Column {
  return call('upper', [toColumn(c).expr]);
}

/** The string in lower case. */
export function lower(c: Column | string): Column {
  return call('lower', [toColumn(c).expr]);
}

/** Characters (code points) of a string; null stays null. */
export function length(c: Column | string): Column {
  return call('length', [toColumn(c).expr]);
}

/** Removes leading and trailing spaces (U+0020 only, as Spark's trim). */
export function trim(c: Column | string): Column {
  return call('trim', [toColumn(c).expr]);
}

/** Joins strings; null if any argument is null. */
export function concat(...cols: Array<Column | string>): Column {
  return call(
    'concat',
    cols.map((c) => toColumn(c).expr),
  );
}

/**
 * `len` characters from 1-based `pos` (0 counts as 1; a negative pos counts from the end), as
 * Spark's substring: substring('Spark', 2, 3) is 'par', substring('Spark', -3, 2) is 'ar'.
 */
export function substring(str: Column | string, pos: number, len: number): Column {
  return call('substring', [toColumn(str).expr, int(pos, 'substring', 'pos'), int(len, 'substring', 'len')]);
}

/** The first non-null argument. */
export function coalesce(...cols: Array<Column | string>): Column {
  if (cols.length === 0) throw new SluiceError('INVALID_EXPRESSION', 'coalesce needs at least one column');
  return call(
    'coalesce',
    cols.map((c) => toColumn(c).expr),
  );
}

// ---- math (Spark's names and argument orders; text arguments are cast to DOUBLE) -----------------

const math = (fn: MathFunctionName, cols: Array<Column | string>): Column =>
  call(
    fn,
    cols.map((c) => toColumn(c).expr),
  );
const unaryMath =
  (fn: MathFunctionName) =>
  (c: Column | string): Column =>
    math(fn, [c]);

/** The absolute value, of the argument's type. */
export const abs = unaryMath('abs');
/** Rounded to `scale` decimal places, half away from zero (HALF_UP): round(2.5) is 3. */
export const round = (c: Column | string, scale = 0): Column => call('round', [toColumn(c).expr, int(scale, 'round', 'scale')]);
/** Rounded to `scale` decimal places, half to even (HALF_EVEN): bround(2.5) is 2. */
export const bround = (c: Column | string, scale = 0): Column => call('bround', [toColumn(c).expr, int(scale, 'bround', 'scale')]);
/** The largest integer not above the value, a LONG. */
export const floor = unaryMath('floor');
/** The smallest integer not below the value, a LONG. */
export const ceil = unaryMath('ceil');
/** The square root, a DOUBLE (null below zero). */
export const sqrt = unaryMath('sqrt');
/** The cube root, a DOUBLE. */
export const cbrt = unaryMath('cbrt');
/** e raised to the value, a DOUBLE. */
export const exp = unaryMath('exp');
/** exp(x) - 1, exact for small x. */
export const expm1 = unaryMath('expm1');
/** The natural logarithm (null at or below zero); log(base, c) in that base. */
export function log(baseOrCol: number | Column | string, c?: Column | string): Column {
  if (c === undefined) return math('log', [baseOrCol as Column | string]);
  const base = typeof baseOrCol === 'number' ? new Column({ op: 'lit', value: baseOrCol, type: 'double' }) : toColumn(baseOrCol);
  return math('log', [base, c]);
}
/** The base-10 logarithm (null at or below zero). */
export const log10 = unaryMath('log10');
/** The base-2 logarithm (null at or below zero). */
export const log2 = unaryMath('log2');
/** ln(1 + x), exact for small x. */
export const log1p = unaryMath('log1p');
/** `l` raised to the power `r`, a DOUBLE. */
export const pow = (l: Column | string, r: Column | string | number): Column => call('pow', [toColumn(l).expr, lit(r).expr]);
/** The positive remainder: pmod(-10, 3) is 2. */
export const pmod = (dividend: Column | string, divisor: Column | string | number): Column => call('pmod', [toColumn(dividend).expr, lit(divisor).expr]);
/** The largest non-null argument (NaN above every number). */
export const greatest = (...cols: Array<Column | string>): Column => math('greatest', cols);
/** The smallest non-null argument. */
export const least = (...cols: Array<Column | string>): Column => math('least', cols);
/** -1.0, 0.0 or 1.0 by the value's sign. */
export const signum = unaryMath('signum');
/** Radians converted to degrees. */
export const degrees = unaryMath('degrees');
/** Degrees converted to radians. */
export const radians = unaryMath('radians');
/** The sine of an angle in radians. */
export const sin = unaryMath('sin');
/** The cosine of an angle in radians. */
export const cos = unaryMath('cos');
/** The tangent of an angle in radians. */
export const tan = unaryMath('tan');
/** The cotangent of an angle in radians. */
export const cot = unaryMath('cot');
/** The arc sine, in radians. */
export const asin = unaryMath('asin');
/** The arc cosine, in radians. */
export const acos = unaryMath('acos');
/** The arc tangent, in radians. */
export const atan = unaryMath('atan');
/** The angle in radians of the point (x, y): atan2(y, x). */
export const atan2 = (y: Column | string, x: Column | string): Column => math('atan2', [y, x]);
/** The hyperbolic sine. */
export const sinh = unaryMath('sinh');
/** The hyperbolic cosine. */
export const cosh = unaryMath('cosh');
/** The hyperbolic tangent. */
export const tanh = unaryMath('tanh');
/** sqrt(a² + b²) without overflow. */
export const hypot = (a: Column | string, b: Column | string): Column => math('hypot', [a, b]);
/** Whether the value is NaN (null is not). */
export const isnan = unaryMath('isnan');
/** `a`, or `b` where `a` is NaN. */
export const nanvl = (a: Column | string, b: Column | string): Column => math('nanvl', [a, b]);

// ---- strings (Spark's names and argument orders; literals as Spark's functions take them) --------

const text = (v: string | Column): Expr => (v instanceof Column ? v.expr : { op: 'lit', value: v, type: 'string' });
const one =
  (fn: StringFunctionName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);

/** The non-null strings joined by `sep`. */
export const concat_ws = (sep: string, ...cols: Array<Column | string>): Column => call('concat_ws', [text(sep), ...cols.map((c) => toColumn(c).expr)]);
/** 1-based position of `substring` in the string, 0 if absent. */
export const instr = (c: Column | string, substring: string): Column => call('instr', [toColumn(c).expr, text(substring)]);
/** 1-based position of `substr` in the string at or after `pos`, 0 if absent. */
export const locate = (substr: string, c: Column | string, pos = 1): Column => call('locate', [text(substr), toColumn(c).expr, int(pos, 'locate', 'pos')]);
/** The string left-padded with `pad` to `len` characters (cut to `len` when longer). */
export const lpad = (c: Column | string, len: number, pad: string): Column => call('lpad', [toColumn(c).expr, int(len, 'lpad', 'len'), text(pad)]);
/** The string right-padded with `pad` to `len` characters (cut to `len` when longer). */
export const rpad = (c: Column | string, len: number, pad: string): Column => call('rpad', [toColumn(c).expr, int(len, 'rpad', 'len'), text(pad)]);
/** The string without leading spaces. */
export const ltrim = one('ltrim');
/** The string without trailing spaces. */
export const rtrim = one('rtrim');
/** Every occurrence of `search` replaced by `replacement` (removed without one). */
export const replace = (c: Column | string, search: string | Column, replacement: string | Column = ''): Column =>
  call('replace', [toColumn(c).expr, text(search), text(replacement)]);
/** Each character of `matching` replaced by the character at the same place in `replaceWith` (removed when there is none). */
export const translate = (c: Column | string, matching: string, replaceWith: string): Column =>
  call('translate', [toColumn(c).expr, text(matching), text(replaceWith)]);
/** Each word with its first letter in upper case and the rest in lower case. */
export const initcap = one('initcap');
/** The string (or array) in reverse order. */
export const reverse = one('reverse');
/** The string repeated `n` times. */
export const repeat = (c: Column | string, n: number): Column => call('repeat', [toColumn(c).expr, int(n, 'repeat', 'n')]);
/** The string before the `count`-th occurrence of `delim` (after the count-th from the end when negative). */
export const substring_index = (c: Column | string, delim: string, count: number): Column =>
  call('substring_index', [toColumn(c).expr, text(delim), int(count, 'substring_index', 'count')]);
/** The `part`-th (1-based; negative counts from the end) field of the string split by `delim`, '' when there is none. */
export const split_part = (c: Column | string, delim: string | Column, part: number | Column): Column =>
  call('split_part', [toColumn(c).expr, text(delim), lit(part).expr]);
/** The leftmost `len` characters. */
export const left = (c: Column | string, len: number | Column): Column => call('left', [toColumn(c).expr, lit(len).expr]);
/** The rightmost `len` characters. */
export const right = (c: Column | string, len: number | Column): Column => call('right', [toColumn(c).expr, lit(len).expr]);
/** The code of the string's first character (0 for ''). */
export const ascii = one('ascii');
/** The MD5 digest of the string, as 32 hex digits. */
export const md5 = one('md5');
/** The SHA-1 digest of the string, as hex digits. */
export const sha1 = one('sha1');
/** The SHA-2 digest of the string (`numBits` 224, 256, 384 or 512; 0 means 256), as hex digits. */
export const sha2 = (c: Column | string, numBits: number): Column => call('sha2', [toColumn(c).expr, int(numBits, 'sha2', 'numBits')]);
/** The CRC-32 checksum of the string, a LONG. */
export const crc32 = one('crc32');
/** The string's UTF-8 bytes in base64. */
export const base64 = one('base64');
/** A number, or a string's UTF-8 bytes, in hexadecimal. */
export const hex = one('hex');
/** Group `idx` of the first match of `pattern` (a JavaScript regular expression), '' without a match. */
export const regexp_extract = (c: Column | string, pattern: string, idx: number): Column =>
  call('regexp_extract', [toColumn(c).expr, text(pattern), int(idx, 'regexp_extract', 'idx')]);
/** Every match of `pattern` replaced; `$1` in the replacement names a group. */
export const regexp_replace = (c: Column | string, pattern: string | Column, replacement: string | Column): Column =>
  call('regexp_replace', [toColumn(c).expr, text(pattern), text(replacement)]);
/** hash(c...): Spark's Murmur3 hash (seed 42) of the values, an INT equal to Spark's for the same values. */
export const hash = (...cs: Array<Column | string>): Column =>
  call(
    'hash',
    cs.map((c) => toColumn(c).expr),
  );
/** format_string(format, c...): Java's String.format (%s, %d, %.2f, %x, %05d, ...). */
export const format_string = (format: string, ...cs: Array<Column | string>): Column =>
  call('format_string', [text(format), ...cs.map((c) => toColumn(c).expr)]);
/** Same as format_string. */
export const printf = format_string;
/** typeof(c): the name of c's type (`int`, `bigint`, `array<string>`, ...); exported as `typeof`. */
const typeOf = (c: Column | string): Column => call('typeof', [toColumn(c).expr]);
export { typeOf as typeof };
/** Group `idx` of every match of `pattern`, as an array. */
export const regexp_extract_all = (c: Column | string, pattern: string, idx = 1): Column =>
  call('regexp_extract_all', [toColumn(c).expr, text(pattern), int(idx, 'regexp_extract_all', 'idx')]);
/** How many times `pattern` matches in the string. */
export const regexp_count = (c: Column | string, pattern: string): Column => call('regexp_count', [toColumn(c).expr, text(pattern)]);
/** The Levenshtein edit distance of two strings; -1 when above `threshold`, if given. */
export const levenshtein = (a: Column | string, b: Column | string, threshold?: number): Column =>
  call('levenshtein', [toColumn(a).expr, toColumn(b).expr, ...(threshold === undefined ? [] : [int(threshold, 'levenshtein', 'threshold')])]);
/** date_part(field, c): 'year', 'quarter', 'month', 'week', 'day', 'dayofweek', 'doy', 'hour', 'minute', 'second' of a date or timestamp. */
export const date_part = (field: string, c: Column | string): Column => new Column(datePart(field, toColumn(c).expr, `date_part('${field}', ...)`));
/** unbase64(c): the bytes of base64 text, as UTF-8 text (Sluice has no BINARY type). */
export const unbase64 = one('unbase64' as StringFunctionName);
/** unhex(c): the bytes of hex digits, as UTF-8 text. */
export const unhex = one('unhex' as StringFunctionName);

// ---------------------------------------------------------------------------------------------
// Arrays, maps, structs and generators

const cols = (cs: Array<Column | string>): Expr[] => cs.map((c) => toColumn(c).expr);
const oneCol =
  (fn: CollectionFunctionName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);
/** A value argument: a Column, or a literal (not a column name, as in Spark's array_contains). */
const value = (v: ColumnOrLiteral): Expr => lit(v).expr;

/** split(str, pattern[, limit]): the parts around matches of the regular expression. */
export const split = (c: Column | string, pattern: string, limit = -1): Column =>
  call('split', [toColumn(c).expr, text(pattern), int(limit, 'split', 'limit')]);
/** An array of the columns' values (of one type). */
export const array = (...cs: Array<Column | string>): Column => call('array', cols(cs));
/** The number of elements of an array or entries of a map (-1 for null, as Spark's default). */
export const size = oneCol('size');
/** Same as size. */
export const cardinality = size;
/** Whether the array contains `v` (null when it does not but holds a null). */
export const array_contains = (c: Column | string, v: ColumnOrLiteral): Column => call('array_contains', [toColumn(c).expr, value(v)]);
/** The element at 1-based index `at` of an array (negative counts from the end), or a map's value for key `at`. */
export const element_at = (c: Column | string, at: ColumnOrLiteral): Column => call('element_at', [toColumn(c).expr, value(at)]);
/** The array's elements joined by `delimiter`; nulls skipped, or replaced by `nullReplacement`. */
export const array_join = (c: Column | string, delimiter: string, nullReplacement?: string): Column =>
  call('array_join', [toColumn(c).expr, text(delimiter), ...(nullReplacement === undefined ? [] : [text(nullReplacement)])]);
/** The array sorted, ascending (nulls first) or descending (nulls last). */
export const sort_array = (c: Column | string, asc = true): Column => call('sort_array', [toColumn(c).expr, lit(asc).expr]);
/** The array sorted ascending, nulls last. */
export const array_sort = oneCol('array_sort');
/** The array without duplicates, in first-seen order. */
export const array_distinct = oneCol('array_distinct');
/** The least non-null element. */
export const array_min = oneCol('array_min');
/** The greatest non-null element. */
export const array_max = oneCol('array_max');
/** The 1-based position of the first element equal to `v`, 0 if none. */
export const array_position = (c: Column | string, v: ColumnOrLiteral): Column => call('array_position', [toColumn(c).expr, value(v)]);
/** The array without the elements equal to `v`. */
export const array_remove = (c: Column | string, v: ColumnOrLiteral): Column => call('array_remove', [toColumn(c).expr, value(v)]);
/** An array of `count` copies of the value. */
export const array_repeat = (c: Column | string, count: number | Column): Column => call('array_repeat', [toColumn(c).expr, lit(count).expr]);
/** The distinct elements of both arrays. */
export const array_union = (a: Column | string, b: Column | string): Column => call('array_union', cols([a, b]));
/** The distinct elements in both arrays. */
export const array_intersect = (a: Column | string, b: Column | string): Column => call('array_intersect', cols([a, b]));
/** The distinct elements of `a` not in `b`. */
export const array_except = (a: Column | string, b: Column | string): Column => call('array_except', cols([a, b]));
/** Whether the arrays have a non-null element in common (null when not but either holds a null). */
export const arrays_overlap = (a: Column | string, b: Column | string): Column => call('arrays_overlap', cols([a, b]));
/** An array of arrays as one array. */
export const flatten = oneCol('flatten');
/** `length` elements from 1-based `start` (negative counts from the end). */
export const slice = (c: Column | string, start: number | Column, length: number | Column): Column =>
  call('slice', [toColumn(c).expr, lit(start).expr, lit(length).expr]);
/** The integers from `start` to `stop` inclusive, by `step` (1 or -1 by default). */
export const sequence = (start: Column | string, stop: Column | string, step?: Column | string): Column =>
  call('sequence', cols(step === undefined ? [start, stop] : [start, stop, step]));
/** create_map(k1, v1, k2, v2, ...): Spark's Column name for SQL's map(...). */
export const create_map = (...cs: Array<Column | string>): Column => call('map', cols(cs));
/** The map's keys, as an array. */
export const map_keys = oneCol('map_keys');
/** The map's values, as an array. */
export const map_values = oneCol('map_values');
/** The map's entries, as an array of structs of `key` and `value`. */
export const map_entries = oneCol('map_entries');
/** A map of the keys of one array to the values of the other. */
export const map_from_arrays = (keys: Column | string, values: Column | string): Column => call('map_from_arrays', cols([keys, values]));
/** Whether the map has the key. */
export const map_contains_key = (c: Column | string, key: ColumnOrLiteral): Column => call('map_contains_key', [toColumn(c).expr, value(key)]);
/** The array with `v` appended. */
export const array_append = (c: Column | string, v: ColumnOrLiteral): Column => call('array_append', [toColumn(c).expr, value(v)]);
/** The array with `v` in front. */
export const array_prepend = (c: Column | string, v: ColumnOrLiteral): Column => call('array_prepend', [toColumn(c).expr, value(v)]);
/** The array without its nulls. */
export const array_compact = oneCol('array_compact');
/** The number of elements of an array (null for null). */
export const array_size = oneCol('array_size');
/** get(arr, i): the element at 0-based index i, null out of range. */
export const get = (c: Column | string, index: number | Column): Column => call('get', [toColumn(c).expr, lit(index).expr]);
/** A map from text such as `'a:1,b:2'`, split by `pairDelim` then `keyValueDelim`. */
export const str_to_map = (c: Column | string, pairDelim = ',', keyValueDelim = ':'): Column =>
  call('str_to_map', [toColumn(c).expr, text(pairDelim), text(keyValueDelim)]);
/** The union of maps (a key in several is an error, as Spark's default). */
export const map_concat = (...cs: Array<Column | string>): Column => call('map_concat', cols(cs));
/** A map from an array of key-value structs. */
export const map_from_entries = oneCol('map_from_entries');

/**
 * A lambda from a JavaScript function of Columns: `(x) => x.plus(1)`, `(acc, x) => acc.plus(x)`.
 * Its parameters get names no column has, so the body may read the row's columns too.
 */
let lambdas = 0;
function lambda(fn: (...params: Column[]) => Column, arity = fn.length): Expr {
  if (typeof fn !== 'function')
    throw new SluiceError('INVALID_EXPRESSION', 'a higher-order function takes a JavaScript function of Columns, as (x) => x.plus(1)');
  const id = ++lambdas;
  const params = Array.from({ length: Math.max(arity, 1) }, (_, i) => `${'xyzw'[i] ?? `p${i}`}__${id}`);
  const body = fn(...params.map((p) => new Column({ op: 'col', name: p })));
  if (!(body instanceof Column)) throw new SluiceError('INVALID_EXPRESSION', 'the function given to a higher-order function must return a Column');
  return { op: 'lambda', params, body: body.expr };
}

/** transform(c, (x) => ..., or (x, i) => ...): each element of an array mapped. */
export const transform = (c: Column | string, fn: (x: Column, i: Column) => Column): Column => call('transform', [toColumn(c).expr, lambda(fn)]);
/** filter(c, (x) => ...): the elements for which the predicate holds. */
export const filter = (c: Column | string, fn: (x: Column, i: Column) => Column): Column => call('filter', [toColumn(c).expr, lambda(fn)]);
/** Whether the predicate holds for some element of the array. */
export const exists = (c: Column | string, fn: (x: Column) => Column): Column => call('exists', [toColumn(c).expr, lambda(fn)]);
/** Whether the predicate holds for every element of the array. */
export const forall = (c: Column | string, fn: (x: Column) => Column): Column => call('forall', [toColumn(c).expr, lambda(fn)]);
/** aggregate(c, initial, (acc, x) => merged[, (acc) => finished]): a fold over the elements. */
export const aggregate = (c: Column | string, initial: ColumnOrLiteral, merge: (acc: Column, x: Column) => Column, finish?: (acc: Column) => Column): Column =>
  call('aggregate', [toColumn(c).expr, lit(initial).expr, lambda(merge, 2), ...(finish === undefined ? [] : [lambda(finish, 1)])]);
/** The arrays merged element by element by `fn` (the shorter padded with nulls). */
export const zip_with = (a: Column | string, b: Column | string, fn: (x: Column, y: Column) => Column): Column =>
  call('zip_with', [toColumn(a).expr, toColumn(b).expr, lambda(fn, 2)]);
/** The map's entries for which the predicate of key and value holds. */
export const map_filter = (c: Column | string, fn: (k: Column, v: Column) => Column): Column => call('map_filter', [toColumn(c).expr, lambda(fn, 2)]);
/** The map with each key replaced by `fn(key, value)`. */
export const transform_keys = (c: Column | string, fn: (k: Column, v: Column) => Column): Column => call('transform_keys', [toColumn(c).expr, lambda(fn, 2)]);
/** The map with each value replaced by `fn(key, value)`. */
export const transform_values = (c: Column | string, fn: (k: Column, v: Column) => Column): Column =>
  call('transform_values', [toColumn(c).expr, lambda(fn, 2)]);

/** struct(a, b): a struct whose fields are named after the columns (col1, col2... for other expressions), as in Spark. */
export function struct(...cs: Array<Column | string>): Column {
  const args = cols(cs).flatMap((e, i): Expr[] => {
    const name = e.op === 'alias' ? e.name : e.op === 'col' ? (e.name.split('.').pop() as string) : `col${i + 1}`;
    return [{ op: 'lit', value: name, type: 'string' }, e];
  });
  return call('named_struct', args);
}

/** named_struct(name1, value1, ...): a struct of the named values. */
export function named_struct(...namesAndValues: Array<string | Column>): Column {
  return call(
    'named_struct',
    namesAndValues.map((x, i) => (i % 2 === 0 ? text(x as string) : toColumn(x).expr)),
  );
}

const generator =
  (fn: GeneratorName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);
/** explode(c): a row per element of an array (column `col`) or entry of a map (`key`, `value`); a select item only. */
export const explode = generator('explode');
/** As explode, with one row of nulls for an empty or null array or map. */
export const explode_outer = generator('explode_outer');
/** As explode, with the element's 0-based position first (`pos`). */
export const posexplode = generator('posexplode');
/** As posexplode, with one row of nulls for an empty or null array or map. */
export const posexplode_outer = generator('posexplode_outer');
/** inline(array of structs): a row per struct, its fields as columns. */
export const inline = generator('inline');
/** As inline, with one row of nulls for an empty or null array. */
export const inline_outer = generator('inline_outer');

// ---------------------------------------------------------------------------------------------
// Dates and times (session time zone UTC; patterns are Spark's datetime patterns)

const dt =
  (fn: DatetimeFunctionName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);
const dtWithInt =
  (fn: DatetimeFunctionName) =>
  (c: Column | string, n: number | Column): Column =>
    call(fn, [toColumn(c).expr, lit(n).expr]);

/** to_timestamp(c[, pattern]): text as a TIMESTAMP (as CAST without a pattern); null if it does not parse. */
export const to_timestamp = (c: Column | string, pattern?: string): Column =>
  call('to_timestamp', [toColumn(c).expr, ...(pattern === undefined ? [] : [text(pattern)])]);
/** Text (or a timestamp) as a DATE, by `pattern` if given; null if it does not parse. */
export const to_date = (c: Column | string, pattern?: string): Column => call('to_date', [toColumn(c).expr, ...(pattern === undefined ? [] : [text(pattern)])]);
/** A date or timestamp as text, by a Spark datetime pattern (`'yyyy-MM-dd HH:mm'`). */
export const date_format = (c: Column | string, pattern: string): Column => call('date_format', [toColumn(c).expr, text(pattern)]);
/** Seconds since the epoch as text, by `pattern`. */
export const from_unixtime = (c: Column | string, pattern = 'yyyy-MM-dd HH:mm:ss'): Column => call('from_unixtime', [toColumn(c).expr, text(pattern)]);
/** Text by `pattern` (or a timestamp) as seconds since the epoch, a LONG. */
export const unix_timestamp = (c: Column | string, pattern = 'yyyy-MM-dd HH:mm:ss'): Column => call('unix_timestamp', [toColumn(c).expr, text(pattern)]);
/** The date `n` days after. */
export const date_add = dtWithInt('date_add');
/** The date `n` days before. */
export const date_sub = dtWithInt('date_sub');
/** The days from `start` to `end`. */
export const datediff = (end: Column | string, start: Column | string): Column => call('datediff', cols([end, start]));
/** The date `n` months after (at most the month's last day). */
export const add_months = dtWithInt('add_months');
/** The months from `b` to `a`, a DOUBLE (rounded to 8 digits unless `roundOff` is false). */
export const months_between = (a: Column | string, b: Column | string, roundOff = true): Column =>
  call('months_between', [...cols([a, b]), lit(roundOff).expr]);
/** The year of a date or timestamp. */
export const year = dt('year');
/** The quarter (1 to 4) of a date or timestamp. */
export const quarter = dt('quarter');
/** The month (1 to 12) of a date or timestamp. */
export const month = dt('month');
/** The day of the month (1 to 31). */
export const dayofmonth = dt('dayofmonth');
/** The day of the week, 1 (Sunday) to 7 (Saturday). */
export const dayofweek = dt('dayofweek');
/** The day of the week, 0 (Monday) to 6 (Sunday). */
export const weekday = dt('weekday');
/** The day of the year (1 to 366). */
export const dayofyear = dt('dayofyear');
/** The ISO 8601 week of the year (1 to 53). */
export const weekofyear = dt('weekofyear');
/** The hour (0 to 23) of a timestamp. */
export const hour = dt('hour');
/** The minute (0 to 59) of a timestamp. */
export const minute = dt('minute');
/** The second (0 to 59) of a timestamp. */
export const second = dt('second');
/** date_trunc(unit, ts): 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond'. */
export const date_trunc = (unit: string, c: Column | string): Column => call('date_trunc', [text(unit), toColumn(c).expr]);
/** A date truncated to `unit`: 'year', 'quarter', 'month' or 'week'. */
export const trunc = (c: Column | string, unit: string): Column => call('trunc', [toColumn(c).expr, text(unit)]);
/** The last day of the date's month. */
export const last_day = dt('last_day');
/** The first date after the date that falls on `dayOfWeek` ('Mon', 'Tuesday'...). */
export const next_day = (c: Column | string, dayOfWeek: string): Column => call('next_day', [toColumn(c).expr, text(dayOfWeek)]);
/** make_timestamp(year, month, day, hour, min, sec): a TIMESTAMP (UTC); null if invalid. */
export const make_timestamp = (...cs: Array<Column | string>): Column => call('make_timestamp', cols(cs));
/** A DATE of year, month and day; null if invalid. */
export const make_date = (y: Column | string, m: Column | string, d: Column | string): Column => call('make_date', cols([y, m, d]));
/** Seconds since the epoch as a TIMESTAMP. */
export const timestamp_seconds = dt('timestamp_seconds');
/** Milliseconds since the epoch as a TIMESTAMP. */
export const timestamp_millis = dt('timestamp_millis');
/** A timestamp as seconds since the epoch. */
export const unix_seconds = dt('unix_seconds');
/** A timestamp as milliseconds since the epoch. */
export const unix_millis = dt('unix_millis');
/** A date as days since the epoch. */
export const unix_date = dt('unix_date');
/** Days since the epoch as a DATE. */
export const date_from_unix_date = dt('date_from_unix_date');
/** window_time(window): the event time of a window of a windowed aggregation (its end less 1 ms). */
export const window_time = dt('window_time');
/** A UTC timestamp shown as wall-clock time in time zone `zone`. */
export const from_utc_timestamp = (c: Column | string, zone: string): Column => call('from_utc_timestamp', [toColumn(c).expr, text(zone)]);
/** Wall-clock time in time zone `zone` as a UTC timestamp. */
export const to_utc_timestamp = (c: Column | string, zone: string): Column => call('to_utc_timestamp', [toColumn(c).expr, text(zone)]);
/** current_timestamp(): the batch's timestamp, the same for every row of a batch and again when a batch is replayed. */
export const current_timestamp = (): Column => call('current_timestamp', []);
/** Same as current_timestamp. */
export const now = current_timestamp;
/** The batch's date (UTC), the same for every row of a batch. */
export const current_date = (): Column => call('current_date', []);

// ---------------------------------------------------------------------------------------------
// JSON

/** A schema argument: DDL text ('a INT, b ARRAY<STRING>'), or a schema object or field list as session.readStream.schema takes. */
const schemaText = (schema: string | Record<string, string | object> | Schema): Expr =>
  text(typeof schema === 'string' ? schema : schemaToDDL(parseSchema(schema, 'from_json schema')));
const optionsMap = (options: Record<string, string>): Expr[] =>
  Object.keys(options).length === 0
    ? []
    : [
        call(
          'map',
          Object.entries(options).flatMap(([k, v]) => [text(k), text(String(v))]),
        ).expr,
      ];

/** from_json(c, schema[, { mode }]): JSON text as a struct (or the ARRAY or MAP type given); PERMISSIVE (default) or FAILFAST. */
export const from_json = (c: Column | string, schema: string | Record<string, string | object> | Schema, options: Record<string, string> = {}): Column =>
  call('from_json', [toColumn(c).expr, schemaText(schema), ...optionsMap(options)]);
/** A struct, array or map as JSON text. */
export const to_json = (c: Column | string): Column => call('to_json', [toColumn(c).expr]);
/** get_json_object(c, path): the value at a JSONPath ('$.a.b[0]') as text. */
export const get_json_object = (c: Column | string, path: string): Column => call('get_json_object', [toColumn(c).expr, text(path)]);
/** The number of elements of a JSON array text (null if it is not one). */
export const json_array_length = (c: Column | string): Column => call('json_array_length', [toColumn(c).expr]);
/** The keys of a JSON object text, as an array (null if it is not one). */
export const json_object_keys = (c: Column | string): Column => call('json_object_keys', [toColumn(c).expr]);
/** schema_of_json(json): the DDL of the type Spark infers for a JSON text. */
export const schema_of_json = (json: string | Column): Column => call('schema_of_json', [text(json)]);
/** json_tuple(c, ...fields): a generator giving one row whose columns c0, c1, ... are the fields' values as text. */
export const json_tuple = (c: Column | string, ...fields: string[]): Column => new Column(jsonTuple(toColumn(c).expr, fields.map(text)));

/**
 * A user function that each worker imports itself: `moduleUrl` is a URL (file:, data:) or a file
 * path (resolved against the current directory), and `exportName` a synchronous function of that
 * module. Arguments arrive as JavaScript values (TIMESTAMP as Date, SQL null as null); the result
 * must be of `returnType` (`'double'`, `'string'`, `'timestamp'`, `'struct<a: int>'`, ...; undefined is
 * null), else UDF_RESULT_TYPE_MISMATCH. What it throws fails the query with UDF_FAILED.
 *
 * @example
 * ```ts
 * const double = udf(new URL('./udfs.mjs', import.meta.url), 'double', 'double');
 * df.select(double('value').alias('twice'));
 * ```
 */
export function udf(moduleUrl: string | URL, exportName: string, returnType: string | DataType): (...cols: Array<Column | string>) => Column {
  if (typeof exportName !== 'string' || exportName === '') {
    throw new SluiceError('INVALID_EXPRESSION', `udf needs the name of an exported function, got ${String(exportName)}`);
  }
  const url = moduleHref(moduleUrl);
  const type = typeof returnType === 'string' ? parseDataType(returnType) : returnType;
  return (...cols) => new Column({ op: 'udf', moduleUrl: url, exportName, returnType: type, args: cols.map((c) => toColumn(c).expr) });
}

/** A stateful processor (a class, or a function for flatMapGroupsWithState) exported by a module every worker imports. */
export interface StatefulProcessorRef {
  /** Tells it apart from other values. */
  readonly kind: 'statefulProcessor';
  /** The module's URL (a path given was made an absolute file: URL). */
  readonly moduleUrl: string;
  /** The export of the module: a class (transformWithState) or a function (the GroupState APIs). */
  readonly exportName: string;
}

/**
 * The processor of `groupBy(...).transformWithState` (a class with init, handleInputRows, and
 * optionally handleExpiredTimer, handleInitialState and close), or the function of
 * flatMapGroupsWithState and mapGroupsWithState: export `exportName` of the module at `moduleUrl`,
 * which every worker imports once, as udf modules are.
 *
 * @example
 * ```ts
 * const counter = statefulProcessor(new URL('./counter.mjs', import.meta.url), 'Counter');
 * df.groupBy('id').transformWithState(counter, { outputSchema: 'id STRING, count LONG', outputMode: 'update' });
 * ```
 */
export function statefulProcessor(moduleUrl: string | URL, exportName: string): StatefulProcessorRef {
  if (typeof exportName !== 'string' || exportName === '') {
    throw new SluiceError('INVALID_EXPRESSION', `statefulProcessor needs the name of an export, got ${String(exportName)}`);
  }
  return Object.freeze({ kind: 'statefulProcessor', moduleUrl: moduleHref(moduleUrl), exportName });
}

/** The module's URL text, the same in every worker: paths become absolute file URLs here. */
function moduleHref(moduleUrl: string | URL): string {
  if (moduleUrl instanceof URL) return moduleUrl.href;
  if (typeof moduleUrl !== 'string' || moduleUrl === '') {
    throw new SluiceError('INVALID_EXPRESSION', `udf needs a module URL or path, got ${String(moduleUrl)}`);
  }
  // Two or more letters before ':' make a URL scheme; one letter is a Windows drive.
  if (/^[a-z][a-z\d+.-]+:/i.test(moduleUrl)) return moduleUrl;
  return pathToFileURL(isAbsolute(moduleUrl) ? moduleUrl : resolve(moduleUrl)).href;
}

// ---------------------------------------------------------------------------------------------
// Spark's other names for the functions above, and the conditionals SQL text has

/** Same as ceil. */
export const ceiling = ceil;
/** The natural logarithm (null at or below zero). */
export const ln = unaryMath('ln');
/** Same as pow. */
export const power = pow;
/** Same as signum. */
export const sign = signum;
/** The character of a code point (modulo 256, as Spark's). */
export const chr = one('chr');
/** Same as chr. */
export const char = chr;
/** Same as length. */
export const len = length;
/** Same as length. */
export const char_length = length;
/** Same as length. */
export const character_length = length;
/** Same as upper. */
export const ucase = upper;
/** Same as lower. */
export const lcase = lower;
/** Same as substring. */
export const substr = substring;
/** Same as dayofmonth. */
export const day = dayofmonth;
/** Same as datediff. */
export const date_diff = datediff;
/** Same as unix_timestamp. */
export const to_unix_timestamp = unix_timestamp;
/** Same as current_date. */
export const curdate = current_date;
/** Whether the value is null. */
export const isnull = (c: Column | string): Column => toColumn(c).isNull();
/** Whether the value is not null. */
export const isnotnull = (c: Column | string): Column => toColumn(c).isNotNull();
/** SQL LIKE, as Column.like. */
export const like = (c: Column | string, pattern: string): Column => toColumn(c).like(pattern);
/** LIKE ignoring case, as Column.ilike. */
export const ilike = (c: Column | string, pattern: string): Column => toColumn(c).ilike(pattern);
/** Whether the regular expression matches, as Column.rlike. */
export const rlike = (c: Column | string, pattern: string): Column => toColumn(c).rlike(pattern);
/** Same as rlike. */
export const regexp_like = rlike;
/** nvl(a, b) and ifnull(a, b): a unless it is null, then b. */
export const nvl = (a: Column | string, b: ColumnOrLiteral): Column => call('coalesce', [toColumn(a).expr, lit(b).expr]);
/** Same as nvl. */
export const ifnull = nvl;
/** nvl2(x, a, b): a when x is not null, else b. */
export const nvl2 = (x: Column | string, a: ColumnOrLiteral, b: ColumnOrLiteral): Column => when(toColumn(x).isNotNull(), a).otherwise(b);
/** nullif(a, b): null when a = b, else a. */
export const nullif = (a: Column | string, b: ColumnOrLiteral): Column => when(toColumn(a).equalTo(lit(b)), null).otherwise(toColumn(a));
/** make_interval(years, months, weeks, days, hours, mins, secs): an INTERVAL, for timestamp arithmetic (ts.plus(make_interval(0, 0, 0, 1))). */
export const make_interval = (...parts: Array<Column | string | number>): Column =>
  call(
    'make_interval',
    parts.map((p) => lit(p).expr),
  );
/** The value negated (`-c`). */
export const negative = (c: Column | string): Column => toColumn(c).negate();
/** The value itself (`+c`). */
export const positive = (c: Column | string): Column => toColumn(c);
/** a % b, as Column.mod. */
export const mod = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).mod(b);
/** Same as date_add. */
export const dateadd = date_add;
/** Whether the string starts with `prefix`. */
export const startswith = (c: Column | string, prefix: ColumnOrLiteral): Column => toColumn(c).startsWith(prefix);
/** Whether the string ends with `suffix`. */
export const endswith = (c: Column | string, suffix: ColumnOrLiteral): Column => toColumn(c).endsWith(suffix);
/** Whether the string contains `part`. */
export const contains = (c: Column | string, part: ColumnOrLiteral): Column => toColumn(c).contains(part);
/** bitwise_not(c): ~c. */
export const bitwise_not = (c: Column | string): Column => new Column({ op: 'unary', fn: 'bitwiseNot', expr: toColumn(c).expr });
/** The integer shifted left by `n` bits. */
export const shiftleft = (c: Column | string, n: number): Column => call('shiftleft', [toColumn(c).expr, int(n, 'shiftleft', 'n')]);
/** The integer shifted right by `n` bits, keeping its sign. */
export const shiftright = (c: Column | string, n: number): Column => call('shiftright', [toColumn(c).expr, int(n, 'shiftright', 'n')]);
/** The integer shifted right by `n` bits, filling with zeros. */
export const shiftrightunsigned = (c: Column | string, n: number): Column => call('shiftrightunsigned', [toColumn(c).expr, int(n, 'shiftrightunsigned', 'n')]);
/** The number of bits set in the integer. */
export const bit_count = (c: Column | string): Column => call('bit_count', [toColumn(c).expr]);
/** The bit at position `pos` (0 is the lowest) of the integer. */
export const bit_get = (c: Column | string, pos: number | Column): Column => call('bit_get', [toColumn(c).expr, lit(pos).expr]);
/** elt(n, c1, c2, ...): the n-th (1-based) of the columns; null out of range. */
export const elt = (n: Column | string | number, ...cs: Array<Column | string>): Column => call('elt', [lit(n).expr, ...cs.map((c) => toColumn(c).expr)]);
/** The 1-based position of the string in a comma-separated list, 0 if absent. */
export const find_in_set = (c: Column | string, list: Column | string): Column => call('find_in_set', [toColumn(c).expr, toColumn(list).expr]);
/** The Soundex code of the string. */
export const soundex = one('soundex' as StringFunctionName);
/** The string without leading and trailing spaces, or characters of `chars`. */
export const btrim = (c: Column | string, chars?: string): Column => call('btrim', [toColumn(c).expr, ...(chars === undefined ? [] : [text(chars)])]);
/** The 1-based position of `substr` in the string at or after `pos`, 0 if absent (as locate). */
export const position = (substr: string | Column, c: Column | string, pos = 1): Column =>
  call('position', [text(substr), toColumn(c).expr, int(pos, 'position', 'pos')]);
/** The length of the string in UTF-8 bytes. */
export const octet_length = one('octet_length' as StringFunctionName);
/** The length of the string in bits of its UTF-8 bytes. */
export const bit_length = one('bit_length' as StringFunctionName);
/** The string encoded for a URL's query (application/x-www-form-urlencoded). */
export const url_encode = one('url_encode' as StringFunctionName);
/** The inverse of url_encode. */
export const url_decode = one('url_decode' as StringFunctionName);
/** parse_url(url, part[, key]): 'HOST', 'PATH', 'QUERY' (with a key, that parameter), 'REF', 'PROTOCOL', 'FILE', 'AUTHORITY', 'USERINFO'. */
export const parse_url = (c: Column | string, part: string, key?: string): Column =>
  call('parse_url', [toColumn(c).expr, text(part), ...(key === undefined ? [] : [text(key)])]);
/** The arrays merged into one array of structs, element by element. */
export const arrays_zip = (...cs: Array<Column | string>): Column =>
  call(
    'arrays_zip',
    cs.map((c) => toColumn(c).expr),
  );
/** The array with `value` inserted at 1-based position `pos` (negative counts from the end). */
export const array_insert = (c: Column | string, pos: number | Column, value: ColumnOrLiteral): Column =>
  call('array_insert', [toColumn(c).expr, lit(pos).expr, lit(value).expr]);
/** a + b (Spark's try_add; Sluice's arithmetic does not fail on overflow). */
export const try_add = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).plus(b);
/** a - b (Spark's try_subtract). */
export const try_subtract = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).minus(b);
/** a * b (Spark's try_multiply). */
export const try_multiply = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).multiply(b);
/** a / b, null for division by zero (Spark's try_divide). */
export const try_divide = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).divide(b);
/** Same as element_at (null out of range). */
export const try_element_at = element_at;
/** Same as to_timestamp (null when the text does not parse). */
export const try_to_timestamp = to_timestamp;
/** equal_null(a, b): a <=> b. */
export const equal_null = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).eqNullSafe(b);
