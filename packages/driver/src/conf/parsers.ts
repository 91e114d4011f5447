import { SluiceError } from '@sluice/state';

/**
 * Parsers for user-supplied option values. Each one either returns a canonical value or throws
 * SluiceError 'INVALID_OPTION' naming the option, so options are validated eagerly, in one style:
 * "options.maxFilesPerTrigger must be a positive integer (got 0)".
 *
 * `option` is the option's name ('maxFileAge'); it is shown as `options.maxFileAge`. A name that
 * already contains a dot or a parenthesis ('Trigger.ProcessingTime') is shown as given.
 */

function label(option: string): string {
  return /[.(]/.test(option) ? option : `options.${option}`;
}

function show(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) {
    return String(v);
  }
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function invalid(option: string, what: string, v: unknown): SluiceError {
  return new SluiceError('INVALID_OPTION', `${label(option)} must be ${what} (got ${show(v)})`, {
    option,
  });
}

const MS_PER_UNIT: ReadonlyMap<string, number> = (() => {
  const second = 1000;
  const minute = 60 * second;
  const hour = 60 * minute;
  const day = 24 * hour;
  const week = 7 * day;
  const m = new Map<string, number>();
  const add = (ms: number, ...names: string[]): void => {
    for (const n of names) m.set(n, ms);
  };
  add(1, 'ms', 'msec', 'msecs', 'milli', 'millis', 'millisecond', 'milliseconds');
  add(second, 's', 'sec', 'secs', 'second', 'seconds');
  add(minute, 'm', 'min', 'mins', 'minute', 'minutes');
  add(hour, 'h', 'hr', 'hrs', 'hour', 'hours');
  add(day, 'd', 'day', 'days');
  add(week, 'w', 'week', 'weeks');
  return m;
})();

// One "<number> <unit>" term; the space is optional so Spark's '10s' and '5min' parse too.
const DURATION_TERM = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]+)/;

/**
 * A duration in milliseconds. Accepts a non-negative number (milliseconds), a numeric string
 * (milliseconds), or Spark interval strings: '10 minutes', 'interval 5 minutes',
 * '1 minute 30 seconds', '50ms', '2h', '7 days'. Months and years are rejected: they have no fixed
 * length. The result is rounded to a whole millisecond.
 */
export function parseDuration(v: string | number, option: string): number {
  const fail = (): SluiceError => invalid(option, "a duration such as '10 minutes'", v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) throw fail();
    return Math.round(v);
  }
  if (typeof v !== 'string') throw fail();
  let s = v.trim().toLowerCase();
  if (/^\d+(?:\.\d+)?$/.test(s)) return Math.round(Number(s));
  s = s.replace(/^interval\s+/, '');
  if (s === '') throw fail();
  let total = 0;
  while (s !== '') {
    const m = DURATION_TERM.exec(s);
    if (m === null) throw fail();
    const unitMs = MS_PER_UNIT.get(m[2] as string);
    if (unitMs === undefined) throw fail();
    total += Number(m[1]) * unitMs;
    s = s.slice(m[0].length).trimStart();
  }
  if (!Number.isFinite(total) || total > Number.MAX_SAFE_INTEGER) throw fail();
  return Math.round(total);
}

const BYTES_PER_UNIT: ReadonlyMap<string, number> = new Map([
  ['', 1],
  ['b', 1],
  ['k', 1024],
  ['kb', 1024],
  ['m', 1024 ** 2],
  ['mb', 1024 ** 2],
  ['g', 1024 ** 3],
  ['gb', 1024 ** 3],
  ['t', 1024 ** 4],
  ['tb', 1024 ** 4],
  ['p', 1024 ** 5],
  ['pb', 1024 ** 5],
]);

/**
 * A positive byte count. Accepts a number (bytes) or a string such as '10g', '512m', '1k', '3b',
 * '10gb', '1.5g'. Units are 1024-based, as in Spark's byte strings. Fractions are floored to a
 * whole byte; a result below one byte is rejected.
 */
export function parseBytes(v: string | number, option: string): number {
  const fail = (): SluiceError => invalid(option, "a positive size such as '512m' or '10g'", v);
  let bytes: number;
  if (typeof v === 'number') {
    bytes = v;
  } else if (typeof v === 'string') {
    const m = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)$/.exec(v.trim().toLowerCase());
    if (m === null) throw fail();
    const mult = BYTES_PER_UNIT.get(m[2] as string);
    if (mult === undefined) throw fail();
    bytes = Number(m[1]) * mult;
  } else {
    throw fail();
  }
  if (!Number.isFinite(bytes)) throw fail();
  bytes = Math.floor(bytes);
  if (bytes < 1 || bytes > Number.MAX_SAFE_INTEGER) throw fail();
  return bytes;
}

/** A positive safe integer, given as a number or a decimal string ('10'). */
export function parsePositiveInt(v: unknown, option: string): number {
  let n: number = Number.NaN;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\s*\+?\d+\s*$/.test(v)) n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw invalid(option, 'a positive integer', v);
  return n;
}

/** true/false, or the strings 'true'/'false' in any case (Spark option values are strings). */
export function parseBoolean(v: unknown, option: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  throw invalid(option, 'true or false', v);
}

/** One of `allowed`, matched case-insensitively; returns the spelling in `allowed`. */
export function parseEnum<T extends string>(v: unknown, allowed: readonly T[], option: string): T {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    const hit = allowed.find((a) => a.toLowerCase() === s);
    if (hit !== undefined) return hit;
  }
  throw invalid(option, `one of ${allowed.join(', ')}`, v);
}
