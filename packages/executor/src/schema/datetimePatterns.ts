/**
 * Spark's datetime patterns (its "Datetime Patterns for Formatting and Parsing", the letters of
 * Java's DateTimeFormatter that Spark 3 keeps): date_format, from_unixtime, to_timestamp,
 * to_date and unix_timestamp use them. The session time zone is UTC, so zone letters print UTC
 * forms ('Z', '+00:00', 'UTC') and parsing honours an offset in the text.
 *
 *   G era · y year (yy: 2 digits, 2000-2099) · M/L month (MMM Jan, MMMM January) · d day · D day of year
 *   Q/q quarter · E day of week (Fri, EEEE Friday) · a AM/PM · H 0-23 · k 1-24 · K 0-11 · h 1-12
 *   m minute · s second · S fraction · X x Z zone offset · z V O zone name · '...' text · '' a quote
 *
 * Week-based letters (Y, w, W, u, e, c) are refused, as Spark 3 refuses them.
 */
import { SluiceError } from '@sluice/state';
import { MS_PER_DAY, utcMs } from './timestamps.js';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const LETTERS = 'GyMLdDQqEaHkKhmsSXxZzVO';
const REFUSED = 'YwWuec';

type Piece = { letter: string; count: number } | { text: string };

const compiled = new Map<string, Piece[]>();

function invalidPattern(pattern: string, why: string): SluiceError {
  return new SluiceError('INVALID_EXPRESSION', `[INVALID_DATETIME_PATTERN] the datetime pattern '${pattern}' is invalid: ${why}`);
}

function pieces(pattern: string): Piece[] {
  const hit = compiled.get(pattern);
  if (hit !== undefined) return hit;
  const out: Piece[] = [];
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        out.push({ text: "'" });
        i += 2;
        continue;
      }
      let text = '';
      let j = i + 1;
      for (; j < pattern.length; j++) {
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            text += "'";
            j++;
          } else break;
        } else text += pattern[j];
      }
      if (j >= pattern.length) throw invalidPattern(pattern, 'an unclosed quote');
      out.push({ text });
      i = j + 1;
    } else if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (pattern[j] === c) j++;
      if (REFUSED.includes(c)) throw invalidPattern(pattern, `the week-based letter '${c}' is not supported (Spark 3 refuses it too)`);
      if (!LETTERS.includes(c)) throw invalidPattern(pattern, `unknown letter '${c}'`);
      out.push({ letter: c, count: j - i });
      i = j;
    } else {
      out.push({ text: c });
      i++;
    }
  }
  if (compiled.size > 256) compiled.clear();
  compiled.set(pattern, out);
  return out;
}

/** Why `pattern` is not a datetime pattern, or undefined when it is one. */
export function datetimePatternProblem(pattern: string): string | undefined {
  try {
    pieces(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

const pad = (n: number, width: number): string => (n < 0 ? `-${String(-n).padStart(width, '0')}` : String(n).padStart(width, '0'));

/**
 * The finest unit a pattern prints, in ms: its text is the same for every instant of one such unit,
 * so a run of nearby timestamps (a batch's, usually) is formatted once per unit.
 */
function granularity(ps: Piece[]): number {
  let g = MS_PER_DAY;
  for (const p of ps) {
    if ('text' in p) continue;
    const unit = p.letter === 'S' ? 1 : p.letter === 's' ? 1000 : p.letter === 'm' ? 60_000 : 'HkKha'.includes(p.letter) ? 3_600_000 : MS_PER_DAY;
    g = Math.min(g, unit);
  }
  return g;
}

const lastFormatted = new Map<string, { unit: number; key: number; text: string }>();

/** Epoch ms as text of `pattern`, in UTC. */
export function formatWithPattern(ms: number, pattern: string): string {
  let last = lastFormatted.get(pattern);
  if (last === undefined) {
    if (lastFormatted.size > 256) lastFormatted.clear();
    last = { unit: granularity(pieces(pattern)), key: NaN, text: '' };
    lastFormatted.set(pattern, last);
  }
  const key = Math.floor(ms / last.unit);
  if (key !== last.key) {
    last.text = formatFields(ms, pattern);
    last.key = key;
  }
  return last.text;
}

function formatFields(ms: number, pattern: string): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const hour = d.getUTCHours();
  let out = '';
  for (const p of pieces(pattern)) {
    if ('text' in p) {
      out += p.text;
      continue;
    }
    const n = p.count;
    switch (p.letter) {
      case 'G':
        out += n === 4 ? (year > 0 ? 'Anno Domini' : 'Before Christ') : year > 0 ? 'AD' : 'BC';
        break;
      case 'y':
        out += n === 2 ? pad(((year % 100) + 100) % 100, 2) : pad(year, n);
        break;
      case 'M':
      case 'L':
        out += n >= 4 ? MONTHS[month] : n === 3 ? MONTHS[month]!.slice(0, 3) : pad(month + 1, n);
        break;
      case 'd':
        out += pad(d.getUTCDate(), n);
        break;
      case 'D':
        out += pad(Math.floor((ms - utcMs(year, 0, 1)) / MS_PER_DAY) + 1, n);
        break;
      case 'Q':
      case 'q': {
        const q = Math.floor(month / 3) + 1;
        out += n >= 4 ? `${['1st', '2nd', '3rd', '4th'][q - 1]} quarter` : n === 3 ? `Q${q}` : pad(q, n);
        break;
      }
      case 'E':
        out += n >= 4 ? DAYS[d.getUTCDay()] : DAYS[d.getUTCDay()]!.slice(0, 3);
        break;
      case 'a':
        out += hour < 12 ? 'AM' : 'PM';
        break;
      case 'H':
        out += pad(hour, n);
        break;
      case 'k':
        out += pad(hour === 0 ? 24 : hour, n);
        break;
      case 'K':
        out += pad(hour % 12, n);
        break;
      case 'h':
        out += pad(hour % 12 === 0 ? 12 : hour % 12, n);
        break;
      case 'm':
        out += pad(d.getUTCMinutes(), n);
        break;
      case 's':
        out += pad(d.getUTCSeconds(), n);
        break;
      case 'S':
        out += String(d.getUTCMilliseconds()).padStart(3, '0').padEnd(n, '0').slice(0, n);
        break;
      case 'X':
        out += 'Z';
        break;
      case 'x':
        out += n === 1 ? '+00' : n === 2 || n === 4 ? '+0000' : '+00:00';
        break;
      case 'Z':
        out += n <= 3 ? '+0000' : n === 4 ? 'GMT' : 'Z';
        break;
      case 'O':
        out += 'GMT';
        break;
      default: // z, V
        out += 'UTC';
    }
  }
  return out;
}

interface Fields {
  year?: number;
  month?: number;
  day?: number;
  dayOfYear?: number;
  hour?: number;
  hour12?: number;
  pm?: boolean;
  minute?: number;
  second?: number;
  ms?: number;
  offsetMin?: number;
}

type Reader = { re: string; set?: (f: Fields, text: string) => boolean };

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const names = (list: string[]): string => list.map(escapeRegExp).join('|');
/** A number field: `set` stores it and says whether it is in range. */
const num = (width: string, set: (f: Fields, n: number) => boolean): Reader => ({
  re: `(\\d${width})`,
  set: (f, t) => set(f, Number(t)),
});

function reader(p: Piece): Reader {
  if ('text' in p) return { re: escapeRegExp(p.text) };
  const n = p.count;
  const digits = n === 1 ? '{1,2}' : `{${n}}`;
  switch (p.letter) {
    case 'G':
      return { re: '(AD|BC|Anno Domini|Before Christ)', set: () => true };
    case 'y':
      return n === 2
        ? num('{2}', (f, v) => {
            f.year = 2000 + v;
            return true;
          })
        : num(`{${n},9}`, (f, v) => {
            f.year = v;
            return true;
          });
    case 'M':
    case 'L':
      if (n >= 3) {
        const list = n === 3 ? MONTHS.map((m) => m.slice(0, 3)) : MONTHS;
        return {
          re: `(${names(list)})`,
          set: (f, t) => {
            f.month = list.findIndex((m) => m.toLowerCase() === t.toLowerCase()) + 1;
            return true;
          },
        };
      }
      return num(digits, (f, v) => {
        f.month = v;
        return true;
      });
    case 'd':
      return num(digits, (f, v) => {
        f.day = v;
        return true;
      });
    case 'D':
      return num(n === 1 ? '{1,3}' : `{${n},3}`, (f, v) => {
        f.dayOfYear = v;
        return true;
      });
    case 'Q':
    case 'q':
      return n >= 3 ? { re: '(Q[1-4]|[1-4](?:st|nd|rd|th) quarter)', set: () => true } : num(digits, () => true);
    case 'E':
      return { re: `(${names(n >= 4 ? DAYS : DAYS.map((x) => x.slice(0, 3)))})`, set: () => true };
    case 'a':
      return {
        re: '(AM|PM)',
        set: (f, t) => {
          f.pm = t.toUpperCase() === 'PM';
          return true;
        },
      };
    case 'H':
      return num(digits, (f, v) => {
        f.hour = v;
        return v < 24;
      });
    case 'k':
      return num(digits, (f, v) => {
        const ok = v >= 1 && v <= 24;
        if (ok) f.hour = v % 24;
        return ok;
      });
    case 'K':
      return num(digits, (f, v) => {
        const ok = v < 12;
        if (ok) f.hour12 = v;
        return ok;
      });
    case 'h':
      return num(digits, (f, v) => {
        const ok = v >= 1 && v <= 12;
        if (ok) f.hour12 = v % 12;
        return ok;
      });
    case 'm':
      return num(digits, (f, v) => {
        f.minute = v;
        return v < 60;
      });
    case 's':
      return num(digits, (f, v) => {
        f.second = v;
        return v < 60;
      });
    case 'S':
      return {
        re: `(\\d{1,${n}})`,
        set: (f, t) => {
          f.ms = Number(t.slice(0, 3).padEnd(3, '0'));
          return true;
        },
      };
    case 'X':
    case 'x':
    case 'Z':
    case 'O':
      return {
        re: '(Z|UTC|GMT|[+-]\\d{2}(?::?\\d{2})?)',
        set: (f, t) => {
          const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(t);
          f.offsetMin = m === null ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
          return true;
        },
      };
    default: // z, V: the zones a UTC session knows by name
      return { re: '(UTC|GMT|Z|Etc/UTC)', set: () => true };
  }
}

const parsers = new Map<string, { re: RegExp; readers: Reader[] }>();

/**
 * Text of `pattern` as epoch ms (UTC unless the text has an offset), or null when it does not
 * match the whole text or names an impossible date, as Spark's non-ANSI parse gives null. Fields
 * the pattern lacks default to 1970-01-01 00:00:00.
 */
export function parseWithPattern(text: string, pattern: string): number | null {
  let parser = parsers.get(pattern);
  if (parser === undefined) {
    const readers = pieces(pattern).map(reader);
    parser = { re: new RegExp(`^${readers.map((r) => r.re).join('')}$`, 'i'), readers };
    if (parsers.size > 256) parsers.clear();
    parsers.set(pattern, parser);
  }
  const m = parser.re.exec(text);
  if (m === null) return null;
  const f: Fields = {};
  let g = 1;
  for (const r of parser.readers) {
    if (r.set === undefined) continue;
    if (!r.set(f, m[g++]!)) return null;
  }
  const year = f.year ?? 1970;
  let month = f.month ?? 1;
  let day = f.day ?? 1;
  if (f.dayOfYear !== undefined) {
    const d = new Date(utcMs(year, 0, f.dayOfYear));
    if (d.getUTCFullYear() !== year) return null;
    month = d.getUTCMonth() + 1;
    day = d.getUTCDate();
  }
  const hour = f.hour ?? (f.hour12 !== undefined ? f.hour12 + (f.pm ? 12 : 0) : 0);
  const date = utcMs(year, month - 1, day);
  const check = new Date(date);
  if (month < 1 || month > 12 || day < 1 || check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;
  return date + ((hour * 60 + (f.minute ?? 0) - (f.offsetMin ?? 0)) * 60 + (f.second ?? 0)) * 1000 + (f.ms ?? 0);
}
