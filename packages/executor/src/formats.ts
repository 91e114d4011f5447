/**
 * Line-oriented file formats: JSON lines, CSV (one record per line, RFC 4180 quoting inside the
 * line) and text, read into engine rows and written back from them.
 *
 * Reading follows Spark's parse modes. A record is malformed when its line is not a JSON object,
 * has unbalanced CSV quoting, has a CSV field count other than the header's (or the schema's), or
 * holds a value that cannot become its column's type. In PERMISSIVE mode such a line still gives a
 * row: the columns that parsed keep their values, the others are null (Spark 3's behaviour), and
 * the corrupt-record column, when the schema declares it, holds the raw line. Nullability is not
 * enforced on read (Spark reads files with `schema.asNullable`).
 *
 * Speed: every (format, schema, options) compiles once into generated row builders that read the
 * fields by constant keys and build rows from one object literal, so rows share a shape and the
 * per-row loop does no schema lookups.
 */
import { readFileSync } from 'node:fs';
import { SluiceError } from '@sluice/state';
import type { ReadOptions, WriteOptions } from './messages.js';
import { dataTypeToDDL, schemaToDDL } from './schema.js';
import type { DataType, Field, Row, Schema } from './types.js';

export type ReadFormat = 'json' | 'csv' | 'text';
export type WriteFormat = 'json' | 'csv';

export const kDefaultReadOptions: ReadOptions = {
  mode: 'PERMISSIVE',
  columnNameOfCorruptRecord: '_corrupt_record',
  header: false,
  sep: ',',
};
export const kDefaultWriteOptions: WriteOptions = { header: false, sep: ',' };

/**
 * Spark fills the corrupt-record column only when the user schema declares it. The driver calls
 * this when the user set `columnNameOfCorruptRecord` explicitly, to declare it for them.
 */
export function withCorruptRecordColumn(schema: Schema, options: Pick<ReadOptions, 'columnNameOfCorruptRecord'>): Schema {
  const name = options.columnNameOfCorruptRecord || kDefaultReadOptions.columnNameOfCorruptRecord;
  if (schema.some((f) => f.name === name)) return schema;
  return [...schema, { name, type: 'string', nullable: true }];
}

/** Eager checks the driver can run before a query starts; the readers run them too. */
export function validateReadSchema(format: ReadFormat, schema: Schema, options: ReadOptions): void {
  if (format === 'csv' && (typeof options.sep !== 'string' || options.sep === '')) {
    throw new SluiceError('INVALID_OPTION', 'options.sep must be a non-empty string', { option: 'sep' });
  }
  if (format === 'text') {
    if (schema.length > 1 || (schema[0] !== undefined && schema[0].type !== 'string')) {
      throw new SluiceError(
        'INVALID_SCHEMA',
        `options.schema: the text format has exactly one STRING column (value STRING), got '${schemaToDDL(schema)}'`,
        { option: 'schema' },
      );
    }
    return;
  }
  const corrupt = schema.find((f) => f.name === corruptName(options));
  if (corrupt !== undefined && corrupt.type !== 'string') {
    throw new SluiceError(
      'INVALID_SCHEMA',
      `options.columnNameOfCorruptRecord: column '${corrupt.name}' must be STRING, got ${dataTypeToDDL(corrupt.type)}`,
      { option: 'columnNameOfCorruptRecord', column: corrupt.name },
    );
  }
}

/** Parses the lines of one file's text; `file` is for error messages. */
export function parseRecords(format: ReadFormat, text: string, schema: Schema, options: ReadOptions, file: string): Row[] {
  return compiled(`r\0${format}\0${options.mode}\0${corruptName(options)}\0${options.header}\0${options.sep}`, schema, () =>
    compileReader(format, schema, options),
  )(text, file);
}

export function readFileRecords(format: ReadFormat, path: string, schema: Schema, options: ReadOptions): Row[] {
  return parseRecords(format, readSourceFile(path), schema, options, path);
}

/** Rows to file text, one record per line, each ending with '\n'. */
export function formatRecords(format: WriteFormat, rows: Row[], schema: Schema, options: WriteOptions): string {
  const sep = options.sep ?? kDefaultWriteOptions.sep;
  const head = format === 'csv' && options.header ? csvHeader(schema, sep) + '\n' : '';
  if (rows.length === 0) return head;
  const write = compiled(`w\0${format}\0${sep}`, schema, () =>
    format === 'json' ? compileJsonWriter(schema, '}\n') : csvRowsWriter(compileCsvWriter(schema, sep)),
  );
  // Writers push pieces and one join per chunk makes flat text: concatenating per row would build
  // millions of short-lived rope nodes, which costs more in GC than the formatting itself.
  const chunks: string[] = [head];
  const pieces: string[] = [];
  for (let i = 0; i < rows.length; i++) {
    write(rows[i]!, pieces);
    if ((i & 8191) === 8191) {
      chunks.push(pieces.join(''));
      pieces.length = 0;
    }
  }
  chunks.push(pieces.join(''));
  return chunks.join('');
}

// ---------------------------------------------------------------------------------------------
// Compilation cache: a task reads many files with one schema; a worker runs many tasks.

const cache = new Map<string, (...a: never[]) => unknown>();

function compiled<F extends (...a: never[]) => unknown>(key: string, schema: Schema, make: () => F): F {
  const full = key + '\0' + JSON.stringify(schema);
  let f = cache.get(full);
  if (f === undefined) {
    if (cache.size >= 256) cache.clear();
    f = make();
    cache.set(full, f);
  }
  return f as F;
}

// ---------------------------------------------------------------------------------------------
// Values. A converter takes a non-null input value and returns the engine value or BAD.

const BAD: unique symbol = Symbol('malformed');
type Conv = (v: unknown) => unknown;
interface Flag {
  bad: boolean;
}

function jsonConv(t: DataType): Conv {
  switch (t) {
    case 'string':
      return (v) => (typeof v === 'string' ? v : JSON.stringify(v)); // Spark keeps a non-string as its JSON text
    case 'int':
      return (v) => (typeof v === 'number' && (v | 0) === v ? v : BAD);
    case 'long':
      return (v) => (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2 ** 63 ? v : BAD);
    case 'double':
      return (v) => (typeof v === 'number' ? v : typeof v === 'string' ? specialDouble(v) : BAD);
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? v : BAD);
    case 'timestamp':
      return (v) =>
        typeof v === 'number' ? (Number.isFinite(v) ? Math.floor(v) : BAD) : typeof v === 'string' ? isoOrBad(v) : BAD;
    case 'null':
      return () => null;
    default:
      return structConv(t.struct);
  }
}

function csvConv(t: DataType): Conv {
  switch (t) {
    case 'string':
      return (v) => v;
    case 'int':
      return (v) => {
        const s = v as string;
        if (!/^[+-]?\d{1,10}$/.test(s)) return BAD;
        const n = Number(s);
        return (n | 0) === n ? n : BAD;
      };
    case 'long':
      return (v) => (/^[+-]?\d{1,19}$/.test(v as string) ? Number(v) : BAD);
    case 'double':
      return (v) => (kDoubleText.test(v as string) ? Number(v) : BAD);
    case 'boolean':
      return (v) => {
        const s = (v as string).toLowerCase();
        return s === 'true' ? true : s === 'false' ? false : BAD;
      };
    case 'timestamp':
      return (v) => (/^-?\d+$/.test(v as string) ? Number(v) : isoOrBad(v as string));
    case 'null':
      return () => null;
    default: {
      // A CSV struct field holds the struct's JSON text, as the CSV writer writes it.
      const c = structConv(t.struct);
      return (v) => {
        try {
          return c(JSON.parse(v as string));
        } catch {
          return BAD;
        }
      };
    }
  }
}

// Java's Double.parseDouble without the d/f suffixes and hex forms.
const kDoubleText = /^\s*[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*$/;

function specialDouble(s: string): unknown {
  return s === 'NaN' ? NaN : s === 'Infinity' || s === '+Infinity' ? Infinity : s === '-Infinity' ? -Infinity : BAD;
}

function isoOrBad(s: string): unknown {
  const ms = parseIsoTimestamp(s);
  return ms === ms ? ms : BAD;
}

function structConv(fields: Field[]): Conv {
  const flag: Flag = { bad: false };
  const build = compileObjectBuilder(fields, null, flag);
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return BAD;
    const row = build(v as Record<string, unknown>);
    return flag.bad ? BAD : row;
  };
}

/**
 * ISO-8601 to epoch milliseconds, or NaN: `YYYY-MM-DD`, then optionally `T` (or a space)
 * `HH:MM[:SS[.fraction]]` and a zone `Z`, `±HH`, `±HHMM` or `±HH:MM`. No zone means UTC.
 * Digits past milliseconds are truncated.
 */
export function parseIsoTimestamp(s: string): number {
  const len = s.length;
  const y = d2(s, 0) * 100 + d2(s, 2);
  const mo = d2(s, 5);
  const d = d2(s, 8);
  if (!(y >= 0) || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || !(mo >= 1 && mo <= 12)) return NaN;
  if (!(d >= 1 && d <= daysInMonth(y, mo))) return NaN;
  let ms = daysFromCivil(y, mo, d) * 86_400_000;
  if (len === 10) return ms;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116 && t !== 32) return NaN;
  const h = d2(s, 11);
  const mi = d2(s, 14);
  if (!(h >= 0 && h <= 23) || s.charCodeAt(13) !== 58 || !(mi >= 0 && mi <= 59)) return NaN;
  ms += h * 3_600_000 + mi * 60_000;
  let i = 16;
  if (s.charCodeAt(i) === 58) {
    const sec = d2(s, 17);
    if (!(sec >= 0 && sec <= 59)) return NaN;
    ms += sec * 1000;
    i = 19;
    const dot = s.charCodeAt(i);
    if (dot === 46 || dot === 44) {
      const start = ++i;
      let frac = 0;
      for (let c = s.charCodeAt(i) - 48; c >= 0 && c <= 9; c = s.charCodeAt(++i) - 48) {
        if (i - start < 3) frac = frac * 10 + c;
      }
      if (i === start) return NaN;
      for (let n = i - start; n < 3; n++) frac *= 10;
      ms += frac;
    }
  }
  if (i === len) return ms;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === len ? ms : NaN;
  if (z !== 43 && z !== 45) return NaN;
  const oh = d2(s, i + 1);
  let om = 0;
  i += 3;
  if (i < len) {
    if (s.charCodeAt(i) === 58) i++;
    om = d2(s, i);
    i += 2;
  }
  if (!(oh >= 0 && oh <= 18) || !(om >= 0 && om <= 59) || i !== len) return NaN;
  return ms - (z === 43 ? 1 : -1) * (oh * 60 + om) * 60_000;
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

// ---------------------------------------------------------------------------------------------
// Generated row builders. They set `flag.bad` when a value did not convert (that column is null).

/** A JS source key for an object literal; `__proto__` must be computed to stay a plain key. */
function litKey(name: string): string {
  return name === '__proto__' ? `[${JSON.stringify(name)}]` : JSON.stringify(name);
}

/** Builds rows from parsed JSON objects. The corrupt-record column, if given, is set to null. */
function compileObjectBuilder(fields: Field[], corrupt: string | null, flag: Flag): (o: Record<string, unknown>) => Row {
  const convs: Array<Conv | undefined> = [];
  const body: string[] = [];
  const props: string[] = [];
  fields.forEach((f, i) => {
    if (f.name === corrupt || f.type === 'null') {
      props.push(`${litKey(f.name)}: null`);
      return;
    }
    convs[i] = jsonConv(f.type);
    const k = JSON.stringify(f.name);
    // A missing "constructor" must not read Object.prototype's.
    const read = f.name in Object.prototype ? `(Object.hasOwn(o, ${k}) ? o[${k}] : undefined)` : `o[${k}]`;
    const fast = jsonFastTest(f.type);
    body.push(
      `v = ${read}; let x${i};`,
      `${fast ? `if (${fast}) x${i} = v; else ` : ''}if (v == null) x${i} = null; ` +
        `else { x${i} = c${i}(v); if (x${i} === BAD) { b = true; x${i} = null; } }`,
    );
    props.push(`${litKey(f.name)}: x${i}`);
  });
  return generate(convs, flag, 'o', body, props) as (o: Record<string, unknown>) => Row;
}

function jsonFastTest(t: DataType): string | null {
  switch (t) {
    case 'string':
      return 'typeof v === "string"';
    case 'int':
      return 'typeof v === "number" && (v | 0) === v';
    case 'long':
      return 'typeof v === "number" && Number.isSafeInteger(v)';
    case 'double':
      return 'typeof v === "number"';
    case 'boolean':
      return 'typeof v === "boolean"';
    case 'timestamp':
      return 'typeof v === "number" && Number.isInteger(v)';
    default:
      return null;
  }
}

/** Tokens past the end read as undefined: a column absent from the header points here. */
const kMissing = 0x3fffffff;

/**
 * Builds rows from CSV tokens (null = empty unquoted field). Binding a per-file index map `m`
 * (schema position → token position) gives the builder for that file's header.
 */
function compileTokenBuilder(fields: Field[], corrupt: string | null, flag: Flag): (m: Int32Array) => (t: Array<string | null>) => Row {
  const convs: Array<Conv | undefined> = [];
  const body: string[] = [];
  const props: string[] = [];
  const binds: string[] = [];
  fields.forEach((f, i) => {
    if (f.name === corrupt || f.type === 'null') {
      props.push(`${litKey(f.name)}: null`);
      return;
    }
    binds.push(`m${i} = m[${i}]`);
    if (f.type === 'string') {
      // A quoted empty field ("") stays an empty string; an unquoted one is null.
      body.push(`v = t[m${i}]; const x${i} = v == null ? null : v;`);
    } else {
      convs[i] = csvConv(f.type);
      body.push(
        `v = t[m${i}]; let x${i};`,
        `if (v == null || v === "") x${i} = null; else { x${i} = c${i}(v); if (x${i} === BAD) { b = true; x${i} = null; } }`,
      );
    }
    props.push(`${litKey(f.name)}: x${i}`);
  });
  const inner = generateSource('t', body, props);
  const src = `${prelude(convs)} return function bind(m) { ${binds.length ? `const ${binds.join(', ')};` : ''} return ${inner}; };`;
  return new Function('C', 'BAD', 'F', src)(convs, BAD, flag) as (m: Int32Array) => (t: Array<string | null>) => Row;
}

function prelude(convs: Array<Conv | undefined>): string {
  const cs = convs.flatMap((c, i) => (c ? [`c${i} = C[${i}]`] : []));
  return `"use strict"; ${cs.length ? `const ${cs.join(', ')};` : ''}`;
}

function generateSource(arg: string, body: string[], props: string[]): string {
  return `function build(${arg}) { let b = false, v; ${body.join('\n')}\nF.bad = b; return {${props.join(', ')}}; }`;
}

function generate(convs: Array<Conv | undefined>, flag: Flag, arg: string, body: string[], props: string[]): unknown {
  const src = `${prelude(convs)} return ${generateSource(arg, body, props)};`;
  return new Function('C', 'BAD', 'F', src)(convs, BAD, flag);
}

// ---------------------------------------------------------------------------------------------
// Readers

type Reader = (text: string, file: string) => Row[];

interface Malformed {
  message: string;
  column?: string;
}

function compileReader(format: ReadFormat, schema: Schema, options: ReadOptions): Reader {
  validateReadSchema(format, schema, options);
  if (format === 'text') {
    const name = schema[0]?.name ?? 'value';
    const make = new Function('l', `return {${litKey(name)}: l};`) as (l: string) => Row;
    return (text) => {
      const rows: Row[] = [];
      forEachLine(text, (line) => void rows.push(make(line)));
      return rows;
    };
  }
  const corrupt = corruptName(options);
  const inSchema = schema.some((f) => f.name === corrupt) ? corrupt : null;
  const mode = options.mode;
  const dataFields = schema.filter((f) => f.name !== corrupt);

  /** Returns nothing; pushes the row Spark's mode asks for, or throws in FAILFAST. */
  const malformed = (rows: Row[], row: Row, line: string, lineNo: number, file: string, why: () => Malformed): void => {
    if (mode === 'DROPMALFORMED') return;
    if (mode === 'FAILFAST') {
      const m = why();
      throw new SluiceError(
        'MALFORMED_RECORD',
        `malformed ${format.toUpperCase()} record in ${file} at line ${lineNo}: ${m.message} ` +
          `(mode FAILFAST; PERMISSIVE or DROPMALFORMED keep reading)`,
        { file, line: lineNo, ...(m.column !== undefined && { column: m.column }) },
      );
    }
    if (inSchema !== null) row[inSchema] = line;
    rows.push(row);
  };

  if (format === 'json') {
    const flag: Flag = { bad: false };
    const build = compileObjectBuilder(schema, inSchema, flag);
    return (text, file) => {
      const rows: Row[] = [];
      forEachLine(text, (line, lineNo) => {
        if (isBlank(line)) return;
        let o: unknown;
        try {
          o = JSON.parse(line);
        } catch (e) {
          const message = `invalid JSON (${(e as Error).message})`;
          return malformed(rows, build({}), line, lineNo, file, () => ({ message }));
        }
        if (o === null || typeof o !== 'object' || Array.isArray(o)) {
          return malformed(rows, build({}), line, lineNo, file, () => ({ message: 'a line must hold one JSON object' }));
        }
        const row = build(o as Record<string, unknown>);
        if (flag.bad) return malformed(rows, row, line, lineNo, file, () => diagnose(dataFields, o, jsonConv, ''));
        rows.push(row);
      });
      return rows;
    };
  }

  const sep = options.sep;
  const flag: Flag = { bad: false };
  const bindBuilder = compileTokenBuilder(schema, inSchema, flag);
  const positional = new Int32Array(schema.length).fill(kMissing);
  dataFields.forEach((f, pos) => (positional[schema.indexOf(f)] = pos));
  return (text, file) => {
    const rows: Row[] = [];
    let map: Int32Array = positional;
    let build = options.header ? null : bindBuilder(map);
    let expected = dataFields.length;
    forEachLine(text, (line, lineNo) => {
      if (isBlank(line)) return;
      const t = splitCsvLine(line, sep);
      if (build === null) {
        if (t === null) {
          throw new SluiceError('MALFORMED_RECORD', `malformed CSV header in ${file} at line ${lineNo}: unbalanced quotes`, {
            file,
            line: lineNo,
          });
        }
        map = headerMap(schema, corrupt, t);
        build = bindBuilder(map);
        expected = t.length;
        return;
      }
      if (t === null) {
        return malformed(rows, build([]), line, lineNo, file, () => ({ message: 'unbalanced quotes' }));
      }
      const row = build(t);
      if (flag.bad || t.length !== expected) {
        const n = t.length;
        return malformed(rows, row, line, lineNo, file, () =>
          n !== expected ? { message: `expected ${expected} fields, found ${n}` } : diagnoseCsv(schema, corrupt, map, t),
        );
      }
      rows.push(row);
    });
    return rows;
  };
}

/** Header names map to schema columns exactly, else case-insensitively; first match wins. */
function headerMap(schema: Schema, corrupt: string, header: Array<string | null>): Int32Array {
  const names = header.map((h) => h ?? '');
  const lower = names.map((h) => h.toLowerCase());
  const m = new Int32Array(schema.length).fill(kMissing);
  schema.forEach((f, i) => {
    if (f.name === corrupt) return;
    let k = names.indexOf(f.name);
    if (k < 0) k = lower.indexOf(f.name.toLowerCase());
    if (k >= 0) m[i] = k;
  });
  return m;
}

function diagnose(fields: Field[], o: unknown, conv: (t: DataType) => Conv, prefix: string): Malformed {
  for (const f of fields) {
    const v = Object.hasOwn(o as object, f.name) ? (o as Record<string, unknown>)[f.name] : undefined;
    if (v == null || conv(f.type)(v) !== BAD) continue;
    const column = prefix + f.name;
    if (typeof f.type === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return diagnose(f.type.struct, v, conv, column + '.');
    }
    return { message: `column '${column}': cannot read ${preview(v)} as ${dataTypeToDDL(f.type)}`, column };
  }
  return { message: 'a value does not match the schema' };
}

function diagnoseCsv(schema: Schema, corrupt: string, m: Int32Array, t: Array<string | null>): Malformed {
  for (let i = 0; i < schema.length; i++) {
    const f = schema[i]!;
    const v = t[m[i]!];
    if (f.name === corrupt || f.type === 'string' || v == null || v === '') continue;
    if (csvConv(f.type)(v) === BAD) {
      return { message: `column '${f.name}': cannot read ${preview(v)} as ${dataTypeToDDL(f.type)}`, column: f.name };
    }
  }
  return { message: 'a value does not match the schema' };
}

function preview(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}

/** Calls `fn` per line (1-based numbers), without '\r\n' endings or the empty tail after a final '\n'. */
function forEachLine(text: string, fn: (line: string, lineNo: number) => void): void {
  const len = text.length;
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let lineNo = 0;
  while (start < len) {
    let end = text.indexOf('\n', start);
    const next = end === -1 ? len : end + 1;
    if (end === -1) end = len;
    if (end > start && text.charCodeAt(end - 1) === 13) end--;
    fn(text.slice(start, end), ++lineNo);
    start = next;
  }
}

function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '');
}

/**
 * One CSV line to fields: null for an empty unquoted field, '' for `""`. Returns null for an
 * unterminated quote or text after a closing quote. A quote inside an unquoted field is literal.
 */
export function splitCsvLine(line: string, sep: string): Array<string | null> | null {
  if (line.indexOf('"') === -1) {
    const parts: Array<string | null> = line.split(sep);
    for (let i = 0; i < parts.length; i++) if (parts[i] === '') parts[i] = null;
    return parts;
  }
  const out: Array<string | null> = [];
  const n = line.length;
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34) {
      let j = i + 1;
      let val = '';
      for (;;) {
        const q = line.indexOf('"', j);
        if (q === -1) return null;
        if (line.charCodeAt(q + 1) === 34) {
          val += line.slice(j, q + 1);
          j = q + 2;
          continue;
        }
        val += line.slice(j, q);
        i = q + 1;
        break;
      }
      out.push(val);
      if (i === n) return out;
      if (!line.startsWith(sep, i)) return null;
      i += sep.length;
    } else {
      const k = line.indexOf(sep, i);
      const tok = line.slice(i, k === -1 ? n : k);
      out.push(tok === '' ? null : tok);
      if (k === -1) return out;
      i = k + sep.length;
    }
  }
}

function corruptName(options: { columnNameOfCorruptRecord?: string | undefined }): string {
  return options.columnNameOfCorruptRecord || kDefaultReadOptions.columnNameOfCorruptRecord;
}

function readSourceFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new SluiceError('SOURCE_FILE_UNREADABLE', `cannot read source file ${path}: ${(e as Error).message}`, {
      file: path,
      cause: e,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Writers. Doubles print as Spark prints them (5 as "5.0"); timestamps as ISO-8601 UTC.

type Enc = (v: unknown) => string;
type PieceWriter = (r: Row, out: string[]) => void;

/**
 * A generated writer: rows without nulls push their pieces in one call; otherwise each present
 * field pushes its key (with a comma unless first) and value. Struct values write themselves.
 * `close` ends the object ('}' nested, '}\n' for a record).
 */
function compileJsonWriter(fields: Field[], close: string): PieceWriter {
  const encs: Array<Enc | PieceWriter | undefined> = [];
  const present: Array<{ i: number; key: string; read: string; value: string | null }> = [];
  fields.forEach((f, i) => {
    if (f.type === 'null') return; // always null, and Spark's JSON writer drops null fields
    const k = JSON.stringify(f.name);
    const v = `v${i}`;
    const read = f.name in Object.prototype ? `(Object.hasOwn(r, ${k}) ? r[${k}] : undefined)` : `r[${k}]`;
    let value: string | null = `e${i}(${v})`;
    switch (f.type) {
      case 'string':
        value = `(typeof ${v} === "string" ? J(${v}) : e${i}(${v}))`;
        encs[i] = genericJson;
        break;
      case 'int':
      case 'long':
        value = `(typeof ${v} === "number" ? "" + ${v} : e${i}(${v}))`;
        encs[i] = genericJson;
        break;
      case 'boolean':
        value = `(${v} === true ? "true" : ${v} === false ? "false" : e${i}(${v}))`;
        encs[i] = genericJson;
        break;
      case 'double':
        encs[i] = (x: unknown) => (typeof x === 'number' ? (Number.isFinite(x) ? formatDouble(x) : `"${x}"`) : genericJson(x));
        break;
      case 'timestamp': {
        const iso = isoFormatter(true);
        encs[i] = (x: unknown) => (typeof x === 'number' && x === x ? iso(x) : x instanceof Date ? iso(x.getTime()) : genericJson(x));
        break;
      }
      default: {
        const nested = compileJsonWriter(f.type.struct, '}');
        value = null; // pushes itself: e_i(v, out)
        encs[i] = (x: unknown, out: string[]) => {
          if (typeof x === 'object' && x !== null && !Array.isArray(x)) nested(x as Row, out);
          else out.push(genericJson(x));
        };
      }
    }
    present.push({ i, key: k, read, value });
  });
  let src: string;
  if (present.length === 0) {
    src = `return function writeJson(r, out) { out.push(${JSON.stringify('{' + close)}); };`;
  } else {
    const reads = present.map((p) => `v${p.i} = ${p.read}`).join(', ');
    // Fast path: adjacent literal pieces merged, struct values as their own statements.
    const stmts: string[] = [];
    let args: string[] = [];
    let lit = '';
    const flushLit = (): void => {
      if (lit !== '') args.push(JSON.stringify(lit));
      lit = '';
    };
    const flushPush = (): void => {
      flushLit();
      if (args.length) stmts.push(`out.push(${args.join(', ')});`);
      args = [];
    };
    present.forEach((p, j) => {
      lit += (j === 0 ? '{' : ',') + p.key + ':';
      if (p.value === null) {
        flushPush();
        stmts.push(`e${p.i}(v${p.i}, out);`);
      } else {
        flushLit();
        args.push(p.value);
      }
    });
    lit += close;
    flushPush();
    const slow = present.map((p) => {
      const key = `c ? ${JSON.stringify(',' + p.key + ':')} : ${JSON.stringify(p.key + ':')}`;
      const write = p.value === null ? `out.push(${key}); e${p.i}(v${p.i}, out);` : `out.push(${key}, ${p.value});`;
      return `if (v${p.i} != null) { ${write} c = true; }`;
    });
    src =
      `return function writeJson(r, out) { const ${reads};\n` +
      `if (${present.map((p) => `v${p.i} != null`).join(' && ')}) { ${stmts.join(' ')} return; }\n` +
      `let c = false; out.push("{"); ${slow.join('\n')}\nout.push(${JSON.stringify(close)}); };`;
  }
  const es = encs.flatMap((e, i) => (e ? [`e${i} = E[${i}]`] : []));
  return new Function('E', 'J', `"use strict"; ${es.length ? `const ${es.join(', ')};` : ''} ${src}`)(
    encs,
    JSON.stringify,
  ) as PieceWriter;
}

/** A struct as one JSON string (CSV fields). */
function jsonText(fields: Field[]): (v: Row) => string {
  const w = compileJsonWriter(fields, '}');
  const out: string[] = [];
  return (v) => {
    w(v, out);
    const s = out.join('');
    out.length = 0;
    return s;
  };
}

function csvRowsWriter(row: (r: Row) => string): PieceWriter {
  return (r, out) => void out.push(row(r), '\n');
}

function compileCsvWriter(fields: Field[], sep: string): (r: Row) => string {
  const quote = csvQuoter(sep);
  // Numbers, booleans and ISO timestamps need the quoting check only if the separator could occur in them.
  const plainSafe = !/[0-9A-Za-z+\-.:"\s]/.test(sep);
  const maybeQuote = (s: string): string => (plainSafe ? s : quote(s));
  const encs: Enc[] = fields.map((f): Enc => {
    switch (f.type) {
      case 'string':
        return (v) => quote(typeof v === 'string' ? v : String(v));
      case 'double':
        return (v) => maybeQuote(typeof v === 'number' ? formatDouble(v) : String(v));
      case 'timestamp': {
        const iso = isoFormatter(false);
        return (v) =>
          maybeQuote(typeof v === 'number' && v === v ? iso(v) : v instanceof Date ? iso(v.getTime()) : String(v));
      }
      case 'int':
      case 'long':
      case 'boolean':
      case 'null':
        return (v) => maybeQuote(String(v));
      default: {
        // CSV has no struct; the field holds the struct's JSON text, which the CSV reader accepts.
        const json = jsonText(f.type.struct);
        return (v) => quote(typeof v === 'object' && v !== null ? json(v as Row) : String(v));
      }
    }
  });
  const body = fields.map((f, i) => {
    const k = JSON.stringify(f.name);
    const read = f.name in Object.prototype ? `(Object.hasOwn(r, ${k}) ? r[${k}] : undefined)` : `r[${k}]`;
    return `v = ${read}; ${i > 0 ? 's += S; ' : ''}if (v != null) s += e${i}(v);`;
  });
  const src =
    `"use strict"; ${encs.length ? `const ${encs.map((_, i) => `e${i} = E[${i}]`).join(', ')};` : ''}` +
    `return function writeCsv(r) { let s = "", v; ${body.join('\n')}\nreturn s; };`;
  return new Function('E', 'S', src)(encs, sep) as (r: Row) => string;
}

function csvHeader(schema: Schema, sep: string): string {
  const quote = csvQuoter(sep);
  return schema.map((f) => quote(f.name)).join(sep);
}

/** Quotes a field that is empty or holds the separator, a quote or a line break (RFC 4180). */
function csvQuoter(sep: string): (s: string) => string {
  const special = new RegExp(`["\\r\\n]|${sep.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')}`);
  return (s) => (s === '' || special.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
}

function formatDouble(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e21 ? `${v}.0` : String(v);
}

const kPad2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const kMillis = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0') + 'Z');
const kMillisQuoted = kMillis.map((m) => m + '"');

/**
 * Epoch ms to `Date#toISOString()` text (`quoted`: inside JSON quotes), several times faster:
 * the text up to the second is remembered, since neighbouring rows mostly share it, so a value
 * costs one concatenation. Years outside 0..9999 go through Date.
 */
function isoFormatter(quoted: boolean): (ms: number) => string {
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
      secondPrefix = dayPrefix + kPad2[h]! + ':' + kPad2[m]! + ':' + kPad2[r - m * 60]! + '.';
    }
    return secondPrefix + millis[ms - second * 1000]!;
  };
}

function genericJson(v: unknown): string {
  return typeof v === 'bigint' ? String(v) : (JSON.stringify(v) ?? 'null');
}

// ---------------------------------------------------------------------------------------------
// Schema inference for JSON (session.read without a schema), after Spark's JsonInferSchema:
// integers → LONG, other numbers → DOUBLE, LONG with DOUBLE → DOUBLE, objects → STRUCT (merged),
// arrays and any other conflict → STRING, only-null → STRING, fields sorted by name. Strings stay
// STRING even when they look like timestamps (Spark's default). In PERMISSIVE mode a malformed
// line adds the corrupt-record column, as Spark does.

type Inferred = 'null' | 'long' | 'double' | 'boolean' | 'string' | Map<string, Inferred>;
type InferOptions = Partial<Pick<ReadOptions, 'mode' | 'columnNameOfCorruptRecord'>>;

export function inferJsonSchema(text: string, options: InferOptions = {}, file = '<input>'): Schema {
  const acc = new Map<string, Inferred>();
  inferInto(acc, text, options, file);
  return toSchema(acc);
}

/** The union of the schemas of several files; an unreadable file is SOURCE_FILE_UNREADABLE. */
export function inferJsonSchemaFromFiles(paths: string[], options: InferOptions = {}): Schema {
  const acc = new Map<string, Inferred>();
  for (const p of paths) inferInto(acc, readSourceFile(p), options, p);
  return toSchema(acc);
}

function inferInto(acc: Map<string, Inferred>, text: string, options: InferOptions, file: string): void {
  const mode = options.mode ?? 'PERMISSIVE';
  forEachLine(text, (line, lineNo) => {
    if (isBlank(line)) return;
    let o: unknown;
    let why = 'a line must hold one JSON object';
    try {
      o = JSON.parse(line);
    } catch (e) {
      why = `invalid JSON (${(e as Error).message})`;
    }
    if (o !== null && typeof o === 'object' && !Array.isArray(o)) return mergeObject(acc, o);
    if (mode === 'FAILFAST') {
      throw new SluiceError('MALFORMED_RECORD', `malformed JSON record in ${file} at line ${lineNo}: ${why} (mode FAILFAST)`, {
        file,
        line: lineNo,
      });
    }
    if (mode === 'PERMISSIVE') mergeField(acc, corruptName(options), 'string');
  });
}

function mergeObject(acc: Map<string, Inferred>, o: object): void {
  for (const [k, v] of Object.entries(o)) mergeField(acc, k, inferValue(v));
}

function mergeField(acc: Map<string, Inferred>, k: string, t: Inferred): void {
  const prev = acc.get(k);
  acc.set(k, prev === undefined ? t : mergeTypes(prev, t));
}

function inferValue(v: unknown): Inferred {
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) && Math.abs(v) <= 2 ** 63 ? 'long' : 'double';
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    default: {
      if (v === null) return 'null';
      if (Array.isArray(v)) return 'string';
      const m = new Map<string, Inferred>();
      mergeObject(m, v as object);
      return m;
    }
  }
}

function mergeTypes(a: Inferred, b: Inferred): Inferred {
  if (a === b || b === 'null') return a;
  if (a === 'null') return b;
  if (a instanceof Map && b instanceof Map) {
    for (const [k, t] of b) mergeField(a, k, t);
    return a;
  }
  if ((a === 'long' && b === 'double') || (a === 'double' && b === 'long')) return 'double';
  return 'string';
}

function toSchema(m: Map<string, Inferred>): Schema {
  return [...m.keys()].sort().map((name) => {
    const t = m.get(name)!;
    return { name, type: t instanceof Map ? { struct: toSchema(t) } : t === 'null' ? 'string' : t, nullable: true };
  });
}
