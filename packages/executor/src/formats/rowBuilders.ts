/**
 * Values and generated row builders shared by the JSON and CSV readers.
 *
 * A converter takes a non-null input value and returns the engine value or BAD. The builders are
 * generated per schema: they read the fields by constant keys and build rows from one object
 * literal, so rows share a shape; they set `flag.bad` when a value did not convert (that column
 * is null).
 */
import type { DataType, Field, Row } from '../schema/types.js';
import { MS_PER_DAY, parseDate, parseTimestampText } from '../schema/timestamps.js';
import { parseWithPattern } from '../schema/datetimePatterns.js';
import { parseInterval } from '../schema/intervals.js';

export const BAD: unique symbol = Symbol('malformed');

/** The datetime patterns of a read (Spark's timestampFormat and dateFormat options); unset, CAST's grammar. */
export interface TextFormats {
  timestampFormat?: string;
  dateFormat?: string;
}
export type Conv = (v: unknown) => unknown;
export interface Flag {
  bad: boolean;
}

export function jsonConv(t: DataType, formats: TextFormats = {}): Conv {
  switch (t) {
    case 'string':
      return (v) => (typeof v === 'string' ? v : JSON.stringify(v)); // Spark keeps a non-string as its JSON text
    case 'int':
      return (v) => (typeof v === 'number' && (v | 0) === v ? v : BAD);
    case 'long':
      // Beyond 2^53 JSON.parse has already rounded the number: malformed, never a silent rounding.
      return (v) => (Number.isSafeInteger(v) ? v : BAD);
    case 'double':
      return (v) => (typeof v === 'number' ? v : typeof v === 'string' ? specialDouble(v) : BAD);
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? v : BAD);
    case 'timestamp': {
      const text = timestampText(formats);
      return (v) => (typeof v === 'number' ? (Number.isFinite(v) ? Math.floor(v) : BAD) : typeof v === 'string' ? text(v) : BAD);
    }
    case 'date': {
      const text = dateText(formats);
      return (v) => (typeof v === 'string' ? text(v) : BAD);
    }
    case 'interval':
      return (v) => (typeof v === 'string' ? (parseInterval(v) ?? BAD) : BAD);
    case 'null':
      return () => null;
    default:
      if ('array' in t) return arrayConv(jsonConv(t.array, formats));
      if ('map' in t) return mapConv(csvConv(t.map.key, formats), jsonConv(t.map.value, formats));
      return structConv(t.struct, formats);
  }
}

/** TIMESTAMP text: by the read's pattern, else CAST's grammar. */
function timestampText(formats: TextFormats): (s: string) => unknown {
  const fmt = formats.timestampFormat;
  return fmt === undefined ? isoOrBad : (s) => parseWithPattern(s, fmt) ?? BAD;
}

function dateText(formats: TextFormats): (s: string) => unknown {
  const fmt = formats.dateFormat;
  if (fmt === undefined) return (s) => parseDate(s) ?? BAD;
  return (s) => {
    const ms = parseWithPattern(s, fmt);
    return ms === null ? BAD : Math.floor(ms / MS_PER_DAY);
  };
}

/** A JSON array, element by element; a bad element makes the whole value bad, as in Spark. */
function arrayConv(element: Conv): Conv {
  return (v) => {
    if (!Array.isArray(v)) return BAD;
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i] == null ? null : element(v[i]);
      if (x === BAD) return BAD;
      out[i] = x;
    }
    return out;
  };
}

/** A JSON object as a map: its keys are text, converted to the key type as CSV text is. */
function mapConv(key: Conv, value: Conv): Conv {
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return BAD;
    const out: Array<[unknown, unknown]> = [];
    for (const [k, x] of Object.entries(v)) {
      const ik = key(k);
      const ix = x == null ? null : value(x);
      if (ik === BAD || ix === BAD) return BAD;
      out.push([ik, ix]);
    }
    return out;
  };
}

export function csvConv(t: DataType, formats: TextFormats = {}): Conv {
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
      return (v) => {
        if (!/^[+-]?\d{1,16}$/.test(v as string)) return BAD;
        const n = Number(v);
        return Number.isSafeInteger(n) ? n : BAD; // beyond 2^53 a number cannot hold it exactly
      };
    case 'double':
      return (v) => (kDoubleText.test(v as string) ? Number(v) : BAD);
    case 'boolean':
      return (v) => {
        const s = (v as string).toLowerCase();
        return s === 'true' ? true : s === 'false' ? false : BAD;
      };
    case 'timestamp': {
      const text = timestampText(formats);
      return (v) => (formats.timestampFormat === undefined && /^-?\d+$/.test(v as string) ? Number(v) : text(v as string));
    }
    case 'date':
      return dateText(formats) as Conv;
    case 'interval':
      return (v) => parseInterval(v as string) ?? BAD;
    case 'null':
      return () => null;
    default: {
      // A CSV struct, array or map field holds the value's JSON text, as the CSV writer writes it.
      const c = jsonConv(t, formats);
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
  const ms = parseTimestampText(s);
  return Number.isNaN(ms) ? BAD : ms;
}

function structConv(fields: Field[], formats: TextFormats): Conv {
  const flag: Flag = { bad: false };
  const build = compileObjectBuilder(fields, null, flag, formats);
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return BAD;
    const row = build(v as Record<string, unknown>);
    return flag.bad ? BAD : row;
  };
}

/** A JS source key for an object literal; `__proto__` must be computed to stay a plain key. */
export function litKey(name: string): string {
  return name === '__proto__' ? `[${JSON.stringify(name)}]` : JSON.stringify(name);
}

/** Builds rows from parsed JSON objects. The corrupt-record column, if given, is set to null. */
export function compileObjectBuilder(fields: Field[], corrupt: string | null, flag: Flag, formats: TextFormats = {}): (o: Record<string, unknown>) => Row {
  const convs: Array<Conv | undefined> = [];
  const body: string[] = [];
  const props: string[] = [];
  fields.forEach((f, i) => {
    if (f.name === corrupt || f.type === 'null') {
      props.push(`${litKey(f.name)}: null`);
      return;
    }
    convs[i] = jsonConv(f.type, formats);
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

/**
 * Builds rows from CSV tokens (null = empty unquoted field). Binding a per-file index map `m`
 * (schema position → token position) gives the builder for that file's header.
 */
export function compileTokenBuilder(
  fields: Field[],
  corrupt: string | null,
  flag: Flag,
  formats: TextFormats = {},
): (m: Int32Array) => (t: Array<string | null>) => Row {
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
      convs[i] = csvConv(f.type, formats);
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
