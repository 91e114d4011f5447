/**
 * Spark's `functions` for stateless expressions. As in Spark (and PySpark), a string passed where
 * a column is expected names a column: upper('id') is upper(col('id')). Values given to lit, when
 * and otherwise are literals.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { datePart, jsonTuple } from './sql/sqlFunctions.js';
import { parseDataType, parseSchema, schemaToDDL, type Schema, type CollectionFunctionName, type DataType, type DatetimeFunctionName, type Expr, type FunctionName, type GeneratorName, type MathFunctionName, type StringFunctionName } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, lit, toColumn, type ColumnOrLiteral } from './Column.js';
import { parseExpression } from './sql/parseExpression.js';

export { lit, toColumn };

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
  const parsed = parseExpression(sql);
  return parsed.kind === 'aggregate' ? parsed.agg : new Column(parsed.expr);
}

/** Same as col, as in Spark. */
export const column = col;

/** Starts a conditional column: when(c1, v1).when(c2, v2).otherwise(v3). */
export function when(condition: Column | boolean, value: ColumnOrLiteral): Column {
  return new Column({ op: 'when', branches: [{ cond: lit(condition).expr, value: lit(value).expr }] });
}

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

export function upper(c: Column | string): Column {
  return call('upper', [toColumn(c).expr]);
}

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
  return call('concat', cols.map((c) => toColumn(c).expr));
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
  return call('coalesce', cols.map((c) => toColumn(c).expr));
}

// ---- math (Spark's names and argument orders; text arguments are cast to DOUBLE) -----------------

const math = (fn: MathFunctionName, cols: Array<Column | string>): Column => call(fn, cols.map((c) => toColumn(c).expr));
const unaryMath = (fn: MathFunctionName) => (c: Column | string): Column => math(fn, [c]);

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
export const sqrt = unaryMath('sqrt');
export const cbrt = unaryMath('cbrt');
export const exp = unaryMath('exp');
export const expm1 = unaryMath('expm1');
/** The natural logarithm (null at or below zero); log(base, c) in that base. */
export function log(baseOrCol: number | Column | string, c?: Column | string): Column {
  if (c === undefined) return math('log', [baseOrCol as Column | string]);
  const base = typeof baseOrCol === 'number' ? new Column({ op: 'lit', value: baseOrCol, type: 'double' }) : toColumn(baseOrCol);
  return math('log', [base, c]);
}
export const log10 = unaryMath('log10');
export const log2 = unaryMath('log2');
export const log1p = unaryMath('log1p');
export const pow = (l: Column | string, r: Column | string | number): Column => call('pow', [toColumn(l).expr, lit(r).expr]);
/** The positive remainder: pmod(-10, 3) is 2. */
export const pmod = (dividend: Column | string, divisor: Column | string | number): Column => call('pmod', [toColumn(dividend).expr, lit(divisor).expr]);
/** The largest non-null argument (NaN above every number). */
export const greatest = (...cols: Array<Column | string>): Column => math('greatest', cols);
/** The smallest non-null argument. */
export const least = (...cols: Array<Column | string>): Column => math('least', cols);
export const signum = unaryMath('signum');
export const degrees = unaryMath('degrees');
export const radians = unaryMath('radians');
export const sin = unaryMath('sin');
export const cos = unaryMath('cos');
export const tan = unaryMath('tan');
export const cot = unaryMath('cot');
export const asin = unaryMath('asin');
export const acos = unaryMath('acos');
export const atan = unaryMath('atan');
export const atan2 = (y: Column | string, x: Column | string): Column => math('atan2', [y, x]);
export const sinh = unaryMath('sinh');
export const cosh = unaryMath('cosh');
export const tanh = unaryMath('tanh');
export const hypot = (a: Column | string, b: Column | string): Column => math('hypot', [a, b]);
/** Whether the value is NaN (null is not). */
export const isnan = unaryMath('isnan');
/** `a`, or `b` where `a` is NaN. */
export const nanvl = (a: Column | string, b: Column | string): Column => math('nanvl', [a, b]);

// ---- strings (Spark's names and argument orders; literals as Spark's functions take them) --------

const text = (v: string | Column): Expr => (v instanceof Column ? v.expr : { op: 'lit', value: v, type: 'string' });
const one = (fn: StringFunctionName) => (c: Column | string): Column => call(fn, [toColumn(c).expr]);

/** The non-null strings joined by `sep`. */
export const concat_ws = (sep: string, ...cols: Array<Column | string>): Column => call('concat_ws', [text(sep), ...cols.map((c) => toColumn(c).expr)]);
/** 1-based position of `substring` in the string, 0 if absent. */
export const instr = (c: Column | string, substring: string): Column => call('instr', [toColumn(c).expr, text(substring)]);
/** 1-based position of `substr` in the string at or after `pos`, 0 if absent. */
export const locate = (substr: string, c: Column | string, pos = 1): Column => call('locate', [text(substr), toColumn(c).expr, int(pos, 'locate', 'pos')]);
export const lpad = (c: Column | string, len: number, pad: string): Column => call('lpad', [toColumn(c).expr, int(len, 'lpad', 'len'), text(pad)]);
export const rpad = (c: Column | string, len: number, pad: string): Column => call('rpad', [toColumn(c).expr, int(len, 'rpad', 'len'), text(pad)]);
export const ltrim = one('ltrim');
export const rtrim = one('rtrim');
/** Every occurrence of `search` replaced by `replacement` (removed without one). */
export const replace = (c: Column | string, search: string | Column, replacement: string | Column = ''): Column => call('replace', [toColumn(c).expr, text(search), text(replacement)]);
export const translate = (c: Column | string, matching: string, replaceWith: string): Column => call('translate', [toColumn(c).expr, text(matching), text(replaceWith)]);
export const initcap = one('initcap');
export const reverse = one('reverse');
export const repeat = (c: Column | string, n: number): Column => call('repeat', [toColumn(c).expr, int(n, 'repeat', 'n')]);
export const substring_index = (c: Column | string, delim: string, count: number): Column => call('substring_index', [toColumn(c).expr, text(delim), int(count, 'substring_index', 'count')]);
export const split_part = (c: Column | string, delim: string | Column, part: number | Column): Column => call('split_part', [toColumn(c).expr, text(delim), lit(part).expr]);
export const left = (c: Column | string, len: number | Column): Column => call('left', [toColumn(c).expr, lit(len).expr]);
export const right = (c: Column | string, len: number | Column): Column => call('right', [toColumn(c).expr, lit(len).expr]);
export const ascii = one('ascii');
export const md5 = one('md5');
export const sha1 = one('sha1');
export const sha2 = (c: Column | string, numBits: number): Column => call('sha2', [toColumn(c).expr, int(numBits, 'sha2', 'numBits')]);
export const crc32 = one('crc32');
export const base64 = one('base64');
export const hex = one('hex');
/** Group `idx` of the first match of `pattern` (a JavaScript regular expression), '' without a match. */
export const regexp_extract = (c: Column | string, pattern: string, idx: number): Column => call('regexp_extract', [toColumn(c).expr, text(pattern), int(idx, 'regexp_extract', 'idx')]);
/** Every match of `pattern` replaced; `$1` in the replacement names a group. */
export const regexp_replace = (c: Column | string, pattern: string | Column, replacement: string | Column): Column => call('regexp_replace', [toColumn(c).expr, text(pattern), text(replacement)]);
/** hash(c...): Spark's Murmur3 hash (seed 42) of the values, an INT equal to Spark's for the same values. */
export const hash = (...cs: Array<Column | string>): Column => call('hash', cs.map((c) => toColumn(c).expr));
/** format_string(format, c...): Java's String.format (%s, %d, %.2f, %x, %05d, ...). */
export const format_string = (format: string, ...cs: Array<Column | string>): Column => call('format_string', [text(format), ...cs.map((c) => toColumn(c).expr)]);
export const printf = format_string;
/** typeof(c): the name of c's type (int, bigint, array<string>, ...); exported as `typeof`. */
const typeOf = (c: Column | string): Column => call('typeof', [toColumn(c).expr]);
export { typeOf as typeof };
export const regexp_extract_all = (c: Column | string, pattern: string, idx = 1): Column => call('regexp_extract_all', [toColumn(c).expr, text(pattern), int(idx, 'regexp_extract_all', 'idx')]);
export const regexp_count = (c: Column | string, pattern: string): Column => call('regexp_count', [toColumn(c).expr, text(pattern)]);
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
const oneCol = (fn: CollectionFunctionName) => (c: Column | string): Column => call(fn, [toColumn(c).expr]);
/** A value argument: a Column, or a literal (not a column name, as in Spark's array_contains). */
const value = (v: ColumnOrLiteral): Expr => lit(v).expr;

/** split(str, pattern[, limit]): the parts around matches of the regular expression. */
export const split = (c: Column | string, pattern: string, limit = -1): Column => call('split', [toColumn(c).expr, text(pattern), int(limit, 'split', 'limit')]);
export const array = (...cs: Array<Column | string>): Column => call('array', cols(cs));
export const size = oneCol('size');
export const cardinality = size;
export const array_contains = (c: Column | string, v: ColumnOrLiteral): Column => call('array_contains', [toColumn(c).expr, value(v)]);
export const element_at = (c: Column | string, at: ColumnOrLiteral): Column => call('element_at', [toColumn(c).expr, value(at)]);
export const array_join = (c: Column | string, delimiter: string, nullReplacement?: string): Column =>
  call('array_join', [toColumn(c).expr, text(delimiter), ...(nullReplacement === undefined ? [] : [text(nullReplacement)])]);
export const sort_array = (c: Column | string, asc = true): Column => call('sort_array', [toColumn(c).expr, lit(asc).expr]);
export const array_sort = oneCol('array_sort');
export const array_distinct = oneCol('array_distinct');
export const array_min = oneCol('array_min');
export const array_max = oneCol('array_max');
export const array_position = (c: Column | string, v: ColumnOrLiteral): Column => call('array_position', [toColumn(c).expr, value(v)]);
export const array_remove = (c: Column | string, v: ColumnOrLiteral): Column => call('array_remove', [toColumn(c).expr, value(v)]);
export const array_repeat = (c: Column | string, count: number | Column): Column => call('array_repeat', [toColumn(c).expr, lit(count).expr]);
export const array_union = (a: Column | string, b: Column | string): Column => call('array_union', cols([a, b]));
export const array_intersect = (a: Column | string, b: Column | string): Column => call('array_intersect', cols([a, b]));
export const array_except = (a: Column | string, b: Column | string): Column => call('array_except', cols([a, b]));
export const arrays_overlap = (a: Column | string, b: Column | string): Column => call('arrays_overlap', cols([a, b]));
export const flatten = oneCol('flatten');
export const slice = (c: Column | string, start: number | Column, length: number | Column): Column => call('slice', [toColumn(c).expr, lit(start).expr, lit(length).expr]);
export const sequence = (start: Column | string, stop: Column | string, step?: Column | string): Column => call('sequence', cols(step === undefined ? [start, stop] : [start, stop, step]));
/** create_map(k1, v1, k2, v2, ...): Spark's Column name for SQL's map(...). */
export const create_map = (...cs: Array<Column | string>): Column => call('map', cols(cs));
export const map_keys = oneCol('map_keys');
export const map_values = oneCol('map_values');
export const map_entries = oneCol('map_entries');
export const map_from_arrays = (keys: Column | string, values: Column | string): Column => call('map_from_arrays', cols([keys, values]));
export const map_contains_key = (c: Column | string, key: ColumnOrLiteral): Column => call('map_contains_key', [toColumn(c).expr, value(key)]);
export const array_append = (c: Column | string, v: ColumnOrLiteral): Column => call('array_append', [toColumn(c).expr, value(v)]);
export const array_prepend = (c: Column | string, v: ColumnOrLiteral): Column => call('array_prepend', [toColumn(c).expr, value(v)]);
export const array_compact = oneCol('array_compact');
export const array_size = oneCol('array_size');
/** get(arr, i): the element at 0-based index i, null out of range. */
export const get = (c: Column | string, index: number | Column): Column => call('get', [toColumn(c).expr, lit(index).expr]);
export const str_to_map = (c: Column | string, pairDelim = ',', keyValueDelim = ':'): Column => call('str_to_map', [toColumn(c).expr, text(pairDelim), text(keyValueDelim)]);
export const map_concat = (...cs: Array<Column | string>): Column => call('map_concat', cols(cs));
export const map_from_entries = oneCol('map_from_entries');

/**
 * A lambda from a JavaScript function of Columns: `(x) => x.plus(1)`, `(acc, x) => acc.plus(x)`.
 * Its parameters get names no column has, so the body may read the row's columns too.
 */
let lambdas = 0;
function lambda(fn: (...params: Column[]) => Column, arity = fn.length): Expr {
  if (typeof fn !== 'function') throw new SluiceError('INVALID_EXPRESSION', 'a higher-order function takes a JavaScript function of Columns, as (x) => x.plus(1)');
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
export const exists = (c: Column | string, fn: (x: Column) => Column): Column => call('exists', [toColumn(c).expr, lambda(fn)]);
export const forall = (c: Column | string, fn: (x: Column) => Column): Column => call('forall', [toColumn(c).expr, lambda(fn)]);
/** aggregate(c, initial, (acc, x) => merged[, (acc) => finished]): a fold over the elements. */
export const aggregate = (c: Column | string, initial: ColumnOrLiteral, merge: (acc: Column, x: Column) => Column, finish?: (acc: Column) => Column): Column =>
  call('aggregate', [toColumn(c).expr, lit(initial).expr, lambda(merge, 2), ...(finish === undefined ? [] : [lambda(finish, 1)])]);
export const zip_with = (a: Column | string, b: Column | string, fn: (x: Column, y: Column) => Column): Column => call('zip_with', [toColumn(a).expr, toColumn(b).expr, lambda(fn, 2)]);
export const map_filter = (c: Column | string, fn: (k: Column, v: Column) => Column): Column => call('map_filter', [toColumn(c).expr, lambda(fn, 2)]);
export const transform_keys = (c: Column | string, fn: (k: Column, v: Column) => Column): Column => call('transform_keys', [toColumn(c).expr, lambda(fn, 2)]);
export const transform_values = (c: Column | string, fn: (k: Column, v: Column) => Column): Column => call('transform_values', [toColumn(c).expr, lambda(fn, 2)]);

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
  return call('named_struct', namesAndValues.map((x, i) => (i % 2 === 0 ? text(x as string) : toColumn(x).expr)));
}

const generator = (fn: GeneratorName) => (c: Column | string): Column => call(fn, [toColumn(c).expr]);
/** explode(c): a row per element of an array (column `col`) or entry of a map (`key`, `value`); a select item only. */
export const explode = generator('explode');
/** As explode, with one row of nulls for an empty or null array or map. */
export const explode_outer = generator('explode_outer');
/** As explode, with the element's 0-based position first (`pos`). */
export const posexplode = generator('posexplode');
export const posexplode_outer = generator('posexplode_outer');
/** inline(array of structs): a row per struct, its fields as columns. */
export const inline = generator('inline');
export const inline_outer = generator('inline_outer');

// ---------------------------------------------------------------------------------------------
// Dates and times (session time zone UTC; patterns are Spark's datetime patterns)

const dt = (fn: DatetimeFunctionName) => (c: Column | string): Column => call(fn, [toColumn(c).expr]);
const dtWithInt = (fn: DatetimeFunctionName) => (c: Column | string, n: number | Column): Column => call(fn, [toColumn(c).expr, lit(n).expr]);

/** to_timestamp(c[, pattern]): text as a TIMESTAMP (as CAST without a pattern); null if it does not parse. */
export const to_timestamp = (c: Column | string, pattern?: string): Column => call('to_timestamp', [toColumn(c).expr, ...(pattern === undefined ? [] : [text(pattern)])]);
export const to_date = (c: Column | string, pattern?: string): Column => call('to_date', [toColumn(c).expr, ...(pattern === undefined ? [] : [text(pattern)])]);
export const date_format = (c: Column | string, pattern: string): Column => call('date_format', [toColumn(c).expr, text(pattern)]);
export const from_unixtime = (c: Column | string, pattern = 'yyyy-MM-dd HH:mm:ss'): Column => call('from_unixtime', [toColumn(c).expr, text(pattern)]);
export const unix_timestamp = (c: Column | string, pattern = 'yyyy-MM-dd HH:mm:ss'): Column => call('unix_timestamp', [toColumn(c).expr, text(pattern)]);
export const date_add = dtWithInt('date_add');
export const date_sub = dtWithInt('date_sub');
export const datediff = (end: Column | string, start: Column | string): Column => call('datediff', cols([end, start]));
export const add_months = dtWithInt('add_months');
export const months_between = (a: Column | string, b: Column | string, roundOff = true): Column => call('months_between', [...cols([a, b]), lit(roundOff).expr]);
export const year = dt('year');
export const quarter = dt('quarter');
export const month = dt('month');
export const dayofmonth = dt('dayofmonth');
export const dayofweek = dt('dayofweek');
export const weekday = dt('weekday');
export const dayofyear = dt('dayofyear');
export const weekofyear = dt('weekofyear');
export const hour = dt('hour');
export const minute = dt('minute');
export const second = dt('second');
/** date_trunc(unit, ts): 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond'. */
export const date_trunc = (unit: string, c: Column | string): Column => call('date_trunc', [text(unit), toColumn(c).expr]);
export const trunc = (c: Column | string, unit: string): Column => call('trunc', [toColumn(c).expr, text(unit)]);
export const last_day = dt('last_day');
export const next_day = (c: Column | string, dayOfWeek: string): Column => call('next_day', [toColumn(c).expr, text(dayOfWeek)]);
export const make_timestamp = (...cs: Array<Column | string>): Column => call('make_timestamp', cols(cs));
export const make_date = (y: Column | string, m: Column | string, d: Column | string): Column => call('make_date', cols([y, m, d]));
export const timestamp_seconds = dt('timestamp_seconds');
export const timestamp_millis = dt('timestamp_millis');
export const unix_seconds = dt('unix_seconds');
export const unix_millis = dt('unix_millis');
export const unix_date = dt('unix_date');
export const date_from_unix_date = dt('date_from_unix_date');
/** window_time(window): the event time of a window of a windowed aggregation (its end less 1 ms). */
export const window_time = dt('window_time');
export const from_utc_timestamp = (c: Column | string, zone: string): Column => call('from_utc_timestamp', [toColumn(c).expr, text(zone)]);
export const to_utc_timestamp = (c: Column | string, zone: string): Column => call('to_utc_timestamp', [toColumn(c).expr, text(zone)]);
/** current_timestamp(): the batch's timestamp, the same for every row of a batch and again when a batch is replayed. */
export const current_timestamp = (): Column => call('current_timestamp', []);
export const now = current_timestamp;
export const current_date = (): Column => call('current_date', []);

// ---------------------------------------------------------------------------------------------
// JSON

/** A schema argument: DDL text ('a INT, b ARRAY<STRING>'), or a schema object or field list as session.readStream.schema takes. */
const schemaText = (schema: string | Record<string, string | object> | Schema): Expr =>
  text(typeof schema === 'string' ? schema : schemaToDDL(parseSchema(schema, 'from_json schema')));
const optionsMap = (options: Record<string, string>): Expr[] =>
  Object.keys(options).length === 0 ? [] : [call('map', Object.entries(options).flatMap(([k, v]) => [text(k), text(String(v))])).expr];

/** from_json(c, schema[, { mode }]): JSON text as a struct (or the ARRAY or MAP type given); PERMISSIVE (default) or FAILFAST. */
export const from_json = (c: Column | string, schema: string | Record<string, string | object> | Schema, options: Record<string, string> = {}): Column =>
  call('from_json', [toColumn(c).expr, schemaText(schema), ...optionsMap(options)]);
export const to_json = (c: Column | string): Column => call('to_json', [toColumn(c).expr]);
/** get_json_object(c, path): the value at a JSONPath ('$.a.b[0]') as text. */
export const get_json_object = (c: Column | string, path: string): Column => call('get_json_object', [toColumn(c).expr, text(path)]);
export const json_array_length = (c: Column | string): Column => call('json_array_length', [toColumn(c).expr]);
export const json_object_keys = (c: Column | string): Column => call('json_object_keys', [toColumn(c).expr]);
/** schema_of_json(json): the DDL of the type Spark infers for a JSON text. */
export const schema_of_json = (json: string | Column): Column => call('schema_of_json', [text(json)]);
/** json_tuple(c, ...fields): a generator giving one row whose columns c0, c1, ... are the fields' values as text. */
export const json_tuple = (c: Column | string, ...fields: string[]): Column => new Column(jsonTuple(toColumn(c).expr, fields.map(text)));

/**
 * A user function that each worker imports itself: `moduleUrl` is a URL (file:, data:) or a file
 * path (resolved against the current directory), and `exportName` a synchronous function of that
 * module. Arguments arrive as JavaScript values (TIMESTAMP as Date, SQL null as null); the result
 * must be of `returnType` ('double', 'string', 'timestamp', 'struct<a: int>', ...; undefined is
 * null), else UDF_RESULT_TYPE_MISMATCH. What it throws fails the query with UDF_FAILED.
 *
 *   const double = udf(new URL('./udfs.mjs', import.meta.url), 'double', 'double');
 *   df.select(double('value').alias('twice'));
 */
export function udf(
  moduleUrl: string | URL,
  exportName: string,
  returnType: string | DataType,
): (...cols: Array<Column | string>) => Column {
  if (typeof exportName !== 'string' || exportName === '') {
    throw new SluiceError('INVALID_EXPRESSION', `udf needs the name of an exported function, got ${String(exportName)}`);
  }
  const url = moduleHref(moduleUrl);
  const type = typeof returnType === 'string' ? parseDataType(returnType) : returnType;
  return (...cols) =>
    new Column({ op: 'udf', moduleUrl: url, exportName, returnType: type, args: cols.map((c) => toColumn(c).expr) });
}

/** A stateful processor (a class, or a function for flatMapGroupsWithState) exported by a module every worker imports. */
export interface StatefulProcessorRef {
  readonly kind: 'statefulProcessor';
  readonly moduleUrl: string;
  readonly exportName: string;
}

/**
 * The processor of `groupBy(...).transformWithState` (a class with init, handleInputRows, and
 * optionally handleExpiredTimer, handleInitialState and close), or the function of
 * flatMapGroupsWithState and mapGroupsWithState: export `exportName` of the module at `moduleUrl`,
 * which every worker imports once, as udf modules are.
 *
 *   const counter = statefulProcessor(new URL('./counter.mjs', import.meta.url), 'Counter');
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

export const ceiling = ceil;
export const ln = unaryMath('ln');
export const power = pow;
export const sign = signum;
export const chr = one('chr');
export const char = chr;
export const len = length;
export const char_length = length;
export const character_length = length;
export const ucase = upper;
export const lcase = lower;
export const substr = substring;
export const day = dayofmonth;
export const date_diff = datediff;
export const to_unix_timestamp = unix_timestamp;
export const curdate = current_date;
export const isnull = (c: Column | string): Column => toColumn(c).isNull();
export const isnotnull = (c: Column | string): Column => toColumn(c).isNotNull();
export const like = (c: Column | string, pattern: string): Column => toColumn(c).like(pattern);
export const ilike = (c: Column | string, pattern: string): Column => toColumn(c).ilike(pattern);
export const rlike = (c: Column | string, pattern: string): Column => toColumn(c).rlike(pattern);
export const regexp_like = rlike;
/** nvl(a, b) and ifnull(a, b): a unless it is null, then b. */
export const nvl = (a: Column | string, b: ColumnOrLiteral): Column => call('coalesce', [toColumn(a).expr, lit(b).expr]);
export const ifnull = nvl;
/** nvl2(x, a, b): a when x is not null, else b. */
export const nvl2 = (x: Column | string, a: ColumnOrLiteral, b: ColumnOrLiteral): Column => when(toColumn(x).isNotNull(), a).otherwise(b);
/** nullif(a, b): null when a = b, else a. */
export const nullif = (a: Column | string, b: ColumnOrLiteral): Column => when(toColumn(a).equalTo(lit(b)), null).otherwise(toColumn(a));
/** make_interval(years, months, weeks, days, hours, mins, secs): an INTERVAL, for timestamp arithmetic (ts.plus(make_interval(0, 0, 0, 1))). */
export const make_interval = (...parts: Array<Column | string | number>): Column => call('make_interval', parts.map((p) => lit(p).expr));
export const negative = (c: Column | string): Column => toColumn(c).negate();
export const positive = (c: Column | string): Column => toColumn(c);
export const mod = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).mod(b);
export const dateadd = date_add;
export const startswith = (c: Column | string, prefix: ColumnOrLiteral): Column => toColumn(c).startsWith(prefix);
export const endswith = (c: Column | string, suffix: ColumnOrLiteral): Column => toColumn(c).endsWith(suffix);
export const contains = (c: Column | string, part: ColumnOrLiteral): Column => toColumn(c).contains(part);
/** bitwise_not(c): ~c. */
export const bitwise_not = (c: Column | string): Column => new Column({ op: 'unary', fn: 'bitwiseNot', expr: toColumn(c).expr });
export const shiftleft = (c: Column | string, n: number): Column => call('shiftleft', [toColumn(c).expr, int(n, 'shiftleft', 'n')]);
export const shiftright = (c: Column | string, n: number): Column => call('shiftright', [toColumn(c).expr, int(n, 'shiftright', 'n')]);
export const shiftrightunsigned = (c: Column | string, n: number): Column => call('shiftrightunsigned', [toColumn(c).expr, int(n, 'shiftrightunsigned', 'n')]);
export const bit_count = (c: Column | string): Column => call('bit_count', [toColumn(c).expr]);
export const bit_get = (c: Column | string, pos: number | Column): Column => call('bit_get', [toColumn(c).expr, lit(pos).expr]);
export const elt = (n: Column | string | number, ...cs: Array<Column | string>): Column => call('elt', [lit(n).expr, ...cs.map((c) => toColumn(c).expr)]);
export const find_in_set = (c: Column | string, list: Column | string): Column => call('find_in_set', [toColumn(c).expr, toColumn(list).expr]);
export const soundex = one('soundex' as StringFunctionName);
export const btrim = (c: Column | string, chars?: string): Column => call('btrim', [toColumn(c).expr, ...(chars === undefined ? [] : [text(chars)])]);
export const position = (substr: string | Column, c: Column | string, pos = 1): Column => call('position', [text(substr), toColumn(c).expr, int(pos, 'position', 'pos')]);
export const octet_length = one('octet_length' as StringFunctionName);
export const bit_length = one('bit_length' as StringFunctionName);
export const url_encode = one('url_encode' as StringFunctionName);
export const url_decode = one('url_decode' as StringFunctionName);
/** parse_url(url, part[, key]): 'HOST', 'PATH', 'QUERY' (with a key, that parameter), 'REF', 'PROTOCOL', 'FILE', 'AUTHORITY', 'USERINFO'. */
export const parse_url = (c: Column | string, part: string, key?: string): Column => call('parse_url', [toColumn(c).expr, text(part), ...(key === undefined ? [] : [text(key)])]);
export const arrays_zip = (...cs: Array<Column | string>): Column => call('arrays_zip', cs.map((c) => toColumn(c).expr));
export const array_insert = (c: Column | string, pos: number | Column, value: ColumnOrLiteral): Column => call('array_insert', [toColumn(c).expr, lit(pos).expr, lit(value).expr]);
export const try_add = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).plus(b);
export const try_subtract = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).minus(b);
export const try_multiply = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).multiply(b);
export const try_divide = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).divide(b);
export const try_element_at = element_at;
export const try_to_timestamp = to_timestamp;
/** equal_null(a, b): a <=> b. */
export const equal_null = (a: Column | string, b: ColumnOrLiteral): Column => toColumn(a).eqNullSafe(b);
