/**
 * What the string functions (stringFunctions.ts) share: a string's code points, Soundex, a URL's
 * parts, edit distance, padding, regular expressions (compiled once per text) and LIKE patterns
 * as regular expressions, digests, and positions in code points.
 */
import { createHash } from 'node:crypto';
import { SluiceError } from '@sluice/state';
import { codePointLength } from './sparkStrings.js';

type S = string;
type N = number;

export const chars = (s: S): S[] => Array.from(s);

/** American Soundex: the first letter, then the codes of the next consonants, repeats and vowels between them dropped, padded to 4. */
export function soundex(s: S): S {
  const codes: Record<string, string> = {
    B: '1',
    F: '1',
    P: '1',
    V: '1',
    C: '2',
    G: '2',
    J: '2',
    K: '2',
    Q: '2',
    S: '2',
    X: '2',
    Z: '2',
    D: '3',
    T: '3',
    L: '4',
    M: '5',
    N: '5',
    R: '6',
  };
  const up = s.toUpperCase();
  if (!/^[A-Z]/.test(up)) return s;
  let out = up[0]!;
  let last = codes[up[0]!] ?? '';
  for (const c of up.slice(1)) {
    if (out.length === 4) break;
    const code = codes[c];
    if (code === undefined) {
      // H and W do not separate equal codes; vowels do.
      if (c !== 'H' && c !== 'W') last = '';
      continue;
    }
    if (code !== last) out += code;
    last = code;
  }
  return out.padEnd(4, '0');
}

/** Java's URL parts, as parse_url returns them. */
export function parseUrlPart(u: S, part: S, key: S | undefined): S | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/(?:([^@/?#]*)@)?([^/?#:]*)(?::(\d+))?)?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(u);
  if (m === null) return null;
  const [, protocol, userinfo, host, port, path, query, ref] = m;
  switch (part) {
    case 'HOST':
      return host || null;
    case 'PATH':
      return path ?? '';
    case 'QUERY':
      if (query === undefined) return null;
      if (key === undefined) return query;
      return new RegExp(`(?:^|&)${key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}=([^&]*)`).exec(query)?.[1] ?? null;
    case 'REF':
      return ref ?? null;
    case 'PROTOCOL':
      return protocol ?? null;
    case 'FILE':
      return query === undefined ? (path ?? '') : `${path ?? ''}?${query}`;
    case 'AUTHORITY':
      return host === undefined ? null : `${userinfo ? `${userinfo}@` : ''}${host}${port ? `:${port}` : ''}`;
    case 'USERINFO':
      return userinfo ?? null;
    default:
      return null;
  }
}

export function editDistance(a: S[], b: S[]): N {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** Pads `s` to `len` characters with `pad` repeated, on the left or the right; longer strings are cut to `len`. */
export function padTo(s: S, len: N, pad: S, left: boolean): S {
  const cs = chars(s);
  if (len <= cs.length) return cs.slice(0, Math.max(len, 0)).join('');
  const p = chars(pad);
  if (p.length === 0) return s;
  const fill: S[] = [];
  for (let i = 0; fill.length < len - cs.length; i++) fill.push(p[i % p.length] as S);
  return left ? fill.join('') + s : s + fill.join('');
}

/** Compiled patterns, by their text (a query's patterns are few and usually literal). */
const patterns = new Map<string, RegExp>();
export function regex(pattern: S, flags = ''): RegExp {
  const key = `${flags}/${pattern}`;
  let re = patterns.get(key);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, flags);
    } catch (e) {
      throw new SluiceError('INVALID_EXPRESSION', `invalid regular expression '${pattern}': ${(e as Error).message}`);
    }
    if (patterns.size >= 256) patterns.clear();
    patterns.set(key, re);
  }
  re.lastIndex = 0;
  return re;
}

/** SQL LIKE: `_` one character, `%` any run, `\` escapes the next character; the whole string must match. */
export function likePattern(p: S): S {
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as S;
    if (c === '\\' && i + 1 < p.length) out += (p[++i] as S).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '%') out += '[\\s\\S]*';
    else if (c === '_') out += '[\\s\\S]';
    else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return `^${out}$`;
}

export const hash = (algorithm: string) => (s: unknown) =>
  createHash(algorithm)
    .update(s as S, 'utf8')
    .digest('hex');

/** Position (1-based, in code points) of `sub` in `s` at or after code point `from`; 0 if absent. */
export function position(s: S, sub: S, from: N): N {
  const cs = chars(s);
  const start = Math.max(from - 1, 0);
  const unit = cs.slice(0, start).join('').length;
  const at = s.indexOf(sub, unit);
  return at < 0 ? 0 : codePointLength(s.slice(0, at)) + 1;
}
