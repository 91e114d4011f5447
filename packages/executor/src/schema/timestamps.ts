/**
 * Timestamps as text: the one grammar that `cast(... as TIMESTAMP)` and the JSON and CSV readers
 * share (Spark's, as its readers fall back to the cast's parser when no timestampFormat is set),
 * and fast formatting back to ISO-8601.
 *
 * `parseTimestamp` is the grammar. `parseIsoTimestamp` is a fast path for its most common form,
 * which the readers try first: it accepts a subset of the grammar, always with the same result,
 * and gives NaN for anything else.
 */

const TIMESTAMP_RE =
  /^([+-]?\d{4,6})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?)?)?)?\s*(Z|UTC|[+-]\d{1,2}(?::?\d{2})?)?$/i;

/**
 * Parses the timestamp forms Spark accepts ('2024-01-01', '2024-01-01 10:00:00',
 * '2024-01-01T10:00:00.123Z', '...+02:00'). Without a zone the text is UTC: Sluice's session time
 * zone is always UTC, so a timestamp never depends on the machine it is read on.
 * Returns epoch ms (sub-millisecond digits are truncated), or null when the text is not a timestamp.
 */
export function parseTimestamp(text: string): number | null {
  const m = TIMESTAMP_RE.exec(text.trim());
  if (m === null) return null;
  const year = Number(m[1]);
  const month = m[2] === undefined ? 1 : Number(m[2]);
  const day = m[3] === undefined ? 1 : Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  let t = utcMs(year, month - 1, day, hour, minute, second, ms);
  const date = new Date(t);
  // Rejects 2023-02-30 and the like, which roll over into March.
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return null;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== 'Z' && zone.toUpperCase() !== 'UTC') {
    const z = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(zone);
    if (z === null) return null;
    const offsetMinutes = z[3] === undefined ? 0 : Number(z[3]);
    if (Number(z[2]) > 18 || offsetMinutes > 59) return null;
    const minutes = Number(z[2]) * 60 + offsetMinutes;
    t -= (z[1] === '-' ? -minutes : minutes) * 60_000;
  }
  return Number.isFinite(t) ? t : null;
}

/**
 * The fast path: `YYYY-MM-DD`, then optionally `T` (or a space) `HH:MM[:SS[.fraction]]` and a
 * zone `Z`, `±HH`, `±HHMM` or `±HH:MM`, as epoch milliseconds, or NaN. No zone means UTC. At most
 * nine fraction digits; those past milliseconds are truncated.
 */
export function parseIsoTimestamp(s: string, from = 0, to = s.length): number {
  // s[from, to) is the text (the JSON scanner passes a value inside its line). Reads past `to`
  // can only turn a success into NaN: every success checks that the text ends exactly at `to`.
  const len = to - from;
  if (len < 10) return NaN;
  const y = d2(s, from) * 100 + d2(s, from + 2);
  const mo = d2(s, from + 5);
  const d = d2(s, from + 8);
  if (!(y >= 0) || s.charCodeAt(from + 4) !== 45 || s.charCodeAt(from + 7) !== 45 || !(mo >= 1 && mo <= 12)) return NaN;
  if (!(d >= 1 && d <= daysInMonth(y, mo))) return NaN;
  let ms = daysFromCivil(y, mo, d) * 86_400_000;
  if (len === 10) return ms;
  const t = s.charCodeAt(from + 10);
  if (t !== 84 && t !== 116 && t !== 32) return NaN;
  const h = d2(s, from + 11);
  const mi = d2(s, from + 14);
  if (!(h >= 0 && h <= 23) || s.charCodeAt(from + 13) !== 58 || !(mi >= 0 && mi <= 59)) return NaN;
  ms += h * 3_600_000 + mi * 60_000;
  let i = from + 16;
  if (i < to && s.charCodeAt(i) === 58) {
    const sec = d2(s, from + 17);
    if (!(sec >= 0 && sec <= 59)) return NaN;
    ms += sec * 1000;
    i = from + 19;
    if (i < to && s.charCodeAt(i) === 46) {
      const start = ++i;
      let frac = 0;
      for (let c = s.charCodeAt(i) - 48; i < to && c >= 0 && c <= 9; c = s.charCodeAt(++i) - 48) {
        if (i - start < 3) frac = frac * 10 + c;
      }
      if (i === start || i - start > 9) return NaN;
      for (let n = i - start; n < 3; n++) frac *= 10;
      ms += frac;
    }
  }
  if (i === to) return ms;
  if (i > to) return NaN;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === to ? ms : NaN;
  if (z !== 43 && z !== 45) return NaN;
  const oh = d2(s, i + 1);
  let om = 0;
  i += 3;
  if (i < to) {
    if (s.charCodeAt(i) === 58) i++;
    om = d2(s, i);
    i += 2;
  }
  if (!(oh >= 0 && oh <= 18) || !(om >= 0 && om <= 59) || i !== to) return NaN;
  return ms - (z === 43 ? 1 : -1) * (oh * 60 + om) * 60_000;
}

/** A timestamp from the fast path, else from the whole grammar; NaN when neither takes it. */
export function parseTimestampText(s: string): number {
  const ms = parseIsoTimestamp(s);
  return Number.isNaN(ms) ? (parseTimestamp(s) ?? NaN) : ms;
}

/** Two decimal digits at i, or NaN. */
function d2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

// Howard Hinnant's days_from_civil: days since 1970-01-01 in the proleptic Gregorian calendar.
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

const kPad2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const kMillis = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);
const kMillisQuoted = kMillis.map((m) => `${m}"`);

/**
 * Epoch ms to `Date#toISOString()` text (`quoted`: inside JSON quotes), several times faster:
 * the text up to the second is remembered, since neighbouring rows mostly share it, so a value
 * costs one concatenation. Years outside 0..9999 go through Date.
 */
export function isoFormatter(quoted: boolean): (ms: number) => string {
  const millis = quoted ? kMillisQuoted : kMillis;
  const open = quoted ? '"' : '';
  let lastDay = NaN;
  let dayPrefix = '';
  let lastSecond = NaN;
  let secondPrefix = '';
  return (ms) => {
    ms = Math.trunc(ms); // Date's TimeClip truncates too
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      const day = Math.floor(second / 86_400);
      if (day !== lastDay) {
        const d = new Date(day * 86_400_000);
        if (Number.isNaN(d.getTime())) return quoted ? 'null' : '';
        const text = d.toISOString();
        if (text.length !== 24) return open + new Date(ms).toISOString() + open;
        lastDay = day;
        dayPrefix = open + text.slice(0, 11);
      }
      let r = second - day * 86_400;
      const h = (r / 3600) | 0;
      r -= h * 3600;
      const m = (r / 60) | 0;
      lastSecond = second;
      secondPrefix = `${dayPrefix + kPad2[h]!}:${kPad2[m]!}:${kPad2[r - m * 60]!}.`;
    }
    return secondPrefix + millis[ms - second * 1000]!;
  };
}

export const MS_PER_DAY = 86_400_000;

const DATE_RE = /^([+-]?\d{4,6})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ].*)?)?)?$/s;

/**
 * Spark's string → DATE: 'yyyy', 'yyyy-[m]m', 'yyyy-[m]m-[d]d', and 'yyyy-[m]m-[d]d' followed by a
 * space or 'T' and anything (the time part is ignored, as Spark's stringToDate does). Days since the
 * epoch, or null when the text is not a date.
 */
export function parseDate(text: string): number | null {
  const m = DATE_RE.exec(text.trim());
  if (m === null) return null;
  const year = Number(m[1]);
  const month = m[2] === undefined ? 1 : Number(m[2]);
  const day = m[3] === undefined ? 1 : Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return null;
  const ms = utcMs(year, month - 1, day);
  if (new Date(ms).getUTCDate() !== day) return null;
  return Math.round(ms / MS_PER_DAY);
}

/** Epoch ms of a UTC date-time; any year (Date.UTC alone maps years 0..99 to 1900..1999). */
export function utcMs(year: number, month0: number, day: number, h = 0, mi = 0, s = 0, ms = 0): number {
  const d = new Date(Date.UTC(2000, ((month0 % 12) + 12) % 12, 1));
  d.setUTCFullYear(year + Math.floor(month0 / 12));
  return d.getTime() + (day - 1) * MS_PER_DAY + ((h * 60 + mi) * 60 + s) * 1000 + ms;
}

/** A DATE (days since the epoch) as Spark prints it: 'yyyy-MM-dd' (a year past 9999 with '+'). */
export function formatDate(days: number): string | null {
  const d = new Date(days * MS_PER_DAY);
  if (Number.isNaN(d.getTime())) return null;
  const y = d.getUTCFullYear();
  const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : y > 9999 ? `+${y}` : String(y).padStart(4, '0');
  return `${year}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}
