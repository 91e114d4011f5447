/**
 * The parsers of user-supplied values, shared by reader/writer options and the session conf, so
 * that one value means the same everywhere. Each returns a canonical value or throws a coded
 * error naming what it parsed, in one style:
 *   options: INVALID_OPTION, "options.maxFilesPerTrigger must be a positive integer (got 0)";
 *   conf:    INVALID_CONF,   "conf sluice.task.maxFailures must be a positive integer (got 0)".
 *
 * `name` is the option's name ('maxFileAge', shown as `options.maxFileAge`; a name that already
 * holds a dot or a parenthesis, 'Trigger.ProcessingTime', is shown as given) or the conf key.
 */
import { SluiceError } from '@sluice/state';

/** Where a value comes from: a reader/writer option or argument, or a conf key. */
export type ValueKind = 'option' | 'conf';

function label(name: string, kind: ValueKind): string {
  if (kind === 'conf') return `conf ${name}`;
  return /[.(]/.test(name) ? name : `options.${name}`;
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

function invalid(name: string, what: string, v: unknown, kind: ValueKind): SluiceError {
  return new SluiceError(kind === 'conf' ? 'INVALID_CONF' : 'INVALID_OPTION', `${label(name, kind)} must be ${what} (got ${show(v)})`, {
    option: name,
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
  add(0.001, 'us', 'usec', 'usecs', 'micro', 'micros', 'microsecond', 'microseconds');
  add(1, 'ms', 'msec', 'msecs', 'milli', 'millis', 'millisecond', 'milliseconds');
  add(second, 's', 'sec', 'secs', 'second', 'seconds');
  add(minute, 'm', 'min', 'mins', 'minute', 'minutes');
  add(hour, 'h', 'hr', 'hrs', 'hour', 'hours');
  add(day, 'd', 'day', 'days');
  add(week, 'w', 'week', 'weeks');
  return m;
})();

/** Spark's watermark delay counts a month as 31 days and a year as 12 months. */
const MONTH_MS = 31 * 24 * 3_600_000;
const MS_PER_CALENDAR_UNIT: ReadonlyMap<string, number> = new Map([
  ['mon', MONTH_MS],
  ['mons', MONTH_MS],
  ['month', MONTH_MS],
  ['months', MONTH_MS],
  ['y', 12 * MONTH_MS],
  ['yr', 12 * MONTH_MS],
  ['yrs', 12 * MONTH_MS],
  ['year', 12 * MONTH_MS],
  ['years', 12 * MONTH_MS],
]);

export interface DurationOptions {
  kind?: ValueKind;
  /**
   * Accept months and years, as Spark's withWatermark does (a month is 31 days). Elsewhere they
   * are refused, as in Spark's windows and triggers: they have no fixed length.
   */
  months?: boolean;
}

// One "<number> <unit>" term; the space is optional so Spark's '10s' and '5min' parse too.
const DURATION_TERM = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]+)/;

/**
 * A duration in milliseconds. Accepts a non-negative number (milliseconds), a numeric string
 * (milliseconds), or Spark interval strings: '10 minutes', 'interval 5 minutes',
 * '1 minute 30 seconds', '50ms', '2h', '7 days', and with `months` also '1 month', '2 years 5 months'.
 * The result is rounded to a whole millisecond.
 */
export function parseDuration(v: string | number, name: string, opts: DurationOptions = {}): number {
  const kind = opts.kind ?? 'option';
  const example = opts.months ? "'10 minutes' or '1 month'" : "'10 minutes'";
  const fail = (): SluiceError => invalid(name, `a duration such as ${example}`, v, kind);
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
    const unit = m[2] as string;
    const calendar = MS_PER_CALENDAR_UNIT.get(unit);
    if (calendar !== undefined && !opts.months) {
      throw invalid(name, 'a duration without months or years, which have no fixed length', v, kind);
    }
    const unitMs = calendar ?? MS_PER_UNIT.get(unit);
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
export function parseBytes(v: unknown, name: string, kind: ValueKind = 'option'): number {
  const fail = (): SluiceError => invalid(name, "a positive size such as '512m' or '10g'", v, kind);
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

/** An integer of at least `min`, given as a number or a decimal string ('10', not '1e3'). */
function parseInteger(v: unknown, min: number, what: string, name: string, kind: ValueKind): number {
  let n: number = Number.NaN;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\s*\+?\d+\s*$/.test(v)) n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw invalid(name, what, v, kind);
  return n;
}

/** A positive safe integer, given as a number or a decimal string ('10'). */
export function parsePositiveInt(v: unknown, name: string, kind: ValueKind = 'option'): number {
  return parseInteger(v, 1, 'a positive integer', name, kind);
}

/** A safe integer of at least 0, given as a number or a decimal string ('10'). */
export function parseNonNegativeInt(v: unknown, name: string, kind: ValueKind = 'option'): number {
  return parseInteger(v, 0, 'a non-negative integer', name, kind);
}

/** A finite number of at least 0, given as a number or a numeric string. */
export function parseNonNegativeNumber(v: unknown, name: string, kind: ValueKind = 'option'): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || n < 0) throw invalid(name, 'a non-negative number', v, kind);
  return n;
}

/** A positive integer, or `auto` (any case, spaces around it ignored). */
export function parsePositiveIntOrAuto(v: unknown, name: string, kind: ValueKind = 'option'): number | 'auto' {
  if (typeof v === 'string' && v.trim().toLowerCase() === 'auto') return 'auto';
  return parseInteger(v, 1, "a positive integer or 'auto'", name, kind);
}

/** true/false, or the strings 'true'/'false' in any case (Spark option values are strings). */
export function parseBoolean(v: unknown, name: string, kind: ValueKind = 'option'): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  throw invalid(name, 'true or false', v, kind);
}

/** One of `allowed`, matched case-insensitively; returns the spelling in `allowed`. */
export function parseEnum<T extends string>(v: unknown, allowed: readonly T[], name: string, kind: ValueKind = 'option'): T {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    const hit = allowed.find((a) => a.toLowerCase() === s);
    if (hit !== undefined) return hit;
  }
  throw invalid(name, `one of ${allowed.join(', ')}`, v, kind);
}

/** A JSON object (not an array), given as an object or as JSON text. */
export function parseJsonObject(v: unknown, name: string, kind: ValueKind = 'option'): Record<string, unknown> {
  let o: unknown = v;
  if (typeof v === 'string') {
    try {
      o = JSON.parse(v);
    } catch {
      o = undefined;
    }
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw invalid(name, 'a JSON object', v, kind);
  return o as Record<string, unknown>;
}
