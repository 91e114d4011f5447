/**
 * Values at the edges of the engine, and between types.
 *
 * Inside the engine a value is in "engine form": STRING a string, INT/LONG/DOUBLE a number,
 * BOOLEAN a boolean, TIMESTAMP epoch milliseconds (a number), STRUCT a plain object, NULL null.
 * User JavaScript (collect, memoryTable, foreachBatch, udf arguments) sees "external form", which
 * differs only for TIMESTAMP (a Date). Inputs (sources, udf results) may be looser: toInternal
 * accepts a Date, an ISO-8601 string or epoch milliseconds for a TIMESTAMP, and so on.
 *
 * Converters are built once per type (createTo*Converter) so that hot loops do no type dispatch.
 *
 * This module holds the casts and the conversions between forms; the questions about a DataType
 * (typeKinds.ts) and Spark's text forms (textForms.ts) are re-exported from here, where the engine
 * imports them.
 */
import { formatDate, MS_PER_DAY, parseDate, parseTimestamp } from './timestamps.js';
import { formatInterval, parseInterval, type Interval } from './intervals.js';
import type { ArrayType, DataType, MapType, Row, Schema, StructType } from './types.js';
import { isArrayType, isMapType, isStructType, sameType, type MapEntries } from './typeKinds.js';
import { formatDouble, formatTimestamp, MAX_TIMESTAMP_MS, parseBoolean, parseDouble, parseIntegral, saturate } from './textForms.js';

export { isArrayType, isAtomicType, isMapType, isNumberBacked, isNumericType, isStructType, sameType, typeName, type MapEntries } from './typeKinds.js';
export { formatDouble, formatTimestamp } from './textForms.js';

export type Converter = (value: unknown) => unknown;

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
/**
 * Sluice keeps a LONG in a JavaScript number, so it keeps only the LONGs a number holds exactly:
 * ±(2^53 − 1). A value beyond that is never rounded silently: input is malformed, a cast is null.
 */
const LONG_MIN = Number.MIN_SAFE_INTEGER;
const LONG_MAX = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------------------------------------
// Casts

/**
 * The conversion of a non-null engine value of type `from` to type `to`, following Spark's
 * non-ANSI cast: an unparsable string gives null rather than an error. Returns undefined when
 * Spark has no such cast (e.g. TIMESTAMP → STRUCT); the caller reports it at plan time.
 *
 * Numbers become timestamps as *seconds* since the epoch, as in Spark (CAST(1 AS TIMESTAMP) is
 * 1970-01-01T00:00:01Z), and timestamps become numbers as seconds. Epoch milliseconds in source
 * data are handled by toInternal, not by a cast.
 */
export function createCast(from: DataType, to: DataType): ((value: unknown) => unknown) | undefined {
  if (sameType(from, to)) return (v) => v;
  if (from === 'null') return () => null;
  if (isStructType(to)) return isStructType(from) ? structCast(from, to) : undefined;
  if (isStructType(from)) return to === 'string' ? structToString(from) : undefined;
  if (isArrayType(to)) return isArrayType(from) ? arrayCast(from, to) : undefined;
  if (isArrayType(from)) return to === 'string' ? arrayToString(from) : undefined;
  if (isMapType(to)) return isMapType(from) ? mapCast(from, to) : undefined;
  if (isMapType(from)) return to === 'string' ? mapToString(from) : undefined;
  if (to === 'date' || from === 'date') return dateCast(from, to);
  if (to === 'interval') return from === 'string' ? (v) => parseInterval(v as string) : undefined;
  if (from === 'interval') return to === 'string' ? (v) => formatInterval(v as Interval) : undefined;
  switch (to) {
    case 'string':
      if (from === 'double') return (v) => formatDouble(v as number);
      if (from === 'timestamp') return (v) => formatTimestamp(v as number);
      return (v) => String(v);
    case 'int':
      if (from === 'string') return (v) => parseIntegral(v as string, INT_MIN, INT_MAX);
      if (from === 'boolean') return (v) => (v ? 1 : 0);
      // LONG → INT keeps the low 32 bits, as Java's (int) cast does.
      if (from === 'long') return (v) => (v as number) | 0;
      if (from === 'timestamp') return (v) => Math.floor((v as number) / 1000) | 0;
      return (v) => saturate(v as number, INT_MIN, INT_MAX);
    case 'long':
      if (from === 'string') return (v) => parseIntegral(v as string, LONG_MIN, LONG_MAX);
      if (from === 'boolean') return (v) => (v ? 1 : 0);
      if (from === 'timestamp') return (v) => Math.floor((v as number) / 1000);
      // Spark saturates at the bounds of its 64-bit LONG; beyond 2^53 no number is exact, so null.
      return (v) => {
        const t = Number.isNaN(v as number) ? 0 : Math.trunc(v as number);
        return t >= LONG_MIN && t <= LONG_MAX ? t + 0 : null;
      };
    case 'double':
      if (from === 'string') return (v) => parseDouble(v as string);
      if (from === 'boolean') return (v) => (v ? 1 : 0);
      if (from === 'timestamp') return (v) => (v as number) / 1000;
      return (v) => v;
    case 'boolean':
      if (from === 'string') return (v) => parseBoolean(v as string);
      return (v) => v !== 0;
    case 'timestamp':
      if (from === 'string') return (v) => parseTimestamp(v as string);
      if (from === 'boolean') return (v) => (v ? 1000 : 0);
      return (v) => toTimestampMs((v as number) * 1000);
    case 'null':
      return undefined;
  }
}

/** STRUCT → STRUCT casts field by field, by position, as Spark does (field names come from `to`). */
function structCast(from: StructType, to: StructType): ((value: unknown) => unknown) | undefined {
  if (from.struct.length !== to.struct.length) return undefined;
  const fields: Array<{ src: string; dst: string; cast: (v: unknown) => unknown }> = [];
  for (let i = 0; i < to.struct.length; i++) {
    const f = from.struct[i]!;
    const g = to.struct[i]!;
    const cast = createCast(f.type, g.type);
    if (cast === undefined) return undefined;
    fields.push({ src: f.name, dst: g.name, cast });
  }
  return (v) => {
    const obj = v as Row;
    const out: Row = {};
    for (const { src, dst, cast } of fields) {
      const x = obj[src];
      out[dst] = x == null ? null : cast(x);
    }
    return out;
  };
}

/** DATE ⇄ STRING and TIMESTAMP (midnight UTC); Spark has no cast between DATE and numbers or booleans. */
function dateCast(from: DataType, to: DataType): ((value: unknown) => unknown) | undefined {
  if (to === 'string') return (v) => formatDate(v as number);
  if (to === 'timestamp') return (v) => (v as number) * MS_PER_DAY;
  if (from === 'string') return (v) => parseDate(v as string);
  if (from === 'timestamp') return (v) => Math.floor((v as number) / MS_PER_DAY);
  return undefined;
}

function arrayCast(from: ArrayType, to: ArrayType): ((value: unknown) => unknown) | undefined {
  const cast = createCast(from.array, to.array);
  if (cast === undefined) return undefined;
  return (v) => (v as unknown[]).map((x) => (x == null ? null : cast(x)));
}

function mapCast(from: MapType, to: MapType): ((value: unknown) => unknown) | undefined {
  const key = createCast(from.map.key, to.map.key);
  const value = createCast(from.map.value, to.map.value);
  if (key === undefined || value === undefined) return undefined;
  return (v) => (v as MapEntries).map(([k, x]) => [key(k), x == null ? null : value(x)]);
}

/** Spark prints an array as "[a, b]" and a map as "{k1 -> v1, k2 -> v2}", null as "null". */
function arrayToString(from: ArrayType): (value: unknown) => unknown {
  const str = toText(from.array);
  return (v) => `[${(v as unknown[]).map(str).join(', ')}]`;
}

function mapToString(from: MapType): (value: unknown) => unknown {
  const key = toText(from.map.key);
  const value = toText(from.map.value);
  return (v) => `{${(v as MapEntries).map(([k, x]) => `${key(k)} -> ${value(x)}`).join(', ')}}`;
}

function toText(t: DataType): (v: unknown) => string {
  const cast = createCast(t, 'string') ?? String;
  return (v) => (v == null ? 'null' : String(cast(v)));
}

/** Spark prints a struct as "{a, b}" with each field cast to string and null as "null". */
function structToString(from: StructType): (value: unknown) => unknown {
  const fields = from.struct.map((f) => ({ name: f.name, cast: createCast(f.type, 'string') ?? String }));
  return (v) => {
    const obj = v as Row;
    return `{${fields.map(({ name, cast }) => (obj[name] == null ? 'null' : String(cast(obj[name])))).join(', ')}}`;
  };
}

// ---------------------------------------------------------------------------------------------
// Engine form ⇄ external form

const identity: Converter = (v) => (v === undefined ? null : v);

/**
 * Engine → JavaScript: TIMESTAMP ms become Dates, DATE days a Date at UTC midnight, MAP entries a
 * Map; structs and arrays are converted field by field and element by element.
 */
export function createToExternalConverter(type: DataType): Converter {
  if (type === 'timestamp') return (v) => (v == null ? null : v instanceof Date ? v : new Date(v as number));
  if (type === 'date') return (v) => (v == null ? null : v instanceof Date ? v : new Date((v as number) * MS_PER_DAY));
  if (isStructType(type)) {
    const row = createRowConverter(type.struct, createToExternalConverter);
    return (v) => (v == null ? null : row(v as Row));
  }
  if (isArrayType(type)) {
    const element = createToExternalConverter(type.array);
    return (v) => (v == null ? null : (v as unknown[]).map(element));
  }
  if (isMapType(type)) {
    const key = createToExternalConverter(type.map.key);
    const value = createToExternalConverter(type.map.value);
    return (v) => (v == null ? null : new Map((v as MapEntries).map(([k, x]) => [key(k), value(x)])));
  }
  return identity;
}

/** The entries of a map as user JavaScript may give it: a Map, entry pairs, or a plain object. */
function entriesOf(v: unknown): Array<[unknown, unknown]> | undefined {
  if (v instanceof Map) return [...v.entries()];
  if (Array.isArray(v)) return v.every((e) => Array.isArray(e) && e.length === 2) ? (v as Array<[unknown, unknown]>) : undefined;
  if (v !== null && typeof v === 'object' && !(v instanceof Date)) return Object.entries(v);
  return undefined;
}

/**
 * JavaScript (source records, memory tables) → engine form. Values already in engine form pass
 * through; looser forms are converted: a Date, ISO-8601 text or epoch-ms number (also as a string
 * of digits) for a TIMESTAMP, numeric or boolean text for numbers and booleans, a number or Date
 * for a STRING. A value that cannot stand for the type becomes null, as a PySpark udf's result
 * of the wrong type does; undefined becomes null.
 */
export function createToInternalConverter(type: DataType): Converter {
  if (isStructType(type)) {
    const row = createRowConverter(type.struct, createToInternalConverter);
    return (v) => (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date) ? row(v as Row) : null);
  }
  if (isArrayType(type)) {
    const element = createToInternalConverter(type.array);
    return (v) => (Array.isArray(v) ? v.map(element) : null);
  }
  if (isMapType(type)) {
    const key = createToInternalConverter(type.map.key);
    const value = createToInternalConverter(type.map.value);
    return (v) => {
      const entries = entriesOf(v);
      if (entries === undefined) return null;
      const out: MapEntries = [];
      for (const [k, x] of entries) {
        const ik = key(k);
        if (ik !== null) out.push([ik, value(x)]);
      }
      return out;
    };
  }
  switch (type) {
    case 'string':
      return (v) => {
        if (typeof v === 'string') return v;
        if (v == null) return null;
        if (v instanceof Date) return formatTimestamp(v.getTime());
        return typeof v === 'object' ? JSON.stringify(v) : String(v);
      };
    case 'int':
    case 'long': {
      const [min, max] = type === 'int' ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX];
      return (v) => {
        if (typeof v === 'number') {
          const t = Math.trunc(v);
          return t >= min && t <= max ? t + 0 : null; // + 0 turns -0 into 0; NaN fails the test
        }
        if (typeof v === 'string') return parseIntegral(v, min, max);
        if (typeof v === 'bigint') return v >= BigInt(min) && v <= BigInt(max) ? Number(v) : null;
        if (typeof v === 'boolean') return v ? 1 : 0;
        return null;
      };
    }
    case 'double':
      return (v) => {
        if (typeof v === 'number') return v;
        if (typeof v === 'string') return parseDouble(v);
        if (typeof v === 'bigint') return Number(v);
        if (typeof v === 'boolean') return v ? 1 : 0;
        return null;
      };
    case 'boolean':
      return (v) => {
        if (typeof v === 'boolean') return v;
        if (typeof v === 'string') return parseBoolean(v);
        if (typeof v === 'number') return v !== 0;
        return null;
      };
    case 'timestamp':
      return (v) => {
        if (typeof v === 'number') return toTimestampMs(v);
        if (v instanceof Date) {
          const t = v.getTime();
          return Number.isNaN(t) ? null : t;
        }
        // Digits alone are epoch ms (the second input form of timestamps, docs/guides/streaming-model.md), not a year as in Spark's cast.
        if (typeof v === 'string') return /^\s*-?\d+\s*$/.test(v) ? toTimestampMs(Number(v)) : parseTimestamp(v);
        if (typeof v === 'bigint') return toTimestampMs(Number(v));
        return null;
      };
    case 'interval':
      return (v) => (Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number') ? v : typeof v === 'string' ? parseInterval(v) : null);
    case 'date':
      // A number is days since the epoch (the engine form); a Date or a timestamp's text is its UTC day.
      return (v) => {
        if (typeof v === 'number') return Number.isFinite(v) ? Math.floor(v) + 0 : null;
        if (v instanceof Date) return dateOfMs(v.getTime());
        if (typeof v === 'string') return parseDate(v);
        return null;
      };
    case 'null':
      return () => null;
  }
}

function dateOfMs(ms: number): number | null {
  return Number.isNaN(ms) ? null : Math.floor(ms / MS_PER_DAY);
}

function toTimestampMs(ms: number): number | null {
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_TIMESTAMP_MS ? Math.trunc(ms) + 0 : null;
}

/** What a strict converter does with a value not of the type: throw, naming `field` (a dotted path, '' at the top). */
export type Mismatch = (value: unknown, expected: DataType, field: string) => never;

/**
 * JavaScript → engine form, strictly (udf results): null or undefined, or a value of the type as
 * it is: a string for STRING, a boolean for BOOLEAN, a number for DOUBLE, an integer number (or
 * bigint) in range for INT and LONG, a Date or epoch ms for a TIMESTAMP, a plain object for a
 * STRUCT, whose fields follow the same rule. Anything else goes to `mismatch`.
 */
export function createStrictConverter(type: DataType, mismatch: Mismatch, field = ''): Converter {
  const fail = (v: unknown): never => mismatch(v, type, field);
  if (isArrayType(type)) {
    const element = createStrictConverter(type.array, mismatch, `${field}[]`);
    return (v) => (v == null ? null : Array.isArray(v) ? v.map(element) : fail(v));
  }
  if (isMapType(type)) {
    const key = createStrictConverter(type.map.key, mismatch, `${field}{key}`);
    const value = createStrictConverter(type.map.value, mismatch, `${field}{value}`);
    return (v) => {
      if (v == null) return null;
      if (!(v instanceof Map)) return fail(v);
      return [...v.entries()].map(([k, x]) => [k == null ? fail(k) : key(k), value(x)]);
    };
  }
  if (isStructType(type)) {
    const fields = type.struct.map((f) => ({ name: f.name, convert: createStrictConverter(f.type, mismatch, field ? `${field}.${f.name}` : f.name) }));
    return (v) => {
      if (v == null) return null;
      if (typeof v !== 'object' || Array.isArray(v) || v instanceof Date) return fail(v);
      const row: Row = {};
      for (const f of fields) row[f.name] = f.convert((v as Row)[f.name]);
      return row;
    };
  }
  switch (type) {
    case 'string':
      return (v) => (v == null ? null : typeof v === 'string' ? v : fail(v));
    case 'boolean':
      return (v) => (v == null ? null : typeof v === 'boolean' ? v : fail(v));
    case 'double':
      return (v) => (v == null ? null : typeof v === 'number' ? v : fail(v));
    case 'int':
    case 'long': {
      const [min, max] = type === 'int' ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX];
      return (v) => {
        if (v == null) return null;
        const n = typeof v === 'bigint' && v >= BigInt(min) && v <= BigInt(max) ? Number(v) : v;
        return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n + 0 : fail(v);
      };
    }
    case 'timestamp':
      return (v) => {
        if (v == null) return null;
        const ms = v instanceof Date ? v.getTime() : v;
        return (typeof ms === 'number' ? toTimestampMs(ms) : null) ?? fail(v);
      };
    case 'date':
      return (v) => (v == null ? null : v instanceof Date ? (dateOfMs(v.getTime()) ?? fail(v)) : fail(v));
    case 'interval':
      return (v) => (v == null ? null : Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number') ? v : fail(v));
    case 'null':
      return (v) => (v == null ? null : fail(v));
  }
}

/** Builds a converter for rows of `fields`: a new object with exactly those fields, in order. */
function createRowConverter(fields: Schema, make: (t: DataType) => Converter): (row: Row) => Row {
  const conv = fields.map((f) => ({ name: f.name, convert: make(f.type) }));
  return (row) => {
    const out: Row = {};
    for (const { name, convert } of conv) out[name] = convert(row[name]);
    return out;
  };
}

export function toExternal(value: unknown, type: DataType): unknown {
  return createToExternalConverter(type)(value);
}

export function toInternal(value: unknown, type: DataType): unknown {
  return createToInternalConverter(type)(value);
}

// Converters are cached per schema object: plans hand the same Schema to every row of a batch.
const externalRowConverters = new WeakMap<Schema, (row: Row) => Row>();
const internalRowConverters = new WeakMap<Schema, (row: Row) => Row>();

/** A new row with the schema's fields in external form; fields outside the schema are dropped. */
export function rowToExternal(row: Row, schema: Schema): Row {
  let convert = externalRowConverters.get(schema);
  if (convert === undefined) {
    convert = createRowConverter(schema, createToExternalConverter);
    externalRowConverters.set(schema, convert);
  }
  return convert(row);
}

/** A new row with the schema's fields in engine form; a missing field becomes null. */
export function rowToInternal(row: Row, schema: Schema): Row {
  let convert = internalRowConverters.get(schema);
  if (convert === undefined) {
    convert = createRowConverter(schema, createToInternalConverter);
    internalRowConverters.set(schema, convert);
  }
  return convert(row);
}
