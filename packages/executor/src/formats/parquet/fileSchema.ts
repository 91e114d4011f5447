/**
 * How a Parquet file's schema maps to Sluice's types: each top-level column with its Sluice type,
 * or why it has none.
 *
 * Types read: BOOLEAN; INT32 as INT (DATE as DATE, unsigned 32-bit as LONG); INT64 as LONG (a
 * TIMESTAMP in any unit, and INT96, as TIMESTAMP); FLOAT and DOUBLE, and DECIMAL of any physical
 * type, as DOUBLE; BYTE_ARRAY (STRING, ENUM, JSON or unannotated) and UUID as STRING; groups as
 * STRUCT, LIST and MAP as ARRAY and MAP. A TIMESTAMP keeps milliseconds (Sluice's unit).
 */
import { parquetSchema, type FileMetaData, type SchemaElement, type SchemaTree } from 'hyparquet';
import { isListLike, isMapLike } from 'hyparquet/src/schema.js';
import type { DataType, Field } from '../../schema/types.js';

/** Why a Parquet column has no Sluice type (undefined: it has one). */
export type Mapped = { type: DataType } | { unsupported: string };

function primitiveType(e: SchemaElement): Mapped {
  const logical = e.logical_type;
  const ct = e.converted_type;
  if (ct === 'DECIMAL' || logical?.type === 'DECIMAL') return { type: 'double' };
  switch (e.type) {
    case 'BOOLEAN':
      return { type: 'boolean' };
    case 'INT32':
      if (ct === 'DATE' || logical?.type === 'DATE') return { type: 'date' };
      if (ct === 'TIME_MILLIS' || logical?.type === 'TIME') return { unsupported: 'TIME' };
      if (ct === 'UINT_32' || (logical?.type === 'INTEGER' && !logical.isSigned && logical.bitWidth === 32)) return { type: 'long' };
      return { type: 'int' };
    case 'INT64':
      if (ct === 'TIMESTAMP_MILLIS' || ct === 'TIMESTAMP_MICROS' || logical?.type === 'TIMESTAMP') return { type: 'timestamp' };
      if (ct === 'TIME_MICROS' || logical?.type === 'TIME') return { unsupported: 'TIME' };
      return { type: 'long' };
    case 'INT96':
      return { type: 'timestamp' };
    case 'FLOAT':
    case 'DOUBLE':
      return { type: 'double' };
    case 'BYTE_ARRAY':
      if (ct === 'BSON' || logical?.type === 'BSON') return { unsupported: 'BSON' };
      if (logical?.type === 'GEOMETRY' || logical?.type === 'GEOGRAPHY') return { unsupported: logical.type };
      return { type: 'string' };
    case 'FIXED_LEN_BYTE_ARRAY':
      if (logical?.type === 'UUID') return { type: 'string' };
      if (logical?.type === 'FLOAT16') return { type: 'double' };
      return { unsupported: `FIXED_LEN_BYTE_ARRAY(${e.type_length ?? '?'})` };
    default:
      return { unsupported: String(e.type) };
  }
}

/** The Sluice type of a Parquet schema node (a column or a group). */
function mappedType(node: SchemaTree): Mapped {
  if (node.children.length === 0) return primitiveType(node.element);
  if (isListLike(node)) {
    const repeated = node.children[0] as SchemaTree;
    const element = mappedType(repeated.children.length === 1 ? (repeated.children[0] as SchemaTree) : repeated);
    return 'type' in element ? { type: { array: element.type } } : element;
  }
  if (isMapLike(node)) {
    const [k, v] = (node.children[0] as SchemaTree).children as [SchemaTree, SchemaTree];
    const key = mappedType(k);
    const value = mappedType(v);
    if (!('type' in key)) return key;
    if (!('type' in value)) return value;
    return { type: { map: { key: key.type, value: value.type } } };
  }
  const struct: Field[] = [];
  for (const child of node.children) {
    const t = mappedType(child);
    if (!('type' in t)) return t;
    struct.push({ name: child.element.name, type: t.type, nullable: child.element.repetition_type !== 'REQUIRED' });
  }
  return { type: { struct } };
}

/** A file's top-level columns: each with its Sluice type, or why it has none. */
export interface FileColumn {
  name: string;
  mapped: Mapped;
  node: SchemaTree;
}

export function fileColumns(metadata: FileMetaData): FileColumn[] {
  return parquetSchema(metadata).children.map((node) => ({ name: node.element.name, mapped: mappedType(node), node }));
}
