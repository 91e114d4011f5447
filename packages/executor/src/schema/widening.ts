/** Spark's type widening: the common type of numbers, of `when` branches and `coalesce` arguments, of array elements. */
import type { DataType } from './types.js';
import { isArrayType, isAtomicType, isMapType, isNumericType, sameType } from './values.js';

const NUMERIC_RANK = { null: 0, int: 1, long: 2, double: 3 } as const;

/** int < long < double; null gives way to anything. */
export function widerNumeric(a: DataType, b: DataType): DataType {
  const ra = NUMERIC_RANK[a as keyof typeof NUMERIC_RANK];
  const rb = NUMERIC_RANK[b as keyof typeof NUMERIC_RANK];
  return ra >= rb ? a : b;
}

/**
 * Spark's findWiderCommonType: numbers widen, text absorbs other atomic
 * types, a DATE widens to a TIMESTAMP, arrays and maps widen element by element, null gives way.
 */
export function widerType(types: readonly DataType[]): DataType | undefined {
  let acc: DataType | undefined = 'null';
  for (const t of types) acc = acc === undefined ? undefined : widerPair(acc, t);
  return acc;
}

function widerPair(a: DataType, b: DataType): DataType | undefined {
  if (a === 'null' || sameType(a, b)) return b;
  if (b === 'null') return a;
  if (isNumericType(a) && isNumericType(b)) return widerNumeric(a, b);
  if ((a === 'date' && b === 'timestamp') || (a === 'timestamp' && b === 'date')) return 'timestamp';
  if ((a === 'string' && isAtomicType(b)) || (b === 'string' && isAtomicType(a))) return 'string';
  if (isArrayType(a) && isArrayType(b)) {
    const e = widerPair(a.array, b.array);
    return e === undefined ? undefined : { array: e };
  }
  if (isMapType(a) && isMapType(b)) {
    const key = widerPair(a.map.key, b.map.key);
    const value = widerPair(a.map.value, b.map.value);
    return key === undefined || value === undefined ? undefined : { map: { key, value } };
  }
  return undefined;
}
