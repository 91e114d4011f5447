/** Spark's ordering of values, by type: min and max, sort_array, array_min and array_max use it. */
import type { DataType, Row } from './types.js';

/**
 * Spark's ordering for min and max: numbers and timestamps numerically with NaN above everything,
 * strings by code point (UTF-8 byte order, which JS's UTF-16 `<` breaks for characters past
 * U+FFFF), false before true.
 */
export function compareValues(type: DataType, a: unknown, b: unknown): number {
  if (type === 'string') return compareCodePoints(a as string, b as string);
  if (type === 'boolean') return Number(a) - Number(b);
  if (typeof type === 'object') return comparator(type)(a, b);
  return compareNumbers(a as number, b as number);
}

/**
 * The order of one type's non-null values as a function: arrays element by element (a shorter
 * prefix first), structs field by field, nulls inside them first, as Spark orders them.
 */
export function comparator(type: DataType): (a: unknown, b: unknown) => number {
  const nullsFirst = (cmp: (a: unknown, b: unknown) => number) => (a: unknown, b: unknown) => (a == null ? (b == null ? 0 : -1) : b == null ? 1 : cmp(a, b));
  if (typeof type === 'object' && 'array' in type) {
    const element = nullsFirst(comparator(type.array));
    return (a, b) => {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = element(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    };
  }
  if (typeof type === 'object' && 'struct' in type) {
    const fields = type.struct.map((f) => ({ name: f.name, cmp: nullsFirst(comparator(f.type)) }));
    return (a, b) => {
      for (const f of fields) {
        const c = f.cmp((a as Row)[f.name], (b as Row)[f.name]);
        if (c !== 0) return c;
      }
      return 0;
    };
  }
  return (a, b) => compareValues(type, a, b);
}

/** Numbers and timestamps in Spark's order: NaN is the largest value and equals itself. */
export function compareNumbers(x: number, y: number): number {
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : 1;
  if (Number.isNaN(y)) return -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

function isSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdfff;
}

export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate starts a character above U+FFFF, which sorts after every BMP character.
    const xs = isSurrogate(x);
    if (xs !== isSurrogate(y)) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
