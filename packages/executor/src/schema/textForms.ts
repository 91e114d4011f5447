/**
 * Spark's text forms of values: a timestamp and a DOUBLE printed, and text parsed as an INT or
 * LONG, a DOUBLE or a BOOLEAN; with the saturating conversion of a DOUBLE to an integral type
 * that the casts use (values.ts).
 */

/** The range of a JS Date, in ms. */
export const MAX_TIMESTAMP_MS = 8.64e15;

/** ISO-8601 UTC text of epoch ms ('2024-01-01T00:00:00.000Z'); null outside a Date's range. */
export function formatTimestamp(ms: number): string | null {
  return Math.abs(ms) <= MAX_TIMESTAMP_MS ? new Date(ms).toISOString() : null;
}

/**
 * A DOUBLE as Spark (Java's Double.toString) prints it: 1.0, 0.001, 1.0E7, 1.5E-4, NaN, Infinity.
 * A double that happens to be integral keeps its ".0" so that casting to string is type-faithful.
 */
export function formatDouble(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(x);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa = '', exponent = '0'] = x.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

const INTEGRAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const DOUBLE_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[dDfF]?$/;

/** Spark's string → INT/LONG: surrounding whitespace ignored, a fraction truncated, no exponent. */
export function parseIntegral(text: string, min: number, max: number): number | null {
  const s = text.trim();
  if (!INTEGRAL_RE.test(s)) return null;
  const v = Math.trunc(Number(s));
  return v < min || v > max ? null : v === 0 ? 0 : v;
}

/** Spark's string → DOUBLE: Java's parseDouble, plus 'inf', 'infinity' and 'nan' in any case. */
export function parseDouble(text: string): number | null {
  const s = text.trim();
  if (DOUBLE_RE.test(s)) return Number(/[dDfF]$/.test(s) ? s.slice(0, -1) : s);
  const lower = s.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === 'inf' || lower === 'infinity' || lower === '+inf' || lower === '+infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  return null;
}

const TRUE_STRINGS = new Set(['t', 'true', 'y', 'yes', '1']);
const FALSE_STRINGS = new Set(['f', 'false', 'n', 'no', '0']);

/** Spark's string → BOOLEAN: t/true/y/yes/1 and f/false/n/no/0, any case; anything else is null. */
export function parseBoolean(text: string): boolean | null {
  const s = text.trim().toLowerCase();
  return TRUE_STRINGS.has(s) ? true : FALSE_STRINGS.has(s) ? false : null;
}

/** Java's saturating double → integral conversion, which Spark's non-ANSI cast uses (NaN → 0). */
export function saturate(x: number, min: number, max: number): number {
  if (Number.isNaN(x)) return 0;
  const v = Math.trunc(x);
  return v < min ? min : v > max ? max : v === 0 ? 0 : v;
}
