/**
 * Writing rows as JSON lines or CSV. Doubles print as Spark prints them (5 as "5.0"); timestamps
 * as ISO-8601 UTC.
 */
import type { WriteOptions } from '../task/messages.js';
import type { DataType, Field, Row, Schema } from '../schema/types.js';
import { compiled } from './compileCache.js';
import { kDefaultWriteOptions, type WriteFormat } from './options.js';
import { formatDate, isoFormatter } from '../schema/timestamps.js';
import { formatInterval, type Interval } from '../schema/intervals.js';

/** Rows to file text, one record per line, each ending with '\n'. */
export function formatRecords(format: WriteFormat, rows: Row[], schema: Schema, options: WriteOptions): string {
  const sep = options.sep ?? kDefaultWriteOptions.sep;
  const head = format === 'csv' && options.header ? `${csvHeader(schema, sep)}\n` : '';
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
      default: {
        // DOUBLE, TIMESTAMP, DATE, INTERVAL, arrays and maps: one value's JSON text (jsonValue).
        if (typeof f.type === 'string' || !('struct' in f.type)) {
          encs[i] = jsonValue(f.type);
          break;
        }
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
    src = `return function writeJson(r, out) { out.push(${JSON.stringify(`{${close}`)}); };`;
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
      lit += `${(j === 0 ? '{' : ',') + p.key}:`;
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
      const key = `c ? ${JSON.stringify(`,${p.key}:`)} : ${JSON.stringify(`${p.key}:`)}`;
      const write = p.value === null ? `out.push(${key}); e${p.i}(v${p.i}, out);` : `out.push(${key}, ${p.value});`;
      return `if (v${p.i} != null) { ${write} c = true; }`;
    });
    src =
      `return function writeJson(r, out) { const ${reads};\n` +
      `if (${present.map((p) => `v${p.i} != null`).join(' && ')}) { ${stmts.join(' ')} return; }\n` +
      `let c = false; out.push("{"); ${slow.join('\n')}\nout.push(${JSON.stringify(close)}); };`;
  }
  const es = encs.flatMap((e, i) => (e ? [`e${i} = E[${i}]`] : []));
  return new Function('E', 'J', `"use strict"; ${es.length ? `const ${es.join(', ')};` : ''} ${src}`)(encs, JSON.stringify) as PieceWriter;
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

/**
 * One value's JSON text by its type: a DATE as "yyyy-MM-dd", an ARRAY as a JSON array (nulls kept,
 * as Spark writes them), a MAP as a JSON object of its keys' text, a STRUCT as an object.
 */
export function jsonValue(t: DataType): Enc {
  if (t === 'date') return (v) => (typeof v === 'number' ? `"${formatDate(v)}"` : genericJson(v));
  if (t === 'interval') return (v) => (Array.isArray(v) ? JSON.stringify(formatInterval(v as Interval)) : genericJson(v));
  if (t === 'timestamp') {
    const iso = isoFormatter(true);
    return (v) => (typeof v === 'number' && !Number.isNaN(v) ? iso(v) : v instanceof Date ? iso(v.getTime()) : genericJson(v));
  }
  if (t === 'double') return (v) => (typeof v === 'number' ? (Number.isFinite(v) ? formatDouble(v) : `"${v}"`) : genericJson(v));
  if (typeof t === 'string') return genericJson;
  if ('array' in t) {
    const element = jsonValue(t.array);
    return (v) => (Array.isArray(v) ? `[${v.map((x) => (x == null ? 'null' : element(x))).join(',')}]` : genericJson(v));
  }
  if ('map' in t) {
    const value = jsonValue(t.map.value);
    const key = t.map.key === 'string' ? (k: unknown) => k as string : jsonKeyText(t.map.key);
    return (v) =>
      Array.isArray(v)
        ? `{${(v as Array<[unknown, unknown]>).map(([k, x]) => `${JSON.stringify(key(k))}:${x == null ? 'null' : value(x)}`).join(',')}}`
        : genericJson(v);
  }
  const struct = jsonText(t.struct);
  return (v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? struct(v as Row) : genericJson(v));
}

/** A non-string map key as JSON key text: its JSON value, unquoted. */
function jsonKeyText(t: DataType): (k: unknown) => string {
  const enc = jsonValue(t);
  return (k) => {
    const s = enc(k);
    return s.startsWith('"') ? (JSON.parse(s) as string) : s;
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
        return (v) => maybeQuote(typeof v === 'number' && !Number.isNaN(v) ? iso(v) : v instanceof Date ? iso(v.getTime()) : String(v));
      }
      case 'int':
      case 'long':
      case 'boolean':
      case 'null':
        return (v) => maybeQuote(String(v));
      case 'date':
        return (v) => (typeof v === 'number' ? (formatDate(v) ?? '') : String(v));
      case 'interval':
        return (v) => quote(Array.isArray(v) ? formatInterval(v as Interval) : String(v));
      default: {
        // CSV has no struct, array or map; the field holds the value's JSON text, which the CSV reader accepts.
        const json = jsonValue(f.type);
        return (v) => quote(json(v));
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

function genericJson(v: unknown): string {
  return typeof v === 'bigint' ? String(v) : (JSON.stringify(v) ?? 'null');
}
