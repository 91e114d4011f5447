/**
 * Schema inference for JSON (session.read without a schema), after Spark's JsonInferSchema:
 * integers → LONG, other numbers → DOUBLE, LONG with DOUBLE → DOUBLE, objects → STRUCT (merged),
 * arrays → ARRAY of their elements' merged type, any other conflict → STRING, only-null → STRING,
 * fields sorted by name. Strings stay
 * STRING even when they look like timestamps (Spark's default). In PERMISSIVE mode a malformed
 * line adds the corrupt-record column, as Spark does.
 */
import { SluiceError } from '@sluice/state';
import type { ReadOptions } from '../task/messages.js';
import type { DataType, Schema } from '../schema/types.js';
import { corruptName } from './options.js';
import { forEachLine, isBlank, readSourceFile } from './sourceLines.js';

type Inferred = 'null' | 'long' | 'double' | 'boolean' | 'string' | Map<string, Inferred> | { array: Inferred };
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
      if (Array.isArray(v)) return { array: v.reduce<Inferred>((acc, x) => mergeTypes(acc, inferValue(x)), 'null') };
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
  if (typeof a === 'object' && 'array' in a && typeof b === 'object' && 'array' in b) return { array: mergeTypes(a.array, b.array) };
  if ((a === 'long' && b === 'double') || (a === 'double' && b === 'long')) return 'double';
  return 'string';
}

function toSchema(m: Map<string, Inferred>): Schema {
  return [...m.keys()].sort().map((name) => ({ name, type: toType(m.get(name)!), nullable: true }));
}

function toType(t: Inferred): DataType {
  if (t instanceof Map) return { struct: toSchema(t) };
  if (typeof t === 'object') return { array: toType(t.array) };
  return t === 'null' ? 'string' : t;
}

/** The type Spark infers for one parsed JSON value (schema_of_json). */
export function inferJsonValueType(v: unknown): DataType {
  return toType(inferValue(v));
}
