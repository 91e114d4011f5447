/**
 * Spark's JSON functions: from_json (a DDL schema, and the PERMISSIVE or FAILFAST mode), to_json,
 * get_json_object (JSONPath: $, .name, ['name'], [n], [*]), json_array_length, json_object_keys
 * and schema_of_json. Values convert as the JSON file reader converts them (formats/rowBuilders.ts),
 * and to_json writes as the JSON file writer does, so a column read by from_json is the column a
 * JSON source with that schema gives.
 */
import { SluiceError } from '@sluice/state';
import type { DataType } from '../schema/types.js';
import { parseDataType, parseSchema } from '../schema/schema.js';
import { isAtomicType, isStructType, typeName, type MapEntries } from '../schema/values.js';
import { BAD, compileObjectBuilder, jsonConv, type Flag, type TextFormats } from '../formats/rowBuilders.js';
import { datetimePatternProblem } from '../schema/datetimePatterns.js';
import { jsonValue } from '../formats/writers.js';
import { inferJsonValueType } from '../formats/inferJsonSchema.js';
import type { ScalarFunction } from './mathFunctions.js';

export type JsonFunctionName = 'from_json' | 'to_json' | 'get_json_object' | 'json_array_length' | 'json_object_keys' | 'schema_of_json';

type Typed = { args: DataType[]; result: DataType } | string;

/** from_json's schema: a field list ('a INT, b STRING') is a struct; a type ('ARRAY<INT>', 'MAP<STRING, INT>') is itself. */
export function jsonSchemaOf(ddl: unknown): DataType | string {
  if (typeof ddl !== 'string') return "needs its schema as a literal string, such as 'a INT, b STRING'";
  try {
    return { struct: parseSchema(ddl, 'from_json schema') };
  } catch (fieldList) {
    try {
      return parseDataType(ddl, 'from_json schema');
    } catch {
      return (fieldList as Error).message;
    }
  }
}

/** An option of from_json's options map (keys in any case), or undefined. */
function optionOf(options: unknown, key: string): string | undefined {
  const hit = Array.isArray(options) ? (options as MapEntries).find(([k]) => String(k).toLowerCase() === key.toLowerCase()) : undefined;
  return hit === undefined ? undefined : String(hit[1]);
}

/** from_json's options: `mode` (PERMISSIVE or FAILFAST), `timestampFormat` and `dateFormat`; a string is what is wrong. */
function readOptionsOf(options: unknown): { mode: 'PERMISSIVE' | 'FAILFAST'; formats: TextFormats } | string {
  if (options !== undefined && !Array.isArray(options)) return 'takes its options as map(...) of literal strings';
  const mode = (optionOf(options, 'mode') ?? 'PERMISSIVE').toUpperCase();
  if (mode !== 'PERMISSIVE' && mode !== 'FAILFAST') return `mode ${mode} is not supported (PERMISSIVE or FAILFAST)`;
  const formats: TextFormats = {};
  for (const key of ['timestampFormat', 'dateFormat'] as const) {
    const v = optionOf(options, key);
    if (v === undefined) continue;
    const problem = datetimePatternProblem(v);
    if (problem !== undefined) return `option ${key}: ${problem}`;
    formats[key] = v;
  }
  return { mode, formats };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return BAD;
  }
}

type PathStep = { key: string } | { index: number } | { wildcard: true };

const paths = new Map<string, PathStep[] | null>();

/** get_json_object's JSONPath, or null when it is not one. */
function parsePath(path: string): PathStep[] | null {
  if (paths.has(path)) return paths.get(path)!;
  let steps: PathStep[] | null = [];
  if (!path.startsWith('$')) steps = null;
  for (let i = 1; steps !== null && i < path.length; ) {
    const rest = path.slice(i);
    // At most one matches: the step's first two characters tell them apart.
    const key = /^\.([^.[\]]+)/.exec(rest);
    const quoted = /^\['((?:[^'\\]|\\.)*)'\]/.exec(rest);
    const index = /^\[(\d+)\]/.exec(rest);
    const star = /^\[\*\]/.exec(rest);
    if (key) steps.push(key[1] === '*' ? { wildcard: true } : { key: key[1]! });
    else if (quoted) steps.push({ key: quoted[1]!.replace(/\\(.)/g, '$1') });
    else if (index) steps.push({ index: Number(index[1]) });
    else if (star) steps.push({ wildcard: true });
    else steps = null;
    const m = key ?? quoted ?? index ?? star;
    if (m) i += m[0].length;
  }
  if (paths.size > 256) paths.clear();
  paths.set(path, steps);
  return steps;
}

function follow(values: unknown[], step: PathStep): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (v === null || typeof v !== 'object') continue;
    if ('wildcard' in step) out.push(...(Array.isArray(v) ? v : []));
    else if ('index' in step) {
      if (Array.isArray(v) && step.index < v.length) out.push(v[step.index]);
    } else if (!Array.isArray(v) && Object.hasOwn(v, step.key)) out.push((v as Record<string, unknown>)[step.key]);
  }
  return out;
}

function jsonText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const textArg = (args: DataType[]): boolean => args.every((t) => isAtomicType(t));

export const JSON_FUNCTIONS: Record<JsonFunctionName, ScalarFunction> = {
  /** from_json(text, schema[, options]): PERMISSIVE gives nulls for malformed text (a struct of nulls for a struct schema); FAILFAST fails. */
  from_json: {
    arity: [2, 3],
    types: (args, constants): Typed => {
      if (!isAtomicType(args[0] ?? 'null')) return `needs JSON text, not ${typeName(args[0] as DataType)}`;
      const schema = jsonSchemaOf(constants[1]);
      if (typeof schema === 'string') return schema;
      const read = readOptionsOf(constants[2]);
      if (typeof read === 'string') return read;
      return { args: [args[0] === 'null' ? 'null' : 'string', ...args.slice(1)], result: schema };
    },
    bind: (_, constants) => {
      const schema = jsonSchemaOf(constants[1]) as DataType;
      const { mode, formats } = readOptionsOf(constants[2]) as Exclude<ReturnType<typeof readOptionsOf>, string>;
      const failfast = mode === 'FAILFAST';
      // A struct keeps the fields that convert (Spark's partial results); any other type is whole or null.
      const flag: Flag = { bad: false };
      const build = isStructType(schema) ? compileObjectBuilder(schema.struct, null, flag, formats) : undefined;
      const conv: (v: unknown) => unknown = build
        ? (v) => {
            if (typeof v !== 'object' || Array.isArray(v)) return BAD;
            flag.bad = false;
            const row = build(v as Record<string, unknown>);
            return flag.bad && failfast ? BAD : row;
          }
        : jsonConv(schema, formats);
      const nulls = isStructType(schema) ? () => Object.fromEntries(schema.struct.map((f) => [f.name, null])) : () => null;
      return (text) => {
        const parsed = parseJson(text as string);
        const v = parsed === BAD || parsed === null ? parsed : conv(parsed);
        if (v !== BAD) return v;
        if (failfast) {
          throw new SluiceError(
            'MALFORMED_RECORD',
            `[MALFORMED_RECORD_IN_PARSING] from_json cannot read ${JSON.stringify(String(text).slice(0, 100))} as ${typeName(schema)} (mode FAILFAST)`,
          );
        }
        return nulls();
      };
    },
  },
  /** to_json(struct | array | map): JSON text as the JSON writer gives it (null fields left out). */
  to_json: {
    arity: [1, 2],
    types: (args): Typed =>
      typeof args[0] === 'object' ? { args, result: 'string' } : `needs a struct, an array or a map, not ${typeName(args[0] ?? 'null')}`,
    bind: ([t]) => jsonValue(t as DataType) as (v: unknown) => unknown,
  },
  /** get_json_object(json, path): the value at the path, as text (JSON text for objects and arrays); null if absent or invalid. */
  get_json_object: {
    arity: [2, 2],
    types: (args): Typed => (textArg(args) ? { args: ['string', 'string'], result: 'string' } : `needs text, not ${args.map(typeName).join(', ')}`),
    value: (json, path) => {
      const steps = parsePath(path as string);
      const root = parseJson(json as string);
      if (steps === null || root === BAD) return null;
      let values = [root];
      let many = false;
      for (const s of steps) {
        values = follow(values, s);
        many ||= 'wildcard' in s;
      }
      if (!many) return jsonText(values[0]);
      return values.length === 0 ? null : values.length === 1 ? jsonText(values[0]) : JSON.stringify(values);
    },
  },
  json_array_length: {
    arity: [1, 1],
    types: (args): Typed => (textArg(args) ? { args: ['string'], result: 'int' } : `needs text, not ${typeName(args[0] as DataType)}`),
    value: (json) => {
      const v = parseJson(json as string);
      return Array.isArray(v) ? v.length : null;
    },
  },
  json_object_keys: {
    arity: [1, 1],
    types: (args): Typed => (textArg(args) ? { args: ['string'], result: { array: 'string' } } : `needs text, not ${typeName(args[0] as DataType)}`),
    value: (json) => {
      const v = parseJson(json as string);
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v) : null;
    },
  },
  /** schema_of_json(json): the type Spark infers for the JSON text, as DDL ('STRUCT<a: BIGINT>'). */
  schema_of_json: {
    arity: [1, 1],
    types: (_args, constants): Typed => (typeof constants[0] === 'string' ? { args: ['string'], result: 'string' } : 'needs a literal JSON string'),
    value: (json) => {
      const v = parseJson(json as string);
      if (v === BAD) throw new SluiceError('INVALID_EXPRESSION', `schema_of_json: ${JSON.stringify(json)} is not JSON`);
      return typeName(inferJsonValueType(v));
    },
  },
};
