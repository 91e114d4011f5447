/**
 * String functions with Spark's semantics where they differ from JavaScript's: lengths and
 * positions count code points, and trim removes spaces only.
 */

/** Characters as Spark counts them: code points, so an emoji is one character, not two. */
function hasSurrogates(s: string): boolean {
  return /[\uD800-\uDFFF]/.test(s);
}

export function codePointLength(s: string): number {
  if (!hasSurrogates(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Spark's substring: 1-based `pos`; 0 means 1; a negative pos counts from the end; the result is
 * the characters in [start, start + len) clipped to the string, so substring('abc', -5, 3) is ''.
 */
export function sparkSubstring(s: string, pos: number, len: number): string {
  const chars = hasSurrogates(s) ? Array.from(s) : null;
  const n = chars === null ? s.length : chars.length;
  const start = pos > 0 ? pos - 1 : pos < 0 ? n + pos : 0;
  const end = Math.min(start + len, n);
  const from = Math.max(start, 0);
  if (from >= end) return '';
  return chars === null ? s.slice(from, end) : chars.slice(from, end).join('');
}

/** Spark's trim removes spaces (U+0020) only, not tabs or newlines. */
export function trimSpaces(s: string): string {
  let i = 0;
  let j = s.length;
  while (i < j && s.charCodeAt(i) === 32) i++;
  while (j > i && s.charCodeAt(j - 1) === 32) j--;
  return i === 0 && j === s.length ? s : s.slice(i, j);
}
