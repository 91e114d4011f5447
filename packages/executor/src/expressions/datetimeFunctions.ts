/**
 * Spark's date and time functions (non-ANSI mode) as ScalarFunction entries. The session time zone
 * is UTC. A DATE argument may be a DATE, a TIMESTAMP (its day) or text (cast as CAST does); a
 * TIMESTAMP argument a TIMESTAMP, a DATE (its midnight) or text. Text that does not parse, and
 * impossible dates (make_date(2019, 13, 1)), give null. Timestamps keep milliseconds, so digits
 * past them are truncated.
 */
import { SluiceError } from '@sluice/state';
import { typeName } from '../schema/values.js';
import { formatWithPattern, parseWithPattern } from '../schema/datetimePatterns.js';
import { MS_PER_DAY, utcMs } from '../schema/timestamps.js';
import { addIntervals, addMonthsMs, intervalOf, timestampPlusInterval, type Interval } from '../schema/intervals.js';
import { WINDOW_TYPE, type DataType } from '../schema/types.js';
import { numberLike, type ScalarFunction } from './mathFunctions.js';
import { batchTimestamp } from './batchClock.js';

export type DatetimeFunctionName =
  | 'to_timestamp'
  | 'to_date'
  | 'date_format'
  | 'from_unixtime'
  | 'unix_timestamp'
  | 'to_unix_timestamp'
  | 'date_add'
  | 'date_sub'
  | 'datediff'
  | 'add_months'
  | 'months_between'
  | 'year'
  | 'quarter'
  | 'month'
  | 'dayofmonth'
  | 'dayofweek'
  | 'weekday'
  | 'dayofyear'
  | 'weekofyear'
  | 'hour'
  | 'minute'
  | 'second'
  | 'date_trunc'
  | 'trunc'
  | 'last_day'
  | 'next_day'
  | 'make_timestamp'
  | 'make_date'
  | 'make_interval'
  | 'timestamp_seconds'
  | 'timestamp_millis'
  | 'unix_seconds'
  | 'unix_millis'
  | 'unix_date'
  | 'date_from_unix_date'
  | 'window_time'
  | 'from_utc_timestamp'
  | 'to_utc_timestamp'
  | 'current_timestamp'
  | 'current_date'
  | 'session_window';

type N = number;
type Typed = { args: DataType[]; result: DataType } | string;

const timeLike = (t: DataType): boolean => t === 'string' || t === 'timestamp' || t === 'date' || t === 'null';

/** Arguments cast by `kinds` (d DATE, t TIMESTAMP, i INT, l LONG, f DOUBLE, s STRING), giving `result`. */
function sig(result: DataType, ...kinds: Array<'d' | 't' | 'i' | 'l' | 'f' | 's'>) {
  const types: Record<string, DataType> = { d: 'date', t: 'timestamp', i: 'int', l: 'long', f: 'double', s: 'string' };
  return (args: DataType[]): Typed => {
    const want = args.map((_, i) => kinds[Math.min(i, kinds.length - 1)]!);
    const bad = args.findIndex((t, i) => {
      const k = want[i];
      return k === 'd' || k === 't' ? !timeLike(t) : k === 's' ? typeof t !== 'string' : !numberLike(t);
    });
    if (bad >= 0) return `argument ${bad + 1} cannot be ${typeName(args[bad] as DataType)}`;
    return { args: want.map((k) => types[k] as DataType), result };
  };
}

const day = (ms: N): N => Math.floor(ms / MS_PER_DAY);
const dateOf = (days: N): Date => new Date(days * MS_PER_DAY);
const fromDate = (f: (d: Date) => N): ScalarFunction => ({ arity: [1, 1], types: sig('int', 'd'), value: (d) => f(dateOf(d as N)) });
const fromTime = (f: (d: Date) => N): ScalarFunction => ({ arity: [1, 1], types: sig('int', 't'), value: (t) => f(new Date(t as N)) });

/** ISO-8601 week of the year: weeks start on Monday, and week 1 holds the year's first Thursday. */
function isoWeek(d: Date): N {
  const dow = (d.getUTCDay() + 6) % 7;
  const thursday = d.getTime() + (3 - dow) * MS_PER_DAY;
  const y = new Date(thursday).getUTCFullYear();
  return Math.floor((thursday - utcMs(y, 0, 1)) / (7 * MS_PER_DAY)) + 1;
}

const DAY_NAMES: Array<[N, string[]]> = [
  [0, ['SU', 'SUN', 'SUNDAY']],
  [1, ['MO', 'MON', 'MONDAY']],
  [2, ['TU', 'TUE', 'TUESDAY']],
  [3, ['WE', 'WED', 'WEDNESDAY']],
  [4, ['TH', 'THU', 'THURSDAY']],
  [5, ['FR', 'FRI', 'FRIDAY']],
  [6, ['SA', 'SAT', 'SATURDAY']],
];

/** date_trunc's and trunc's units; `date` marks those trunc (of a DATE) takes. */
function truncateMs(ms: N, unit: string, dateOnly: boolean): N | null {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (unit.toUpperCase()) {
    case 'YEAR':
    case 'YYYY':
    case 'YY':
      return utcMs(y, 0, 1);
    case 'QUARTER':
      return utcMs(y, m - (m % 3), 1);
    case 'MONTH':
    case 'MM':
    case 'MON':
      return utcMs(y, m, 1);
    case 'WEEK':
      return utcMs(y, m, d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  }
  if (dateOnly) return null;
  const unitMs: Record<string, N> = { DAY: MS_PER_DAY, DD: MS_PER_DAY, HOUR: 3_600_000, MINUTE: 60_000, SECOND: 1000, MILLISECOND: 1, MICROSECOND: 1 };
  const size = unitMs[unit.toUpperCase()];
  return size === undefined ? null : Math.floor(ms / size) * size;
}

/** Spark's months_between: whole months when the days of the month match or both are last days; else by a 31-day month. */
function monthsBetween(t1: N, t2: N, roundOff: boolean): N {
  const a = new Date(t1);
  const b = new Date(t2);
  const months = (a.getUTCFullYear() - b.getUTCFullYear()) * 12 + (a.getUTCMonth() - b.getUTCMonth());
  const lastDay = (d: Date): boolean => new Date(d.getTime() + MS_PER_DAY).getUTCDate() === 1;
  if (a.getUTCDate() === b.getUTCDate() || (lastDay(a) && lastDay(b))) return months;
  const secondsInDay = (d: Date): N => (d.getTime() - utcMs(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())) / 1000;
  const diff = (a.getUTCDate() - b.getUTCDate()) * 86400 + secondsInDay(a) - secondsInDay(b);
  const r = months + diff / (31 * 86400);
  return roundOff ? Math.round(r * 1e8) / 1e8 : r;
}

/** The UTC offset (ms) of `zone` at `ms`, from the platform's time zone data; an unknown zone is an error. */
const zoneFormats = new Map<string, Intl.DateTimeFormat>();
function zoneOffsetMs(zone: string, ms: N): N {
  const offset = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(zone);
  if (offset !== null) return (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3] ?? 0)) * 60_000;
  let f = zoneFormats.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new SluiceError('INVALID_EXPRESSION', `[INVALID_TIMEZONE] the time zone '${zone}' is not known`);
    }
    zoneFormats.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  const local = utcMs(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return local - (ms - (((ms % 1000) + 1000) % 1000));
}

const DEFAULT_FORMAT = 'yyyy-MM-dd HH:mm:ss';

/** to_timestamp and to_date: a cast without a pattern; with one, the pattern's parse. */
function parsed(result: 'timestamp' | 'date'): ScalarFunction {
  return {
    arity: [1, 2],
    types: (args) => (args.length === 1 ? sig(result, result === 'date' ? 'd' : 't')(args) : sig(result, 's', 's')(args)),
    value: (v, fmt) => {
      if (fmt === undefined) return v;
      const ms = parseWithPattern(v as string, fmt as string);
      return ms === null ? null : result === 'date' ? day(ms) : ms;
    },
  };
}

/** unix_timestamp(x[, fmt]): seconds since the epoch of a TIMESTAMP, a DATE, or text of `fmt`. */
const unixTimestamp: ScalarFunction = {
  arity: [1, 2],
  types: (args) => (args[0] === 'string' ? sig('long', 's', 's')(args) : sig('long', 't', 's')(args)),
  bind:
    ([t]) =>
    (v, fmt = DEFAULT_FORMAT) => {
      const ms = t === 'string' ? parseWithPattern(v as string, fmt as string) : (v as N);
      return ms === null ? null : Math.floor(ms / 1000);
    },
};

export const DATETIME_FUNCTIONS: Record<DatetimeFunctionName, ScalarFunction> = {
  to_timestamp: parsed('timestamp'),
  to_date: parsed('date'),
  /** date_format(ts, pattern): the timestamp as text of the datetime pattern. */
  date_format: { arity: [2, 2], types: sig('string', 't', 's'), value: (t, fmt) => formatWithPattern(t as N, fmt as string) },
  /** from_unixtime(seconds[, pattern]): 'yyyy-MM-dd HH:mm:ss' by default. */
  from_unixtime: { arity: [1, 2], types: sig('string', 'l', 's'), value: (s, fmt = DEFAULT_FORMAT) => formatWithPattern((s as N) * 1000, fmt as string) },
  unix_timestamp: unixTimestamp,
  to_unix_timestamp: unixTimestamp,
  date_add: { arity: [2, 2], types: sig('date', 'd', 'i'), value: (d, n) => (d as N) + (n as N) },
  date_sub: { arity: [2, 2], types: sig('date', 'd', 'i'), value: (d, n) => (d as N) - (n as N) },
  /** datediff(end, start): days from start to end. */
  datediff: { arity: [2, 2], types: sig('int', 'd', 'd'), value: (a, b) => (a as N) - (b as N) },
  add_months: { arity: [2, 2], types: sig('date', 'd', 'i'), value: (d, n) => day(addMonthsMs((d as N) * MS_PER_DAY, n as N)) },
  /** months_between(t1, t2[, roundOff]): rounded to 8 digits unless roundOff is false. */
  months_between: {
    arity: [2, 3],
    types: (args) => {
      const typed = sig('double', 't', 't')(args.slice(0, 2));
      if (typeof typed === 'string' || args.length === 2) return typed;
      return args[2] === 'boolean' || args[2] === 'null'
        ? { args: [...typed.args, 'boolean'], result: 'double' }
        : `roundOff must be a boolean, not ${typeName(args[2] as DataType)}`;
    },
    value: (a, b, roundOff = true) => monthsBetween(a as N, b as N, roundOff as boolean),
  },
  year: fromDate((d) => d.getUTCFullYear()),
  quarter: fromDate((d) => Math.floor(d.getUTCMonth() / 3) + 1),
  month: fromDate((d) => d.getUTCMonth() + 1),
  dayofmonth: fromDate((d) => d.getUTCDate()),
  /** dayofweek: 1 Sunday … 7 Saturday. */
  dayofweek: fromDate((d) => d.getUTCDay() + 1),
  /** weekday: 0 Monday … 6 Sunday. */
  weekday: fromDate((d) => (d.getUTCDay() + 6) % 7),
  dayofyear: fromDate((d) => Math.floor((d.getTime() - utcMs(d.getUTCFullYear(), 0, 1)) / MS_PER_DAY) + 1),
  weekofyear: fromDate(isoWeek),
  hour: fromTime((d) => d.getUTCHours()),
  minute: fromTime((d) => d.getUTCMinutes()),
  second: fromTime((d) => d.getUTCSeconds()),
  /** date_trunc(unit, ts): YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND (and Spark's other spellings). */
  date_trunc: { arity: [2, 2], types: sig('timestamp', 's', 't'), value: (unit, t) => truncateMs(t as N, unit as string, false) },
  /** trunc(date, unit): YEAR, QUARTER, MONTH or WEEK; another unit gives null. */
  trunc: {
    arity: [2, 2],
    types: sig('date', 'd', 's'),
    value: (d, unit) => {
      const ms = truncateMs((d as N) * MS_PER_DAY, unit as string, true);
      return ms === null ? null : day(ms);
    },
  },
  last_day: {
    arity: [1, 1],
    types: sig('date', 'd'),
    value: (d) => {
      const x = dateOf(d as N);
      return day(utcMs(x.getUTCFullYear(), x.getUTCMonth() + 1, 1)) - 1;
    },
  },
  /** next_day(date, 'TU'): the first such day after the date; an unknown day name gives null. */
  next_day: {
    arity: [2, 2],
    types: sig('date', 'd', 's'),
    value: (d, name) => {
      const target = DAY_NAMES.find(([, ns]) => ns.includes((name as string).trim().toUpperCase()))?.[0];
      if (target === undefined) return null;
      const dow = dateOf(d as N).getUTCDay();
      return (d as N) + (((target - dow + 6) % 7) + 1);
    },
  },
  /** make_timestamp(year, month, day, hour, min, sec[, zone]): sec may have a fraction; 60 with none is the next minute. */
  make_timestamp: {
    arity: [6, 7],
    types: (args) => sig('timestamp', 'i', 'i', 'i', 'i', 'i', 'f', 's')(args),
    value: (y, mo, d, h, mi, s, zone) => {
      const sec = s as N;
      if ((mo as N) < 1 || (mo as N) > 12 || (d as N) < 1 || (h as N) < 0 || (h as N) > 23 || (mi as N) < 0 || (mi as N) > 59) return null;
      if (sec < 0 || sec > 60 || (sec >= 60 && sec !== 60)) return null;
      const base = utcMs(y as N, (mo as N) - 1, d as N, h as N, mi as N);
      if (new Date(base).getUTCDate() !== d) return null;
      const ms = base + Math.floor(Math.round(sec * 1e6) / 1000);
      return zone === undefined ? ms : ms - zoneOffsetMs(zone as string, ms);
    },
  },
  make_date: {
    arity: [3, 3],
    types: sig('date', 'i', 'i', 'i'),
    value: (y, m, d) => {
      if ((m as N) < 1 || (m as N) > 12 || (d as N) < 1) return null;
      const ms = utcMs(y as N, (m as N) - 1, d as N);
      return new Date(ms).getUTCDate() === d ? day(ms) : null;
    },
  },
  /** make_interval([years[, months[, weeks[, days[, hours[, mins[, secs]]]]]]]): an INTERVAL. */
  make_interval: {
    arity: [0, 7],
    types: (args) => sig('interval', 'i', 'i', 'i', 'i', 'i', 'i', 'f')(args),
    value: (...xs) => {
      const units = ['year', 'month', 'week', 'day', 'hour', 'minute', 'second'] as const;
      return xs.reduce<Interval>((acc, x, i) => addIntervals(acc, intervalOf(x as N, units[i]!)), [0, 0, 0]);
    },
  },
  timestamp_seconds: { arity: [1, 1], types: sig('timestamp', 'f'), value: (s) => Math.round((s as N) * 1e6) / 1000 },
  timestamp_millis: { arity: [1, 1], types: sig('timestamp', 'l'), value: (ms) => ms },
  unix_seconds: { arity: [1, 1], types: sig('long', 't'), value: (t) => Math.floor((t as N) / 1000) },
  unix_millis: { arity: [1, 1], types: sig('long', 't'), value: (t) => t },
  unix_date: { arity: [1, 1], types: sig('int', 'd'), value: (d) => d },
  date_from_unix_date: { arity: [1, 1], types: sig('date', 'i'), value: (n) => n },
  /**
   * window_time(window): the event time of a window, its end less the smallest step. Spark's step is
   * a microsecond; Sluice keeps milliseconds, so it is end - 1 ms.
   */
  window_time: {
    arity: [1, 1],
    types: ([w = 'null']) =>
      typeof w === 'object' && 'struct' in w && w.struct.some((f) => f.name === 'end' && f.type === 'timestamp')
        ? { args: [w], result: 'timestamp' }
        : `needs a window struct, not ${typeName(w)}`,
    value: (w) => {
      const end = (w as { end: N | null }).end;
      return end == null ? null : end - 1;
    },
  },
  /**
   * session_window(time, gap): the session a row opens, [time, time + gap), as a window struct. As a
   * groupBy key it is Spark's session window: the sessions of a key merge where they overlap
   * (operators/sessionWindow/). The gap is an interval, or its text ('5 minutes'), per row.
   */
  session_window: {
    arity: [2, 2],
    types: ([t = 'null', gap = 'null']) =>
      t !== 'timestamp'
        ? `argument 1 (the time column) must be TIMESTAMP, not ${typeName(t)}`
        : gap !== 'string' && gap !== 'interval' && gap !== 'null'
          ? `argument 2 (the gap) must be an interval or its text, not ${typeName(gap)}`
          : { args: ['timestamp', 'interval'], result: WINDOW_TYPE },
    value: (t, gap) => ({ start: t, end: timestampPlusInterval(t as N, gap as Interval, 1) }),
  },
  /** current_timestamp() (and now()): the batch's timestamp, the same for every row of a batch and again when the batch is replayed. */
  current_timestamp: { arity: [0, 0], types: () => ({ args: [], result: 'timestamp' }), value: () => batchTimestamp() },
  current_date: { arity: [0, 0], types: () => ({ args: [], result: 'date' }), value: () => day(batchTimestamp()) },
  /** from_utc_timestamp(ts, zone): the UTC time as the wall-clock time of `zone`. */
  from_utc_timestamp: { arity: [2, 2], types: sig('timestamp', 't', 's'), value: (t, zone) => (t as N) + zoneOffsetMs(zone as string, t as N) },
  /** to_utc_timestamp(ts, zone): a wall-clock time of `zone` as UTC. */
  to_utc_timestamp: {
    arity: [2, 2],
    types: sig('timestamp', 't', 's'),
    value: (t, zone) => {
      const guess = (t as N) - zoneOffsetMs(zone as string, t as N);
      return (t as N) - zoneOffsetMs(zone as string, guess);
    },
  },
};
