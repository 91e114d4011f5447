/**
 * What the collection functions (collectionFunctions.ts) share: the typing of their arguments
 * (an array and values, arrays, one array, one map), and the operations on elements: equality
 * and identity by Spark's ordering, distinct values, a map's lookup, set operations, sorting,
 * the least and greatest element, Java's split, and map keys checked (not null, not repeated).
 */
import { SluiceError } from '@sluice/state';
import type { DataType, MapType } from '../schema/types.js';
import { comparator } from '../schema/ordering.js';
import { isArrayType, isAtomicType, isMapType, typeName, type MapEntries } from '../schema/values.js';
import { numberLike } from './mathFunctions.js';
import { widerType } from '../schema/widening.js';
import { regex } from './stringHelpers.js';

export type Typed = { args: DataType[]; result: DataType } | string;
export type A = unknown[];
type N = number;

export const elementOf = (t: DataType): DataType | undefined => (isArrayType(t) ? t.array : t === 'null' ? 'null' : undefined);

/** Arguments (array, value...) brought to ARRAY<W> and W, W the wider of the element and the values. */
export function arrayAndValue(result: DataType | ((w: DataType) => DataType)) {
  return (args: DataType[]): Typed => {
    const [arr = 'null', ...rest] = args;
    const e = elementOf(arr);
    if (e === undefined) return `needs an array, not ${typeName(arr)}`;
    const w = widerType([e, ...rest]);
    if (w === undefined) return `cannot look for ${rest.map(typeName).join(', ')} in ${typeName(arr)}`;
    return { args: [{ array: w }, ...rest.map(() => w)], result: typeof result === 'function' ? result(w) : result };
  };
}

/** Arguments that are all arrays, brought to one element type; the result by that array type. */
export function arrays(result: (t: DataType) => DataType) {
  return (args: DataType[]): Typed => {
    const bad = args.find((t) => elementOf(t) === undefined);
    if (bad !== undefined) return `needs arrays, not ${typeName(bad)}`;
    const w = widerType(args.map((t) => elementOf(t) as DataType));
    if (w === undefined) return `has no common element type for ${args.map(typeName).join(', ')}`;
    return { args: args.map(() => ({ array: w })), result: result({ array: w }) };
  };
}

/** One array argument (then INT or BOOLEAN options by `more`), the result by its type. */
export function oneArray(result: (t: DataType) => DataType, ...more: DataType[]) {
  return (args: DataType[]): Typed => {
    const [arr = 'null', ...rest] = args;
    if (elementOf(arr) === undefined) return `needs an array, not ${typeName(arr)}`;
    const t: DataType = arr === 'null' ? { array: 'null' } : arr;
    const bad = rest.findIndex((r, i) => !(more[i] === 'boolean' ? r === 'boolean' || r === 'null' : numberLike(r)));
    if (bad >= 0) return `argument ${bad + 2} cannot be ${typeName(rest[bad] as DataType)}`;
    return { args: [t, ...rest.map((_, i) => more[i] as DataType)], result: result(t) };
  };
}

export function oneMap(result: (t: Extract<DataType, { map: unknown }>) => DataType) {
  return (args: DataType[]): Typed => {
    const [m = 'null'] = args;
    if (!isMapType(m)) return `needs a map, not ${typeName(m)}`;
    return { args: [m], result: result(m) };
  };
}

/** Equality of two element values: by value for atomic types (NaN equal to NaN), structurally otherwise. */
export function equality(t: DataType): (a: unknown, b: unknown) => boolean {
  if (isAtomicType(t)) return (a, b) => a === b || (Number.isNaN(a) && Number.isNaN(b));
  const cmp = comparator(t);
  return (a, b) => (a == null || b == null ? a == null && b == null : isMapType(t) ? JSON.stringify(a) === JSON.stringify(b) : cmp(a, b) === 0);
}

/** A key that equal values share, for sets of elements. */
export function identity(t: DataType): (v: unknown) => unknown {
  if (isAtomicType(t)) return (v) => (v === 0 ? 0 : v);
  return (v) => JSON.stringify(v);
}

/** Distinct non-repeating values in order of first appearance; null counts once. */
export function distinct(t: DataType, xs: A): A {
  const key = identity(t);
  const seen = new Set<unknown>();
  const out: A = [];
  for (const x of xs) {
    const k = x == null ? null : key(x);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(x);
    }
  }
  return out;
}

/** The value of a key in a map of type `t`, or null. */
export function mapLookup(t: MapType): (m: unknown, k: unknown) => unknown {
  const eq = equality(t.map.key);
  return (m, k) => (m as MapEntries).find(([x]) => eq(x, k))?.[1] ?? null;
}

/** array_intersect (`inB` true) and array_except: a's distinct elements that are (are not) in b. */
export function setOperation(e: DataType, inB: boolean): (a: unknown, b: unknown) => unknown {
  const key = identity(e);
  return (a, b) => {
    const keys = new Set((b as A).map((x) => (x == null ? null : key(x))));
    return distinct(
      e,
      (a as A).filter((x) => keys.has(x == null ? null : key(x)) === inB),
    );
  };
}

export function indexZero(): SluiceError {
  return new SluiceError(
    'INVALID_EXPRESSION',
    '[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1).',
  );
}

/** Java's String.split(regex, limit) as Spark's split uses it: no capture groups in the result, a leading empty match dropped. */
export function splitText(s: string, pattern: string, limit: N): string[] {
  if (s === '') return [''];
  const re = regex(pattern, 'g');
  const out: string[] = [];
  let from = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    if (limit > 0 && out.length === limit - 1) break;
    if (m[0] === '') {
      re.lastIndex += s.codePointAt(re.lastIndex)! > 0xffff ? 2 : 1;
      if (m.index === 0 || m.index >= s.length) continue;
    }
    out.push(s.slice(from, m.index));
    from = m.index + m[0].length;
  }
  out.push(s.slice(from));
  return out;
}

export const sortWith = (t: DataType, asc: boolean, nullsFirst: boolean) => {
  const cmp = comparator(t);
  return (xs: A): A =>
    [...xs].sort((a, b) => (a == null ? (b == null ? 0 : nullsFirst ? -1 : 1) : b == null ? (nullsFirst ? 1 : -1) : asc ? cmp(a, b) : cmp(b, a)));
};

export function extreme(t: DataType, sign: 1 | -1): (arr: unknown) => unknown {
  const cmp = comparator(elementOf(t) as DataType);
  return (arr) => {
    let best: unknown = null;
    for (const x of arr as A) if (x != null && (best === null || sign * cmp(x, best) > 0)) best = x;
    return best;
  };
}

export function nonNullKey(k: unknown): unknown {
  if (k == null) throw new SluiceError('INVALID_EXPRESSION', '[NULL_MAP_KEY] Cannot use null as map key.');
  return k;
}

/** Spark's default (spark.sql.mapKeyDedupPolicy EXCEPTION) refuses a repeated key. */
export function dedupKeys(entries: MapEntries): MapEntries {
  const seen = new Set<unknown>();
  for (const [k] of entries) {
    const id = typeof k === 'object' ? JSON.stringify(k) : k;
    if (seen.has(id)) throw new SluiceError('INVALID_EXPRESSION', `[DUPLICATED_MAP_KEY] Duplicate map key ${String(k)} was found.`);
    seen.add(id);
  }
  return entries;
}
