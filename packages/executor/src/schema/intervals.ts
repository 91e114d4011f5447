/**
 * INTERVAL values (Spark's CalendarInterval): months, days and milliseconds, kept apart because a
 * month and a day have no fixed length. Engine form: [months, days, ms]. `ts + INTERVAL 1 MONTH`
 * moves the calendar month (clamping the day, as add_months does), then the days, then the time.
 */
import { MS_PER_DAY, utcMs } from './timestamps.js';

export type Interval = [months: number, days: number, ms: number];

const UNIT_MS: Record<string, [field: 0 | 1 | 2, scale: number]> = {
  year: [0, 12],
  month: [0, 1],
  week: [1, 7],
  day: [1, 1],
  hour: [2, 3_600_000],
  minute: [2, 60_000],
  second: [2, 1000],
  millisecond: [2, 1],
  microsecond: [2, 0.001],
};

/** The unit a word names ('hours', 'MIN', 'secs'), or undefined. */
export function intervalUnit(word: string): keyof typeof UNIT_MS | undefined {
  const w = word.toLowerCase().replace(/s$/, '');
  const alias: Record<string, keyof typeof UNIT_MS> = {
    yr: 'year',
    mon: 'month',
    min: 'minute',
    sec: 'second',
    ms: 'millisecond',
    msec: 'millisecond',
    us: 'microsecond',
    usec: 'microsecond',
  };
  const unit = alias[w] ?? w;
  return Object.hasOwn(UNIT_MS, unit) ? (unit as keyof typeof UNIT_MS) : undefined;
}

/** The interval of `amount` units. */
export function intervalOf(amount: number, unit: keyof typeof UNIT_MS): Interval {
  const [field, scale] = UNIT_MS[unit]!;
  const out: Interval = [0, 0, 0];
  if (field === 0 || field === 1) {
    // Fractions of months and days carry down, as Spark's interval parser does.
    const whole = Math.trunc(amount * scale);
    out[field] = whole;
    const rest = amount * scale - whole;
    if (field === 0) out[1] = Math.trunc(rest * 30);
    else out[2] = Math.round(rest * MS_PER_DAY);
  } else out[2] = Math.trunc(Math.round(amount * scale * 1000) / 1000);
  return out;
}

export function addIntervals(a: Interval, b: Interval): Interval {
  return [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
}

/**
 * Interval text as Spark casts it: `[interval] <amount> <unit> ...` ('1 hour 30 minutes',
 * 'INTERVAL -2 days', '1.5 seconds'), units singular or plural, any case. Null if it is not one.
 */
export function parseInterval(text: string): Interval | null {
  const words = text.trim().split(/\s+/);
  if (words[0]?.toLowerCase() === 'interval') words.shift();
  if (words.length === 0 || words.length % 2 !== 0) return null;
  let acc: Interval = [0, 0, 0];
  for (let i = 0; i < words.length; i += 2) {
    const amount = Number(words[i]);
    const unit = intervalUnit(words[i + 1]!);
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(words[i]!) || unit === undefined) return null;
    acc = addIntervals(acc, intervalOf(amount, unit));
  }
  return acc;
}

/** Spark's CalendarInterval text: '1 years 2 months 3 days 4 hours 5 minutes 6.007 seconds'; '0 seconds' when empty. */
export function formatInterval([months, days, ms]: Interval): string {
  const parts: string[] = [];
  const years = Math.trunc(months / 12);
  if (years !== 0) parts.push(`${years} years`);
  if (months % 12 !== 0) parts.push(`${months % 12} months`);
  if (days !== 0) parts.push(`${days} days`);
  const hours = Math.trunc(ms / 3_600_000);
  const minutes = Math.trunc((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  if (hours !== 0) parts.push(`${hours} hours`);
  if (minutes !== 0) parts.push(`${minutes} minutes`);
  if (seconds !== 0) parts.push(`${seconds} seconds`);
  return parts.length === 0 ? '0 seconds' : parts.join(' ');
}

/** add_months on epoch ms: the same day of the month, or the month's last day when it has fewer. */
export function addMonthsMs(ms: number, months: number): number {
  if (months === 0) return ms;
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const last = new Date(utcMs(y, m + 1, 1) - MS_PER_DAY).getUTCDate();
  const day = Math.min(d.getUTCDate(), last);
  return utcMs(y, m, day) + (((ms % MS_PER_DAY) + MS_PER_DAY) % MS_PER_DAY);
}

/** A timestamp (ms) plus an interval: months, then days, then the time part. */
export function timestampPlusInterval(ms: number, [months, days, time]: Interval, sign: 1 | -1): number {
  return addMonthsMs(ms, sign * months) + sign * (days * MS_PER_DAY + time);
}
