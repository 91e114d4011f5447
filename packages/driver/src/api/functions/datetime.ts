/**
 * Dates and times: session time zone UTC; patterns are Spark's datetime patterns.
 */
import type { DatetimeFunctionName } from '@sluice/executor';
import { lit, toColumn, type Column } from '../Column.js';
import { call, cols, text } from './args.js';

const dt =
  (fn: DatetimeFunctionName) =>
  (c: Column | string): Column =>
    call(fn, [toColumn(c).expr]);
const dtWithInt =
  (fn: DatetimeFunctionName) =>
  (c: Column | string, n: number | Column): Column =>
    call(fn, [toColumn(c).expr, lit(n).expr]);

/** to_timestamp(c[, pattern]): text as a TIMESTAMP (as CAST without a pattern); null if it does not parse. */
export const to_timestamp = (c: Column | string, pattern?: string): Column =>
  call('to_timestamp', [toColumn(c).expr, ...(pattern === undefined ? [] : [text(pattern)])]);
/** Text (or a timestamp) as a DATE, by `pattern` if given; null if it does not parse. */
export const to_date = (c: Column | string, pattern?: string): Column => call('to_date', [toColumn(c).expr, ...(pattern === undefined ? [] : [text(pattern)])]);
/** A date or timestamp as text, by a Spark datetime pattern (`'yyyy-MM-dd HH:mm'`). */
export const date_format = (c: Column | string, pattern: string): Column => call('date_format', [toColumn(c).expr, text(pattern)]);
/** Seconds since the epoch as text, by `pattern`. */
export const from_unixtime = (c: Column | string, pattern = 'yyyy-MM-dd HH:mm:ss'): Column => call('from_unixtime', [toColumn(c).expr, text(pattern)]);
/** Text by `pattern` (or a timestamp) as seconds since the epoch, a LONG. */
export const unix_timestamp = (c: Column | string, pattern = 'yyyy-MM-dd HH:mm:ss'): Column => call('unix_timestamp', [toColumn(c).expr, text(pattern)]);
/** The date `n` days after. */
export const date_add = dtWithInt('date_add');
/** The date `n` days before. */
export const date_sub = dtWithInt('date_sub');
/** The days from `start` to `end`. */
export const datediff = (end: Column | string, start: Column | string): Column => call('datediff', cols([end, start]));
/** The date `n` months after (at most the month's last day). */
export const add_months = dtWithInt('add_months');
/** The months from `b` to `a`, a DOUBLE (rounded to 8 digits unless `roundOff` is false). */
export const months_between = (a: Column | string, b: Column | string, roundOff = true): Column =>
  call('months_between', [...cols([a, b]), lit(roundOff).expr]);
/** The year of a date or timestamp. */
export const year = dt('year');
/** The quarter (1 to 4) of a date or timestamp. */
export const quarter = dt('quarter');
/** The month (1 to 12) of a date or timestamp. */
export const month = dt('month');
/** The day of the month (1 to 31). */
export const dayofmonth = dt('dayofmonth');
/** The day of the week, 1 (Sunday) to 7 (Saturday). */
export const dayofweek = dt('dayofweek');
/** The day of the week, 0 (Monday) to 6 (Sunday). */
export const weekday = dt('weekday');
/** The day of the year (1 to 366). */
export const dayofyear = dt('dayofyear');
/** The ISO 8601 week of the year (1 to 53). */
export const weekofyear = dt('weekofyear');
/** The hour (0 to 23) of a timestamp. */
export const hour = dt('hour');
/** The minute (0 to 59) of a timestamp. */
export const minute = dt('minute');
/** The second (0 to 59) of a timestamp. */
export const second = dt('second');
/** date_trunc(unit, ts): 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond'. */
export const date_trunc = (unit: string, c: Column | string): Column => call('date_trunc', [text(unit), toColumn(c).expr]);
/** A date truncated to `unit`: 'year', 'quarter', 'month' or 'week'. */
export const trunc = (c: Column | string, unit: string): Column => call('trunc', [toColumn(c).expr, text(unit)]);
/** The last day of the date's month. */
export const last_day = dt('last_day');
/** The first date after the date that falls on `dayOfWeek` ('Mon', 'Tuesday'...). */
export const next_day = (c: Column | string, dayOfWeek: string): Column => call('next_day', [toColumn(c).expr, text(dayOfWeek)]);
/** make_timestamp(year, month, day, hour, min, sec): a TIMESTAMP (UTC); null if invalid. */
export const make_timestamp = (...cs: Array<Column | string>): Column => call('make_timestamp', cols(cs));
/** A DATE of year, month and day; null if invalid. */
export const make_date = (y: Column | string, m: Column | string, d: Column | string): Column => call('make_date', cols([y, m, d]));
/** Seconds since the epoch as a TIMESTAMP. */
export const timestamp_seconds = dt('timestamp_seconds');
/** Milliseconds since the epoch as a TIMESTAMP. */
export const timestamp_millis = dt('timestamp_millis');
/** A timestamp as seconds since the epoch. */
export const unix_seconds = dt('unix_seconds');
/** A timestamp as milliseconds since the epoch. */
export const unix_millis = dt('unix_millis');
/** A date as days since the epoch. */
export const unix_date = dt('unix_date');
/** Days since the epoch as a DATE. */
export const date_from_unix_date = dt('date_from_unix_date');
/** window_time(window): the event time of a window of a windowed aggregation (its end less 1 ms). */
export const window_time = dt('window_time');
/** A UTC timestamp shown as wall-clock time in time zone `zone`. */
export const from_utc_timestamp = (c: Column | string, zone: string): Column => call('from_utc_timestamp', [toColumn(c).expr, text(zone)]);
/** Wall-clock time in time zone `zone` as a UTC timestamp. */
export const to_utc_timestamp = (c: Column | string, zone: string): Column => call('to_utc_timestamp', [toColumn(c).expr, text(zone)]);
/** current_timestamp(): the batch's timestamp, the same for every row of a batch and again when a batch is replayed. */
export const current_timestamp = (): Column => call('current_timestamp', []);
/** Same as current_timestamp. */
export const now = current_timestamp;
/** The batch's date (UTC), the same for every row of a batch. */
export const current_date = (): Column => call('current_date', []);
