/**
 * The string functions: Spark's names and argument orders; literals as Spark's functions take them.
 */
import type { StringFunctionName } from '@sluice/executor';
import { Column, lit, toColumn } from '../Column.js';
import { datePart } from '../sql/sqlFunctions.js';
import { call, int, one, text } from './args.js';

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
