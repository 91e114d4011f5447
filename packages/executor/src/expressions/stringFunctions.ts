/**
 * Spark's string functions (non-ANSI mode), as ScalarFunction entries: arguments are cast to
 * STRING or INT as Spark's implicit casts do (upper(42) is '42'), positions are 1-based and count
 * code points, and a null argument gives null unless the entry says otherwise (`concat_ws` skips
 * null strings). Regular expressions are JavaScript's, which agree with Java's for the common
 * syntax (classes, groups, quantifiers, anchors, `$1` in replacements); Java's inline flags such
 * as `(?i)` are not supported. The helpers the entries share are stringHelpers.ts's.
 */
import { crc32 } from 'node:zlib';
import { SluiceError } from '@sluice/state';
import type { DataType } from '../schema/types.js';
import type { ScalarFunction } from './mathFunctions.js';
import { numberLike } from './mathFunctions.js';
import { sparkSubstring } from './sparkStrings.js';
import { chars, editDistance, hash, likePattern, padTo, parseUrlPart, position, regex, soundex } from './stringHelpers.js';
import { typeName } from '../schema/values.js';

export type StringFunctionName =
  | 'concat_ws'
  | 'instr'
  | 'locate'
  | 'lpad'
  | 'rpad'
  | 'ltrim'
  | 'rtrim'
  | 'replace'
  | 'translate'
  | 'initcap'
  | 'reverse'
  | 'repeat'
  | 'substring_index'
  | 'split_part'
  | 'left'
  | 'right'
  | 'ascii'
  | 'chr'
  | 'md5'
  | 'sha1'
  | 'sha2'
  | 'crc32'
  | 'base64'
  | 'hex'
  | 'regexp_extract'
  | 'regexp_replace'
  | 'rlike'
  | 'like'
  | 'regexp_extract_all'
  | 'regexp_count'
  | 'levenshtein'
  | 'startswith'
  | 'endswith'
  | 'contains'
  | 'elt'
  | 'find_in_set'
  | 'soundex'
  | 'btrim'
  | 'position'
  | 'octet_length'
  | 'bit_length'
  | 'url_encode'
  | 'url_decode'
  | 'parse_url';

type S = string;
type N = number;

const atomic = (t: DataType): boolean => typeof t === 'string';

/**
 * Arguments cast by `kinds` ('s' STRING, 'i' INT; the last kind repeats for further arguments),
 * giving `result`.
 */
function sig(result: DataType, ...kinds: Array<'s' | 'i'>) {
  return (args: DataType[]): { args: DataType[]; result: DataType } | string => {
    const cast = args.map((_, i): DataType => ((kinds[Math.min(i, kinds.length - 1)] ?? 's') === 'i' ? 'int' : 'string'));
    const bad = args.findIndex((t, i) => !atomic(t) || (cast[i] === 'int' && !numberLike(t)));
    return bad < 0 ? { args: cast, result } : `argument ${bad + 1} cannot be ${typeName(args[bad] as DataType)}`;
  };
}

export const STRING_FUNCTIONS: Record<StringFunctionName, ScalarFunction> = {
  /** concat_ws(sep, s...): the non-null strings joined by sep; null only when sep is. */
  concat_ws: {
    arity: [1, Infinity],
    types: sig('string', 's'),
    nulls: true,
    value: (sep, ...xs) => (sep == null ? null : xs.filter((x) => x != null).join(sep as S)),
  },
  /** instr(s, sub): 1-based position of sub in s, 0 if absent. */
  instr: { arity: [2, 2], types: sig('int', 's'), value: (s, sub) => position(s as S, sub as S, 1) },
  /** locate(sub, s[, pos]): 1-based position of sub in s at or after pos; 0 if absent or pos < 1. */
  locate: {
    arity: [2, 3],
    types: sig('int', 's', 's', 'i'),
    value: (sub, s, pos = 1) => ((pos as N) < 1 ? 0 : position(s as S, sub as S, pos as N)),
  },
  lpad: { arity: [2, 3], types: sig('string', 's', 'i', 's'), value: (s, len, pad = ' ') => padTo(s as S, len as N, pad as S, true) },
  rpad: { arity: [2, 3], types: sig('string', 's', 'i', 's'), value: (s, len, pad = ' ') => padTo(s as S, len as N, pad as S, false) },
  ltrim: { arity: [1, 1], types: sig('string', 's'), value: (s) => (s as S).replace(/^ +/, '') },
  rtrim: { arity: [1, 1], types: sig('string', 's'), value: (s) => (s as S).replace(/ +$/, '') },
  /** replace(s, search[, with]): every occurrence of search replaced (removed without `with`). */
  replace: {
    arity: [2, 3],
    types: sig('string', 's'),
    value: (s, search, by = '') => ((search as S) === '' ? s : (s as S).split(search as S).join(by as S)),
  },
  /** translate(s, from, to): each character of from becomes the one at its place in to, or goes. */
  translate: {
    arity: [3, 3],
    types: sig('string', 's'),
    value: (s, from, to) => {
      const f = chars(from as S);
      const t = chars(to as S);
      const map = new Map<S, S>();
      f.forEach((c, i) => {
        if (!map.has(c)) map.set(c, t[i] ?? '');
      });
      return chars(s as S)
        .map((c) => map.get(c) ?? c)
        .join('');
    },
  },
  /** initcap(s): each word's first letter upper case, the rest lower case (words split at spaces). */
  initcap: {
    arity: [1, 1],
    types: sig('string', 's'),
    value: (s) =>
      (s as S)
        .split(' ')
        .map((w) => (w === '' ? w : chars(w)[0]!.toUpperCase() + chars(w).slice(1).join('').toLowerCase()))
        .join(' '),
  },
  /** reverse(s), and reverse(array): its elements in reverse order. */
  reverse: {
    arity: [1, 1],
    types: (args) => (typeof args[0] === 'object' && 'array' in args[0] ? { args, result: args[0] } : sig('string', 's')(args)),
    value: (x) =>
      Array.isArray(x)
        ? [...x].reverse()
        : chars(x as S)
            .reverse()
            .join(''),
  },
  repeat: { arity: [2, 2], types: sig('string', 's', 'i'), value: (s, n) => (s as S).repeat(Math.max(n as N, 0)) },
  /** substring_index(s, delim, count): before the count-th delim (from the right for a negative count). */
  substring_index: {
    arity: [3, 3],
    types: sig('string', 's', 's', 'i'),
    value: (s, delim, count) => {
      const n = count as N;
      if (n === 0 || delim === '') return '';
      const parts = (s as S).split(delim as S);
      return n > 0 ? parts.slice(0, n).join(delim as S) : parts.slice(Math.max(parts.length + n, 0)).join(delim as S);
    },
  },
  /** split_part(s, delim, n): the n-th part (from the end for a negative n), '' past the end; n = 0 is an error in Spark. */
  split_part: {
    arity: [3, 3],
    types: sig('string', 's', 's', 'i'),
    value: (s, delim, n) => {
      const i = n as N;
      if (i === 0) throw new SluiceError('INVALID_EXPRESSION', 'split_part: the part index must not be 0');
      const parts = delim === '' ? [s as S] : (s as S).split(delim as S);
      return parts[i > 0 ? i - 1 : parts.length + i] ?? '';
    },
  },
  left: { arity: [2, 2], types: sig('string', 's', 'i'), value: (s, n) => ((n as N) <= 0 ? '' : sparkSubstring(s as S, 1, n as N)) },
  right: { arity: [2, 2], types: sig('string', 's', 'i'), value: (s, n) => ((n as N) <= 0 ? '' : sparkSubstring(s as S, -(n as N), n as N)) },
  /** ascii(s): the code of the first character, 0 for ''. */
  ascii: { arity: [1, 1], types: sig('int', 's'), value: (s) => (s as S).codePointAt(0) ?? 0 },
  /** chr(n) (and char): the character of code n % 256; '' for a negative n. */
  chr: {
    arity: [1, 1],
    types: (a) => (a.every(numberLike) ? { args: ['long'], result: 'string' } : 'needs a number'),
    value: (n) => ((n as N) < 0 ? '' : String.fromCharCode((n as N) % 256)),
  },
  md5: { arity: [1, 1], types: sig('string', 's'), value: hash('md5') },
  sha1: { arity: [1, 1], types: sig('string', 's'), value: hash('sha1') },
  /** sha2(s, bits): SHA-224/256/384/512 (0 is 256); null for other bit lengths. */
  sha2: {
    arity: [2, 2],
    types: sig('string', 's', 'i'),
    value: (s, bits) => {
      const b = (bits as N) === 0 ? 256 : (bits as N);
      return [224, 256, 384, 512].includes(b) ? hash(`sha${b}`)(s) : null;
    },
  },
  crc32: { arity: [1, 1], types: sig('long', 's'), value: (s) => crc32(s as S) },
  base64: { arity: [1, 1], types: sig('string', 's'), value: (s) => Buffer.from(s as S, 'utf8').toString('base64') },
  /** hex(x): a number's hexadecimal digits, or a string's bytes in hexadecimal (upper case). */
  hex: {
    arity: [1, 1],
    types: (a) => (a.every(atomic) ? { args: [a[0] === 'int' || a[0] === 'long' ? 'long' : 'string'], result: 'string' } : 'needs a number or a string'),
    value: (x) =>
      typeof x === 'number'
        ? (x < 0 ? (BigInt(x) + (1n << 64n)).toString(16) : x.toString(16)).toUpperCase()
        : Buffer.from(x as S, 'utf8')
            .toString('hex')
            .toUpperCase(),
  },
  /** regexp_extract(s, pattern[, idx]): group idx (1 by default) of the first match, '' without one. */
  /** regexp_extract_all(s, regex[, idx]): group idx (1 by default) of every match. */
  regexp_extract_all: {
    arity: [2, 3],
    types: (args) => {
      const typed = sig('string', 's', 's', 'i')(args);
      return typeof typed === 'string' ? typed : { args: typed.args, result: { array: 'string' } };
    },
    value: (s, pattern, idx = 1) => {
      const re = regex(pattern as S, 'g');
      const out: S[] = [];
      for (let m = re.exec(s as S); m !== null; m = re.exec(s as S)) {
        if ((idx as N) < 0 || (idx as N) >= m.length) {
          throw new SluiceError(
            'INVALID_EXPRESSION',
            `regexp_extract_all: group ${String(idx)} does not exist in '${String(pattern)}' (it has ${m.length - 1})`,
          );
        }
        out.push(m[idx as N] ?? '');
        if (m[0] === '') re.lastIndex++;
      }
      return out;
    },
  },
  /** regexp_count(s, regex): the number of matches. */
  regexp_count: {
    arity: [2, 2],
    types: sig('int', 's'),
    value: (s, pattern) => {
      const re = regex(pattern as S, 'g');
      let n = 0;
      for (let m = re.exec(s as S); m !== null; m = re.exec(s as S)) {
        n++;
        if (m[0] === '') re.lastIndex++;
      }
      return n;
    },
  },
  /** elt(n, s1, s2, ...): the n-th string (1-based); null out of range (Spark without ANSI). */
  elt: {
    arity: [2, Infinity],
    types: (args) => {
      const typed = sig('string', 'i', 's')(args);
      return typed;
    },
    nulls: true,
    value: (n, ...xs) => (n == null ? null : ((xs[(n as N) - 1] as S | undefined) ?? null)),
  },
  /** find_in_set(s, list): the 1-based position of s among list's comma-separated parts; 0 if absent or s has a comma. */
  find_in_set: { arity: [2, 2], types: sig('int', 's'), value: (s, list) => ((s as S).includes(',') ? 0 : (list as S).split(',').indexOf(s as S) + 1) },
  soundex: { arity: [1, 1], types: sig('string', 's'), value: (s) => soundex(s as S) },
  /** btrim(s[, chars]): the characters (spaces by default) removed from both ends. */
  btrim: {
    arity: [1, 2],
    types: sig('string', 's'),
    value: (s, set = ' ') => {
      const cs = chars(s as S);
      const drop = new Set(chars(set as S));
      let a = 0;
      let b = cs.length;
      while (a < b && drop.has(cs[a]!)) a++;
      while (b > a && drop.has(cs[b - 1]!)) b--;
      return cs.slice(a, b).join('');
    },
  },
  /** position(sub, s[, pos]): locate's other name. */
  position: {
    arity: [2, 3],
    types: sig('int', 's', 's', 'i'),
    value: (sub, s, pos = 1) => ((pos as N) < 1 ? 0 : position(s as S, sub as S, pos as N)),
  },
  octet_length: { arity: [1, 1], types: sig('int', 's'), value: (s) => Buffer.byteLength(s as S, 'utf8') },
  bit_length: { arity: [1, 1], types: sig('int', 's'), value: (s) => Buffer.byteLength(s as S, 'utf8') * 8 },
  /** url_encode(s): application/x-www-form-urlencoded, as Java's URLEncoder (a space is +). */
  url_encode: {
    arity: [1, 1],
    types: sig('string', 's'),
    value: (s) =>
      encodeURIComponent(s as S)
        .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
        .replace(/%20/g, '+'),
  },
  url_decode: {
    arity: [1, 1],
    types: sig('string', 's'),
    value: (s) => {
      try {
        return decodeURIComponent((s as S).replace(/\+/g, ' '));
      } catch {
        throw new SluiceError('INVALID_EXPRESSION', `[CANNOT_DECODE_URL] url_decode cannot decode '${String(s)}'`);
      }
    },
  },
  /** parse_url(url, part[, key]): HOST, PATH, QUERY (or one query key's value), REF, PROTOCOL, FILE, AUTHORITY or USERINFO; null if absent or not a URL. */
  parse_url: { arity: [2, 3], types: sig('string', 's'), value: (u, part, key) => parseUrlPart(u as S, part as S, key as S | undefined) },
  startswith: { arity: [2, 2], types: sig('boolean', 's'), value: (s, p) => (s as S).startsWith(p as S) },
  endswith: { arity: [2, 2], types: sig('boolean', 's'), value: (s, p) => (s as S).endsWith(p as S) },
  contains: { arity: [2, 2], types: sig('boolean', 's'), value: (s, p) => (s as S).includes(p as S) },
  /** levenshtein(a, b[, threshold]): the edit distance in code points; -1 past the threshold. */
  levenshtein: {
    arity: [2, 3],
    types: sig('int', 's', 's', 'i'),
    value: (a, b, threshold) => {
      const d = editDistance(chars(a as S), chars(b as S));
      return threshold !== undefined && d > (threshold as N) ? -1 : d;
    },
  },
  regexp_extract: {
    arity: [2, 3],
    types: sig('string', 's', 's', 'i'),
    value: (s, pattern, idx = 1) => {
      const m = regex(pattern as S).exec(s as S);
      if (m === null) return '';
      if ((idx as N) < 0 || (idx as N) >= m.length) {
        throw new SluiceError('INVALID_EXPRESSION', `regexp_extract: group ${String(idx)} does not exist in '${String(pattern)}' (it has ${m.length - 1})`);
      }
      return m[idx as N] ?? '';
    },
  },
  /** regexp_replace(s, pattern, replacement): every match replaced; `$1` names a group. */
  regexp_replace: { arity: [3, 3], types: sig('string', 's'), value: (s, pattern, by) => (s as S).replace(regex(pattern as S, 'g'), by as S) },
  /** rlike(s, pattern) (and regexp_like, s RLIKE p): whether the pattern matches somewhere in s. */
  rlike: { arity: [2, 2], types: sig('boolean', 's'), value: (s, pattern) => regex(pattern as S).test(s as S) },
  /** like(s, pattern) (and s LIKE p): the SQL pattern matches the whole of s. */
  like: { arity: [2, 2], types: sig('boolean', 's'), value: (s, pattern) => regex(likePattern(pattern as S)).test(s as S) },
};
