/**
 * A schema-driven scanner for JSON lines that fills column vectors without building an object per
 * line. It reads a line's top-level keys and values straight from the text, keeps the values of
 * the schema's fields and skips the rest, and converts them with the converters of the row reader
 * (rowBuilders.ts), so a value it accepts is the value the row reader would give.
 *
 * It takes flat objects of strings, numbers, true, false and null, in strict JSON. Any line it
 * does not take whole (a nested value, an escape in a key, a control character, anything invalid,
 * or a value that does not convert to its column's type) goes to the row reader's line function,
 * which parses it with JSON.parse and applies the parse mode (PERMISSIVE, DROPMALFORMED, FAILFAST,
 * `_corrupt_record`); its row then joins the columns. So every mode and message is the row
 * reader's. A schema with struct columns uses the row reader for every line.
 */
import type { ReadOptions } from '../task/messages.js';
import type { Row, Schema } from '../schema/types.js';
import { corruptName } from './options.js';
import { BAD, type Conv, jsonConv } from './rowBuilders.js';
import { compileJsonLineReader } from './jsonReader.js';
import { forEachLine, isBlank } from './sourceLines.js';
import { VectorBuilder, type ColumnBatch } from '../columns/vectors.js';

/** The column reader of one (schema, options): text of one file into batches of at most `maxRows`. */
export type JsonColumnReader = (text: string, file: string, maxRows: number, fn: (batch: ColumnBatch) => void) => number;

const NONE = Symbol('absent');

export function compileJsonColumnReader(schema: Schema, options: ReadOptions): JsonColumnReader {
  const readLine = compileJsonLineReader(schema, options);
  const corrupt = corruptName(options);
  const fieldOf = new Map<string, number>();
  const convs: Array<Conv | null> = schema.map((f, i) => {
    if (f.name === corrupt || f.type === 'null') return null;
    fieldOf.set(f.name, i);
    return jsonConv(f.type);
  });
  const scannable = schema.every((f) => typeof f.type === 'string');
  const width = schema.length;
  const values: unknown[] = new Array(width).fill(NONE);

  /** Scans one line into `values`; false when the row reader must take it. */
  function scan(s: string): boolean {
    values.fill(NONE);
    const n = s.length;
    let i = ws(s, 0);
    if (s.charCodeAt(i) !== 123) return false; // {
    i = ws(s, i + 1);
    if (s.charCodeAt(i) === 125) return ws(s, i + 1) === n; // {}
    for (;;) {
      if (s.charCodeAt(i) !== 34) return false; // "
      const ks = i + 1;
      let ke = ks;
      for (; ke < n; ke++) {
        const c = s.charCodeAt(ke);
        if (c === 34) break;
        if (c === 92 || c < 32) return false;
      }
      if (ke >= n) return false;
      const field = fieldOf.get(s.slice(ks, ke));
      i = ws(s, ke + 1);
      if (s.charCodeAt(i) !== 58) return false; // :
      i = ws(s, i + 1);
      const c = s.charCodeAt(i);
      let v: unknown;
      if (c === 34) {
        const vs = i + 1;
        let ve = vs;
        let escaped = false;
        for (; ve < n; ve++) {
          const d = s.charCodeAt(ve);
          if (d === 34) break;
          if (d < 32) return false;
          if (d === 92) {
            escaped = true;
            ve++;
          }
        }
        if (ve >= n) return false;
        if (field !== undefined) {
          if (!escaped) v = s.slice(vs, ve);
          else {
            try {
              v = JSON.parse(s.slice(i, ve + 1));
            } catch {
              return false;
            }
          }
        }
        i = ve + 1;
      } else if (c === 45 || (c >= 48 && c <= 57)) {
        const end = numberEnd(s, i);
        if (end < 0) return false;
        if (field !== undefined) v = integer(s, i, end);
        i = end;
      } else if (c === 116 && s.startsWith('true', i)) {
        v = true;
        i += 4;
      } else if (c === 102 && s.startsWith('false', i)) {
        v = false;
        i += 5;
      } else if (c === 110 && s.startsWith('null', i)) {
        v = null;
        i += 4;
      } else return false;
      if (field !== undefined) values[field] = v;
      i = ws(s, i);
      const sep = s.charCodeAt(i);
      if (sep === 44) i = ws(s, i + 1);
      else if (sep === 125) return ws(s, i + 1) === n;
      else return false;
    }
  }

  return (text, file, maxRows, fn) => {
    let builders: VectorBuilder[] = [];
    let count = 0;
    let total = 0;
    const capacity = Math.min(maxRows, lineCount(text));
    const start = (): void => {
      builders = schema.map((f) => new VectorBuilder(f.type, capacity));
      count = 0;
    };
    const flush = (): void => {
      if (count === 0) return;
      const columns = new Map(schema.map((f, i) => [f.name, builders[i]!.build()] as const));
      fn({ length: count, columns });
      total += count;
      start();
    };
    start();
    const fallback: Row[] = [];
    forEachLine(text, (line, lineNo) => {
      if (isBlank(line)) return;
      if (scannable && scan(line) && convert()) {
        for (let f = 0; f < width; f++) builders[f]!.push(values[f]);
      } else {
        fallback.length = 0;
        readLine(line, lineNo, file, fallback);
        if (fallback.length === 0) return; // DROPMALFORMED
        const row = fallback[0]!;
        for (let f = 0; f < width; f++) builders[f]!.push(row[schema[f]!.name]);
      }
      if (++count === capacity) flush();
    });
    flush();
    return total;
  };

  /** Converts the scanned values in place; false when one does not fit its column (a malformed line). */
  function convert(): boolean {
    for (let f = 0; f < width; f++) {
      const v = values[f];
      const conv = convs[f];
      if (v === NONE || v == null || conv === null) {
        values[f] = null;
        continue;
      }
      const x = conv!(v);
      if (x === BAD) return false;
      values[f] = x;
    }
    return true;
  }
}

function ws(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) i++;
    else return i;
  }
}

/** The end of the JSON number at i (strict grammar), or -1. */
function numberEnd(s: string, i: number): number {
  if (s.charCodeAt(i) === 45) i++;
  let c = s.charCodeAt(i);
  if (c === 48) c = s.charCodeAt(++i);
  else if (c >= 49 && c <= 57) while ((c = s.charCodeAt(++i)) >= 48 && c <= 57);
  else return -1;
  if (c === 46) {
    c = s.charCodeAt(++i);
    if (!(c >= 48 && c <= 57)) return -1;
    while ((c = s.charCodeAt(++i)) >= 48 && c <= 57);
  }
  if (c === 101 || c === 69) {
    c = s.charCodeAt(++i);
    if (c === 43 || c === 45) c = s.charCodeAt(++i);
    if (!(c >= 48 && c <= 57)) return -1;
    while ((c = s.charCodeAt(++i)) >= 48 && c <= 57);
  }
  return i;
}

/** The number in s[start, end): digits add up exactly below 2^53; anything else as JSON.parse reads it. */
function integer(s: string, start: number, end: number): number {
  const neg = s.charCodeAt(start) === 45;
  let i = neg ? start + 1 : start;
  if (end - i > 15) return Number(s.slice(start, end));
  let x = 0;
  for (; i < end; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return Number(s.slice(start, end));
    x = x * 10 + d;
  }
  // -0 is a JSON number too.
  return neg ? -x : x;
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
