/**
 * Arrays, maps and structs, the higher-order functions over them (of JavaScript functions of
 * Columns), and the generators (explode, posexplode, inline).
 */
import type { CollectionFunctionName, Expr, GeneratorName } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, lit, toColumn, type ColumnOrLiteral } from '../Column.js';
import { call, cols, int, text, value } from './args.js';

const oneCol =
  (fn: CollectionFunctionName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);

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
