/**
 * Hive-style partition directories, as Spark's file sink writes them with partitionBy: a row of
 * partition values (dt, hm) lives in `dt=<v>/hm=<v>/`, each value as text with the characters
 * Spark escapes (ExternalCatalogUtils.escapePathName) as %XX, and a null or empty one as
 * `__HIVE_DEFAULT_PARTITION__`. Readers turn the path back into the columns' values.
 */
import type { DataType, Row, Schema } from '../schema/types.js';
import { formatDate, parseDate, parseTimestamp } from '../schema/timestamps.js';

export const DEFAULT_PARTITION = '__HIVE_DEFAULT_PARTITION__';

/** The types a partition column may have: its value must be one path segment of text. */
export const PARTITION_TYPES: readonly DataType[] = ['string', 'int', 'long', 'boolean', 'date'];

const ESCAPED = new Set(['"', '#', '%', "'", '*', '/', ':', '=', '?', '\\', '\u007f', '{', '[', ']', '^']);

export function escapePathName(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    out += code < 0x20 || ESCAPED.has(ch) ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : ch;
  }
  return out;
}

export function unescapePathName(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function partitionText(v: unknown, type: DataType): string {
  if (v === null || v === undefined || v === '') return DEFAULT_PARTITION;
  return escapePathName(type === 'date' && typeof v === 'number' ? (formatDate(v) ?? String(v)) : String(v));
}

/** The function from a row to the relative directory `k=v/...` of its values of `columns` (fields of `schema`). */
export function partitionDirOf(columns: readonly string[], schema: Schema): (row: Row) => string {
  const parts = columns.map((c) => ({ c, prefix: `${escapePathName(c)}=`, type: schema.find((f) => f.name === c)?.type ?? 'string' }));
  return (row) => parts.map((p) => p.prefix + partitionText(row[p.c], p.type)).join('/');
}

/** The partition values (column to text, null for the default partition) of a relative file path; null without any. */
export function partitionValuesOf(relativePath: string): Record<string, string | null> | null {
  const values: Record<string, string | null> = {};
  let any = false;
  for (const segment of relativePath.split('/').slice(0, -1)) {
    const eq = segment.indexOf('=');
    if (eq <= 0) continue;
    const value = segment.slice(eq + 1);
    values[unescapePathName(segment.slice(0, eq))] = value === DEFAULT_PARTITION ? null : unescapePathName(value);
    any = true;
  }
  return any ? values : null;
}

/** A partition value's text as a value of `type` in engine form (null when it does not parse). */
export function partitionValue(text: string | null, type: DataType): unknown {
  if (text === null) return null;
  switch (type) {
    case 'int':
    case 'long': {
      const n = Number(text);
      return /^-?\d+$/.test(text) && Number.isSafeInteger(n) ? n : null;
    }
    case 'double': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : null;
    case 'date':
      return parseDate(text) ?? null;
    case 'timestamp':
      return parseTimestamp(text);
    default:
      return text;
  }
}
