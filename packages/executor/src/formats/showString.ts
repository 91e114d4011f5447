/**
 * Rows as the text table of Spark's `Dataset.show` (Dataset.showString over ToPrettyString), used
 * by the console sink and meant for `df.show()`. Time zone: UTC.
 *
 *   +--------------------+-----+
 *   |              window|count|
 *   +--------------------+-----+
 *   |{2024-06-01 12:00...|    3|
 *   +--------------------+-----+
 *
 * Cells: NULL for null (also inside structs, arrays and maps), structs `{a, b}`, arrays `[a, b]`,
 * maps `{k -> v}`, timestamps `yyyy-MM-dd HH:mm:ss` with a fraction only when it is not zero,
 * doubles as Java prints them (5.0). With truncation (20 by default) a cell over that many
 * characters keeps its first truncate - 3 and "...", and cells are right-aligned; without it they
 * are left-aligned. Columns are at least 3 wide; full-width (CJK) characters count twice.
 */
import type { DataType, Row, Schema } from '../schema/types.js';
import { formatDouble, isArrayType, isMapType, isStructType } from '../schema/values.js';
import { formatDate, MS_PER_DAY } from '../schema/timestamps.js';
import { formatInterval, type Interval } from '../schema/intervals.js';

export interface ShowOptions {
  /** Rows shown; more give the footer "only showing top N rows". Default 20. */
  numRows?: number;
  /** Cells longer than this are cut (0: never, and cells are left-aligned). Default 20. */
  truncate?: number;
}

const NULL = 'NULL';

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Epoch ms as Spark shows a TIMESTAMP in UTC: '2024-06-01 12:02:00', '2024-06-01 12:02:00.5'. */
export function showTimestamp(ms: number): string {
  const day = Math.floor(ms / MS_PER_DAY);
  const date = formatDate(day);
  if (date === null) return String(ms);
  let rest = ms - day * MS_PER_DAY;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const frac = rest - s * 1000;
  const fraction = frac === 0 ? '' : `.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  return `${date} ${pad2(h)}:${pad2(m)}:${pad2(s)}${fraction}`;
}

const msOf = (v: unknown): number => (v instanceof Date ? v.getTime() : (v as number));

/** A value (engine form; a Date or a Map is accepted too) as Spark's ToPrettyString prints it. */
export function prettyString(value: unknown, type: DataType): string {
  if (value === null || value === undefined) return NULL;
  if (isStructType(type)) {
    const row = value as Row;
    return `{${type.struct.map((f) => prettyString(row[f.name], f.type)).join(', ')}}`;
  }
  if (isArrayType(type)) return `[${(value as unknown[]).map((x) => prettyString(x, type.array)).join(', ')}]`;
  if (isMapType(type)) {
    const entries = value instanceof Map ? [...value.entries()] : (value as Array<[unknown, unknown]>);
    const { key, value: valueType } = type.map;
    return `{${entries.map(([k, v]) => `${prettyString(k, key)} -> ${prettyString(v, valueType)}`).join(', ')}}`;
  }
  switch (type) {
    case 'timestamp':
      return showTimestamp(msOf(value));
    case 'date':
      return value instanceof Date ? showTimestamp(value.getTime()).slice(0, 10) : (formatDate(value as number) ?? String(value));
    case 'double':
      return typeof value === 'number' ? formatDouble(value) : String(value);
    case 'interval':
      return Array.isArray(value) ? formatInterval(value as Interval) : String(value);
    case 'null':
      return NULL;
    default:
      return String(value);
  }
}

/** Spark escapes these so that a cell stays on its line (SchemaUtils.escapeMetaCharacters). */
const META: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\f': '\\f', '\b': '\\b', '\v': '\\v', '\x07': '\\a' };
// biome-ignore lint/suspicious/noControlCharactersInRegex: the bell character (\x07) is one of the characters Spark escapes
const escapeMeta = (s: string): string => s.replace(/[\n\r\t\f\b\v\x07]/g, (c) => META[c]!);

// Spark's Utils.stringHalfWidth: these characters take two columns of a terminal.
const FULL_WIDTH = /[\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE10-\uFE19\uFE30-\uFE6F\uFF00-\uFF60\uFFE0-\uFFE6]/g;
const halfWidth = (s: string): number => s.length + (s.match(FULL_WIDTH)?.length ?? 0);

function cut(s: string, truncate: number): string {
  if (truncate <= 0 || s.length <= truncate) return s;
  // No ellipsis below 4 characters, as in Spark.
  return truncate < 4 ? s.slice(0, truncate) : `${s.slice(0, truncate - 3)}...`;
}

/**
 * The table `df.show(numRows, truncate)` prints, ending with a newline: a header, up to `numRows`
 * rows, and "only showing top N rows" when there were more.
 */
export function showString(rows: readonly Row[], schema: Schema, options: ShowOptions = {}): string {
  const numRows = Math.max(0, options.numRows ?? 20);
  const truncate = options.truncate ?? 20;
  const shown = rows.slice(0, numRows);
  const table: string[][] = [
    schema.map((f) => escapeMeta(f.name)),
    ...shown.map((r) => schema.map((f) => cut(escapeMeta(prettyString(r[f.name], f.type)), truncate))),
  ];
  const widths = schema.map((_, i) => Math.max(3, ...table.map((row) => halfWidth(row[i]!))));
  const padded = (cell: string, i: number): string => {
    const fill = ' '.repeat(widths[i]! - halfWidth(cell));
    return truncate > 0 ? fill + cell : cell + fill;
  };
  const sep = `+${widths.map((w) => '-'.repeat(w)).join('+')}+\n`;
  const line = (row: string[]): string => `|${row.map(padded).join('|')}|\n`;
  let out = sep + line(table[0]!) + sep;
  for (const row of table.slice(1)) out += line(row);
  out += sep;
  if (rows.length > numRows) out += `only showing top ${numRows} ${numRows === 1 ? 'row' : 'rows'}\n`;
  return out;
}
