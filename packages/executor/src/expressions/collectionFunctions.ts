/**
 * Spark's array and map functions (non-ANSI mode) as ScalarFunction entries, and `split`. Arrays
 * are JavaScript arrays and maps arrays of [key, value] entries (schema/types.ts). Indices are
 * 1-based; an index out of range gives null, as Spark does without ANSI mode; index 0 is an error
 * there too. Elements compare by Spark's ordering (schema/ordering.ts); equal elements are equal
 * values of the element type, NaN equal to NaN. The typing and element operations they share are
 * collectionHelpers.ts's.
 */
import { SluiceError } from '@sluice/state';
import type { DataType, MapType } from '../schema/types.js';
import { isArrayType, isAtomicType, isMapType, typeName, type MapEntries } from '../schema/values.js';
import { numberLike, type ScalarFunction } from './mathFunctions.js';
import { widerType } from '../schema/widening.js';
import {
  arrayAndValue,
  arrays,
  dedupKeys,
  distinct,
  elementOf,
  equality,
  extreme,
  identity,
  indexZero,
  mapLookup,
  nonNullKey,
  oneArray,
  oneMap,
  setOperation,
  sortWith,
  splitText,
  type A,
} from './collectionHelpers.js';

export type CollectionFunctionName =
  | 'array'
  | 'size'
  | 'array_contains'
  | 'element_at'
  | 'array_join'
  | 'sort_array'
  | 'array_sort'
  | 'array_distinct'
  | 'array_min'
  | 'array_max'
  | 'array_position'
  | 'array_remove'
  | 'array_repeat'
  | 'array_union'
  | 'array_intersect'
  | 'array_except'
  | 'arrays_overlap'
  | 'flatten'
  | 'slice'
  | 'sequence'
  | 'map'
  | 'map_keys'
  | 'map_values'
  | 'map_entries'
  | 'map_from_arrays'
  | 'map_contains_key'
  | 'split'
  | 'array_append'
  | 'array_prepend'
  | 'array_compact'
  | 'array_size'
  | 'get'
  | 'str_to_map'
  | 'map_concat'
  | 'map_from_entries'
  | 'arrays_zip'
  | 'array_insert';

type N = number;

export const COLLECTION_FUNCTIONS: Record<CollectionFunctionName, ScalarFunction> = {
  /** array(x...): an array of the arguments, brought to their wider type. */
  array: {
    arity: [0, Infinity],
    types: (args) => {
      const w = widerType(args);
      return w === undefined ? `has no common type for ${args.map(typeName).join(', ')}` : { args: args.map(() => w), result: { array: w } };
    },
    nulls: true,
    value: (...xs) => xs,
  },
  /** size(x): elements of an array or entries of a map; -1 for null (Spark's legacy default, kept without ANSI mode). */
  size: {
    arity: [1, 1],
    types: ([t = 'null']) => (isArrayType(t) || isMapType(t) || t === 'null' ? { args: [t], result: 'int' } : `needs an array or a map, not ${typeName(t)}`),
    nulls: true,
    value: (x) => (x == null ? -1 : (x as A).length),
  },
  /** array_contains(arr, v): true if found; else null if the array holds a null; else false. */
  array_contains: {
    arity: [2, 2],
    types: arrayAndValue('boolean'),
    bind: ([t]) => {
      const eq = equality(elementOf(t as DataType) as DataType);
      return (arr, v) => ((arr as A).some((x) => x != null && eq(x, v)) ? true : (arr as A).includes(null) ? null : false);
    },
  },
  /** element_at(arr, i): the i-th element (from the end when negative); element_at(map, k): k's value. */
  element_at: {
    arity: [2, 2],
    types: ([c = 'null', k = 'null']) => {
      if (isMapType(c)) return { args: [c, c.map.key], result: c.map.value };
      const e = elementOf(c);
      if (e === undefined) return `needs an array or a map, not ${typeName(c)}`;
      return numberLike(k) ? { args: [{ array: e }, 'int'], result: e } : `needs an integer index, not ${typeName(k)}`;
    },
    bind: ([c]) => {
      if (isMapType(c as DataType)) return mapLookup(c as MapType);
      return (arr, i) => {
        const xs = arr as A;
        if (i === 0) throw indexZero();
        const at = (i as N) > 0 ? (i as N) - 1 : xs.length + (i as N);
        return xs[at] ?? null;
      };
    },
  },
  /** array_join(arr, sep[, nullReplacement]): nulls skipped, or replaced when a replacement is given. */
  array_join: {
    arity: [2, 3],
    types: ([a = 'null', ...rest]) => {
      const e = elementOf(a);
      if (e === undefined || !isAtomicType(e)) return `needs an array of atomic values, not ${typeName(a)}`;
      return { args: [{ array: 'string' }, ...rest.map((): DataType => 'string')], result: 'string' };
    },
    value: (arr, sep, rep) => (arr as A).flatMap((x) => (x == null ? (rep === undefined ? [] : [rep]) : [x])).join(sep as string),
  },
  /** sort_array(arr[, asc]): ascending with nulls first, or descending with nulls last. */
  sort_array: {
    arity: [1, 2],
    types: oneArray((t) => t, 'boolean'),
    bind: ([t]) => {
      const e = elementOf(t as DataType) as DataType;
      const up = sortWith(e, true, true);
      const down = sortWith(e, false, false);
      return (arr, asc = true) => (asc ? up(arr as A) : down(arr as A));
    },
  },
  /** array_sort(arr): ascending, nulls last. */
  array_sort: {
    arity: [1, 1],
    types: oneArray((t) => t),
    bind: ([t]) => sortWith(elementOf(t as DataType) as DataType, true, false) as (x: unknown) => unknown,
  },
  array_distinct: {
    arity: [1, 1],
    types: oneArray((t) => t),
    bind:
      ([t]) =>
      (arr) =>
        distinct(elementOf(t as DataType) as DataType, arr as A),
  },
  /** array_min(arr), array_max(arr): nulls skipped; null for an empty array. */
  array_min: { arity: [1, 1], types: oneArray((t) => elementOf(t) as DataType), bind: ([t]) => extreme(t as DataType, -1) },
  array_max: { arity: [1, 1], types: oneArray((t) => elementOf(t) as DataType), bind: ([t]) => extreme(t as DataType, 1) },
  /** array_position(arr, v): the 1-based position of v's first occurrence, 0 if absent (a BIGINT). */
  array_position: {
    arity: [2, 2],
    types: arrayAndValue('long'),
    bind: ([t]) => {
      const eq = equality(elementOf(t as DataType) as DataType);
      return (arr, v) => (arr as A).findIndex((x) => x != null && eq(x, v)) + 1;
    },
  },
  array_remove: {
    arity: [2, 2],
    types: arrayAndValue((w) => ({ array: w })),
    bind: ([t]) => {
      const eq = equality(elementOf(t as DataType) as DataType);
      return (arr, v) => (arr as A).filter((x) => x == null || !eq(x, v));
    },
  },
  /** array_repeat(v, n): n copies of v (v may be null). */
  array_repeat: {
    arity: [2, 2],
    types: ([v = 'null', n = 'null']) => (numberLike(n) ? { args: [v, 'int'], result: { array: v } } : `needs an integer count, not ${typeName(n)}`),
    nulls: true,
    value: (v, n) => (n == null ? null : new Array(Math.max(0, n as N)).fill(v ?? null)),
  },
  array_union: {
    arity: [2, 2],
    types: arrays((t) => t),
    bind:
      ([t]) =>
      (a, b) =>
        distinct(elementOf(t as DataType) as DataType, [...(a as A), ...(b as A)]),
  },
  array_intersect: { arity: [2, 2], types: arrays((t) => t), bind: ([t]) => setOperation(elementOf(t as DataType) as DataType, true) },
  array_except: { arity: [2, 2], types: arrays((t) => t), bind: ([t]) => setOperation(elementOf(t as DataType) as DataType, false) },
  /** arrays_overlap(a, b): true if a non-null element is in both; else null if either holds a null (and both are non-empty); else false. */
  arrays_overlap: {
    arity: [2, 2],
    types: arrays(() => 'boolean'),
    bind: ([t]) => {
      const key = identity(elementOf(t as DataType) as DataType);
      return (a, b) => {
        const xs = a as A;
        const ys = b as A;
        const inB = new Set(ys.filter((y) => y != null).map(key));
        if (xs.some((x) => x != null && inB.has(key(x)))) return true;
        return xs.length > 0 && ys.length > 0 && (xs.includes(null) || ys.includes(null)) ? null : false;
      };
    },
  },
  /** flatten(arr of arrays): null if any inner array is null. */
  flatten: {
    arity: [1, 1],
    types: ([a = 'null']) => {
      const e = elementOf(a);
      const inner = e === undefined ? undefined : elementOf(e);
      return inner === undefined ? `needs an array of arrays, not ${typeName(a)}` : { args: [{ array: { array: inner } }], result: { array: inner } };
    },
    value: (arr) => ((arr as A).includes(null) ? null : (arr as A[]).flat()),
  },
  /** slice(arr, start, length): from the 1-based start (from the end when negative). */
  slice: {
    arity: [3, 3],
    types: oneArray((t) => t, 'int', 'int'),
    value: (arr, start, length) => {
      const xs = arr as A;
      if (start === 0)
        throw new SluiceError(
          'INVALID_EXPRESSION',
          '[INVALID_PARAMETER_VALUE.START] slice: the start index 0 is invalid; indices start at 1 (or at -1 from the end)',
        );
      if ((length as N) < 0)
        throw new SluiceError('INVALID_EXPRESSION', `[INVALID_PARAMETER_VALUE.LENGTH] slice: the length ${length as N} must be at least 0`);
      const from = (start as N) > 0 ? (start as N) - 1 : xs.length + (start as N);
      return from < 0 ? [] : xs.slice(from, from + (length as N));
    },
  },
  /** sequence(start, stop[, step]): integers from start to stop inclusive; the step defaults to ±1. */
  sequence: {
    arity: [2, 3],
    types: (args) => {
      if (!args.every((t) => t === 'int' || t === 'long' || t === 'null')) return `needs integers, not ${args.map(typeName).join(', ')}`;
      const t: DataType = args.includes('long') ? 'long' : 'int';
      return { args: args.map(() => t), result: { array: t } };
    },
    value: (start, stop, step) => {
      const [a, b] = [start as N, stop as N];
      const s = (step as N | undefined) ?? (a <= b ? 1 : -1);
      if (s === 0 ? a !== b : (b - a) / s < 0) {
        throw new SluiceError('INVALID_EXPRESSION', `sequence: the step ${s} does not lead from ${a} to ${b}`);
      }
      const out: N[] = [];
      for (let x = a; s > 0 ? x <= b : x >= b; x += s) {
        out.push(x);
        if (s === 0) break;
      }
      return out;
    },
  },
  /** map(k1, v1, k2, v2, ...): keys and values brought to their wider types; a null key is an error. */
  map: {
    arity: [0, Infinity],
    types: (args) => {
      if (args.length % 2 !== 0) return 'needs keys and values in pairs';
      const key = widerType(args.filter((_, i) => i % 2 === 0));
      const value = widerType(args.filter((_, i) => i % 2 === 1));
      if (key === undefined || value === undefined) return `has no common key or value type for ${args.map(typeName).join(', ')}`;
      return { args: args.map((_, i) => (i % 2 === 0 ? key : value)), result: { map: { key, value } } };
    },
    nulls: true,
    value: (...xs) => {
      const out: MapEntries = [];
      for (let i = 0; i < xs.length; i += 2) out.push([nonNullKey(xs[i]), xs[i + 1] ?? null]);
      return dedupKeys(out);
    },
  },
  map_keys: { arity: [1, 1], types: oneMap((m) => ({ array: m.map.key })), value: (m) => (m as MapEntries).map(([k]) => k) },
  map_values: { arity: [1, 1], types: oneMap((m) => ({ array: m.map.value })), value: (m) => (m as MapEntries).map(([, v]) => v) },
  map_entries: {
    arity: [1, 1],
    types: oneMap((m) => ({
      array: {
        struct: [
          { name: 'key', type: m.map.key, nullable: false },
          { name: 'value', type: m.map.value, nullable: true },
        ],
      },
    })),
    value: (m) => (m as MapEntries).map(([key, value]) => ({ key, value })),
  },
  /** map_from_arrays(keys, values): arrays of one length; a null key is an error. */
  map_from_arrays: {
    arity: [2, 2],
    types: ([k = 'null', v = 'null']) => {
      const ke = elementOf(k);
      const ve = elementOf(v);
      return ke === undefined || ve === undefined
        ? `needs two arrays, not ${typeName(k)} and ${typeName(v)}`
        : { args: [{ array: ke }, { array: ve }], result: { map: { key: ke, value: ve } } };
    },
    value: (ks, vs) => {
      if ((ks as A).length !== (vs as A).length)
        throw new SluiceError('INVALID_EXPRESSION', 'map_from_arrays: the key and value arrays must have the same length');
      return dedupKeys((ks as A).map((k, i) => [nonNullKey(k), (vs as A)[i] ?? null]));
    },
  },
  map_contains_key: {
    arity: [2, 2],
    types: ([m = 'null']) => (isMapType(m) ? { args: [m, m.map.key], result: 'boolean' } : `needs a map, not ${typeName(m)}`),
    bind: ([m]) => {
      const eq = equality((m as Extract<DataType, { map: unknown }>).map.key);
      return (entries, k) => (entries as MapEntries).some(([x]) => eq(x, k));
    },
  },
  array_append: {
    arity: [2, 2],
    types: arrayAndValue((w) => ({ array: w })),
    nulls: true,
    value: (arr, v) => (arr == null ? null : [...(arr as A), v ?? null]),
  },
  array_prepend: {
    arity: [2, 2],
    types: arrayAndValue((w) => ({ array: w })),
    nulls: true,
    value: (arr, v) => (arr == null ? null : [v ?? null, ...(arr as A)]),
  },
  array_compact: { arity: [1, 1], types: oneArray((t) => t), value: (arr) => (arr as A).filter((x) => x != null) },
  /** array_size(arr): its length; null for null (unlike size). */
  array_size: { arity: [1, 1], types: oneArray(() => 'int'), value: (arr) => (arr as A).length },
  /** get(arr, i): the element at 0-based i, null out of range (SQL's arr[i]); get(map, key) is the key's value (map[key]). */
  get: {
    arity: [2, 2],
    types: ([a = 'null', i = 'null']) => {
      if (isMapType(a)) return { args: [a, a.map.key], result: a.map.value };
      const e = elementOf(a);
      return e === undefined || !numberLike(i)
        ? `needs an array and an integer index, not ${typeName(a)} and ${typeName(i)}`
        : { args: [{ array: e }, 'int'], result: e };
    },
    bind: ([a]) => {
      if (isMapType(a as DataType)) return mapLookup(a as MapType);
      return (arr, i) => (arr as A)[i as N] ?? null;
    },
  },
  /** str_to_map(text[, pairDelim[, keyValueDelim]]): ',' and ':' by default, both regular expressions; a missing value is null. */
  str_to_map: {
    arity: [1, 3],
    types: (args) =>
      args.every(isAtomicType)
        ? { args: args.map((): DataType => 'string'), result: { map: { key: 'string', value: 'string' } } }
        : `needs text, not ${args.map(typeName).join(', ')}`,
    value: (text, pairs = ',', kv = ':') =>
      dedupKeys(
        splitText(text as string, pairs as string, -1).map((p) => {
          const [k, v] = splitText(p, kv as string, 2);
          return [k as string, v ?? null];
        }),
      ),
  },
  /** map_concat(m...): the entries of every map in order; a repeated key is an error. */
  map_concat: {
    arity: [0, Infinity],
    types: (args) => {
      if (!args.every((t) => isMapType(t) || t === 'null')) return `needs maps, not ${args.map(typeName).join(', ')}`;
      const w = widerType(args);
      return w === undefined || w === 'null' ? `has no common map type for ${args.map(typeName).join(', ')}` : { args: args.map(() => w), result: w };
    },
    value: (...ms) => dedupKeys((ms as MapEntries[]).flat()),
  },
  /** map_from_entries(array of structs): each struct's first field the key, its second the value. */
  map_from_entries: {
    arity: [1, 1],
    types: ([a = 'null']) => {
      const e = elementOf(a);
      if (e === undefined || typeof e !== 'object' || !('struct' in e) || e.struct.length !== 2)
        return `needs an array of two-field structs, not ${typeName(a)}`;
      return { args: [a], result: { map: { key: e.struct[0]!.type, value: e.struct[1]!.type } } };
    },
    bind: ([a]) => {
      const [k, v] = (elementOf(a as DataType) as { struct: Array<{ name: string }> }).struct.map((f) => f.name) as [string, string];
      return (arr) => ((arr as A).includes(null) ? null : dedupKeys((arr as Array<Record<string, unknown>>).map((x) => [nonNullKey(x[k]), x[v] ?? null])));
    },
  },
  /** arrays_zip(a, b, ...): an array of structs whose field i is the i-th array's element (null past its end), fields named 0, 1, ... */
  arrays_zip: {
    arity: [1, Infinity],
    types: (args) => {
      const elements = args.map(elementOf);
      if (elements.some((e) => e === undefined)) return `needs arrays, not ${args.map(typeName).join(', ')}`;
      const struct = { struct: elements.map((e, i) => ({ name: String(i), type: e as DataType, nullable: true })) };
      return { args, result: { array: struct } };
    },
    value: (...arrays) => {
      const xs = arrays as A[];
      const n = Math.max(0, ...xs.map((a) => a.length));
      return Array.from({ length: n }, (_, i) => Object.fromEntries(xs.map((a, j) => [String(j), a[i] ?? null])));
    },
  },
  /** array_insert(arr, pos, v): v inserted at 1-based pos (from the end when negative: -1 after the last); a pos past the end pads with nulls. */
  array_insert: {
    arity: [3, 3],
    types: ([a = 'null', p = 'null', v = 'null']) => {
      const e = elementOf(a);
      const w = e === undefined ? undefined : widerType([e, v]);
      if (w === undefined || !numberLike(p)) return `needs an array, an integer position and a value, not ${typeName(a)}, ${typeName(p)} and ${typeName(v)}`;
      return { args: [{ array: w }, 'int', w], result: { array: w } };
    },
    nulls: true,
    value: (arr, pos, v) => {
      if (arr == null || pos == null) return null;
      const xs = [...(arr as A)];
      const p = pos as N;
      if (p === 0)
        throw new SluiceError(
          'INVALID_EXPRESSION',
          '[INVALID_INDEX_OF_ZERO] array_insert: the position 0 is invalid; positions start at 1 (or at -1 from the end)',
        );
      const at = p > 0 ? p - 1 : xs.length + p + 1;
      if (at < 0) return [v ?? null, ...new Array<null>(-at).fill(null), ...xs];
      while (xs.length < at) xs.push(null);
      xs.splice(at, 0, v ?? null);
      return xs;
    },
  },
  /** split(s, regex[, limit]): the parts around matches; with limit > 0 at most limit parts, the last holding the rest. */
  split: {
    arity: [2, 3],
    types: (args) => {
      const bad = args.findIndex((t, i) => !isAtomicType(t) || (i === 2 && !numberLike(t)));
      if (bad >= 0) return `argument ${bad + 1} cannot be ${typeName(args[bad] as DataType)}`;
      return { args: args.map((_, i): DataType => (i === 2 ? 'int' : 'string')), result: { array: 'string' } };
    },
    value: (s, pattern, limit = -1) => splitText(s as string, pattern as string, limit as N),
  },
};
