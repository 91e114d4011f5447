/**
 * Questions about a DataType: its kind (struct, array, map, atomic, numeric, backed by numbers),
 * whether two types are the same, and its SQL name. values.ts re-exports them.
 */
import type { ArrayType, DataType, MapType, StructType } from './types.js';

export function isStructType(t: DataType): t is StructType {
  return typeof t === 'object' && 'struct' in t;
}

export function isArrayType(t: DataType): t is ArrayType {
  return typeof t === 'object' && 'array' in t;
}

export function isMapType(t: DataType): t is MapType {
  return typeof t === 'object' && 'map' in t;
}

/** Types whose engine values are numbers: INT, LONG, DOUBLE, TIMESTAMP (ms) and DATE (days). */
export function isNumberBacked(t: DataType): boolean {
  return isNumericType(t) || t === 'timestamp' || t === 'date';
}

/** STRING, numbers, BOOLEAN, TIMESTAMP, DATE, NULL: not a struct, array or map. */
export function isAtomicType(t: DataType): t is Exclude<DataType, object> {
  return typeof t === 'string';
}

/** A MAP's engine form: its entries, in order. */
export type MapEntries = Array<[key: unknown, value: unknown]>;

export function isNumericType(t: DataType): t is 'int' | 'long' | 'double' {
  return t === 'int' || t === 'long' || t === 'double';
}

export function sameType(a: DataType, b: DataType): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (isArrayType(a) || isArrayType(b)) return isArrayType(a) && isArrayType(b) && sameType(a.array, b.array);
  if (isMapType(a) || isMapType(b)) {
    return isMapType(a) && isMapType(b) && sameType(a.map.key, b.map.key) && sameType(a.map.value, b.map.value);
  }
  return (
    a.struct.length === b.struct.length &&
    a.struct.every((f, i) => {
      const g = b.struct[i];
      return g !== undefined && f.name === g.name && sameType(f.type, g.type);
    })
  );
}

/** Spark's SQL name of a type, as used in messages and in printed casts. */
export function typeName(t: DataType): string {
  if (isStructType(t)) return `STRUCT<${t.struct.map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')}>`;
  if (isArrayType(t)) return `ARRAY<${typeName(t.array)}>`;
  if (isMapType(t)) return `MAP<${typeName(t.map.key)}, ${typeName(t.map.value)}>`;
  return t === 'long' ? 'BIGINT' : t === 'null' ? 'VOID' : t.toUpperCase();
}
