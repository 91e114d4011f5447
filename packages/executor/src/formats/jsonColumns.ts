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
import { forEachLineRange, isBlank } from './sourceLines.js';
import { parseIsoTimestamp } from '../schema/timestamps.js';
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
    return jsonConv(f.type, options);
  });
  const scannable = schema.every((f) => typeof f.type === 'string');
  const width = schema.length;
  const values: unknown[] = new Array(width).fill(NONE);

  const byLength = new Map<number, Array<[string, number]>>();
  for (const [name, f] of fieldOf) {
    const list = byLength.get(name.length) ?? [];
    list.push([name, f]);
    byLength.set(name.length, list);
  }
  /** The schema field whose name is s[ks, ke), or undefined (no substring is made). */
  const fieldAt = (s: string, ks: number, ke: number): number | undefined => {
    const list = byLength.get(ke - ks);
    if (list === undefined) return undefined;
    for (const [name, f] of list) if (s.startsWith(name, ks)) return f;
    return undefined;
  };
  /** Fields whose value the scanner already converted into `nums` (no boxed number per value). */
  const ready = new Uint8Array(width);
  const nums = new Float64Array(width);
  /** How a JSON number converts in place: 0 not here (through convs), else by the column's type. */
  const NUM_LONG = 1;
  const NUM_INT = 2;
  const NUM_DOUBLE = 3;
  const NUM_TIMESTAMP = 4;
  const NUM_KINDS: Partial<Record<string, number>> = { long: NUM_LONG, int: NUM_INT, double: NUM_DOUBLE, timestamp: NUM_TIMESTAMP };
  // With a timestampFormat, timestamp text goes through its pattern (jsonConv), not the ISO fast path.
  const numKind = schema.map((f, i) =>
    convs[i] === null || typeof f.type !== 'string' || (f.type === 'timestamp' && options.timestampFormat !== undefined) ? 0 : (NUM_KINDS[f.type] ?? 0),
  );

  /** Scans the line s[start, end) into `values`; false when the row reader must take it. */
  function scan(s: string, start: number, n: number): boolean {
    values.fill(NONE);
    ready.fill(0);
    let i = ws(s, start, n);
    if (s.charCodeAt(i) !== 123) return false; // {
    i = ws(s, i + 1, n);
    if (s.charCodeAt(i) === 125) return ws(s, i + 1, n) === n; // {}
    for (;;) {
      if (i >= n || s.charCodeAt(i) !== 34) return false; // "
      const ks = i + 1;
      let ke = ks;
      for (; ke < n; ke++) {
        const c = s.charCodeAt(ke);
        if (c === 34) break;
        if (c === 92 || c < 32) return false;
      }
      if (ke >= n) return false;
      const field = fieldAt(s, ks, ke);
      i = ws(s, ke + 1, n);
      if (s.charCodeAt(i) !== 58) return false; // :
      i = ws(s, i + 1, n);
      const c = s.charCodeAt(i);
      let v: unknown;
      let converted = 0;
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
          if (escaped) {
            try {
              v = JSON.parse(s.slice(i, ve + 1));
            } catch {
              return false;
            }
          } else if (numKind[field] === NUM_TIMESTAMP) {
            // The ISO fast path in place; anything else as the row reader converts the text.
            const t = parseIsoTimestamp(s, vs, ve);
            if (!Number.isNaN(t)) {
              nums[field] = t;
              converted = 1;
            } else v = s.slice(vs, ve);
          } else v = s.slice(vs, ve);
        }
        i = ve + 1;
      } else if (c === 45 || (c >= 48 && c <= 57)) {
        const end = numberEnd(s, i);
        if (end < 0 || end > n) return false;
        if (field !== undefined) {
          const kind = numKind[field]!;
          const x = integer(s, i, end);
          if (kind === 0) v = x;
          else {
            // jsonConv's rules for a number, in place; a number that does not fit goes to the row reader.
            if (kind === NUM_LONG ? !Number.isSafeInteger(x) : kind === NUM_INT ? (x | 0) !== x : kind === NUM_TIMESTAMP && !Number.isFinite(x)) return false;
            nums[field] = kind === NUM_TIMESTAMP ? Math.floor(x) : x;
            converted = 1;
          }
        }
        i = end;
      } else if (c === 116 && i + 4 <= n && s.startsWith('true', i)) {
        v = true;
        i += 4;
      } else if (c === 102 && i + 5 <= n && s.startsWith('false', i)) {
        v = false;
        i += 5;
      } else if (c === 110 && i + 4 <= n && s.startsWith('null', i)) {
        v = null;
        i += 4;
      } else return false;
      if (field !== undefined) {
        // A later duplicate key wins, as in JSON.parse.
        values[field] = v;
        ready[field] = converted;
      }
      i = ws(s, i, n);
      if (i >= n) return false;
      const sep = s.charCodeAt(i);
      if (sep === 44) i = ws(s, i + 1, n);
      else if (sep === 125) return ws(s, i + 1, n) === n;
      else return false;
    }
  }

  return (text, file, maxRows, fn) => {
    let builders: VectorBuilder[] = [];
    let count = 0;
    let total = 0;
    const capacity = Math.min(maxRows, lineCount(text));
    const begin = (): void => {
      builders = schema.map((f) => new VectorBuilder(f.type, capacity));
      count = 0;
    };
    const flush = (): void => {
      if (count === 0) return;
      const columns = new Map(schema.map((f, i) => [f.name, builders[i]!.build()] as const));
      fn({ length: count, columns });
      total += count;
      begin();
    };
    begin();
    const fallback: Row[] = [];
    // Lines as forEachLine cuts them, scanned in place.
    forEachLineRange(text, (line, end, lineNo) => {
      if (end === line) return;
      if (text.charCodeAt(line) <= 32 && isBlank(text.slice(line, end))) return;
      if (scannable && scan(text, line, end) && convert()) {
        for (let f = 0; f < width; f++) {
          if (ready[f] === 1) builders[f]!.pushNumber(nums[f]!);
          else builders[f]!.push(values[f]);
        }
      } else {
        fallback.length = 0;
        readLine(text.slice(line, end), lineNo, file, fallback);
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
      if (ready[f] === 1) continue;
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

/** Skips JSON whitespace in s[i, end). */
function ws(s: string, i: number, end: number): number {
  for (; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return i;
  }
  return end;
}

/** The end of the JSON number at i (strict grammar), or -1. */
function numberEnd(s: string, i: number): number {
  if (s.charCodeAt(i) === 45) i++;
  let c = s.charCodeAt(i);
  if (c === 48) c = s.charCodeAt(++i);
  else if (c >= 49 && c <= 57) {
    do {
      c = s.charCodeAt(++i);
    } while (c >= 48 && c <= 57);
  } else return -1;
  if (c === 46) {
    c = s.charCodeAt(++i);
    if (!(c >= 48 && c <= 57)) return -1;
    do {
      c = s.charCodeAt(++i);
    } while (c >= 48 && c <= 57);
  }
  if (c === 101 || c === 69) {
    c = s.charCodeAt(++i);
    if (c === 43 || c === 45) c = s.charCodeAt(++i);
    if (!(c >= 48 && c <= 57)) return -1;
    do {
      c = s.charCodeAt(++i);
    } while (c >= 48 && c <= 57);
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
