/**
 * Spark's other names for the functions of api/functions/, and the conditionals SQL text has.
 */
import type { StringFunctionName } from '@sluice/executor';
import { Column, lit, toColumn, type ColumnOrLiteral } from '../Column.js';
import { call, int, one, text, unaryMath } from './args.js';
import { element_at } from './collections.js';
import { when } from './columns.js';
import { current_date, date_add, datediff, dayofmonth, to_timestamp, unix_timestamp } from './datetime.js';
import { ceil, pow, signum } from './math.js';
import { length, lower, substring, upper } from './strings.js';

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
