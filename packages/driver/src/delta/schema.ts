/**
 * A Delta table's schema: Spark's StructType JSON (metaData.schemaString) to Sluice's schema and
 * back. Spark's BYTE, SHORT and INTEGER read as INT, FLOAT and DECIMAL as DOUBLE (Sluice's numbers),
 * and BINARY as STRING; TIMESTAMP_NTZ, and types Sluice lacks, are DELTA_UNSUPPORTED_FEATURE.
 */
import type { DataType, Field, Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';

type SparkType =
  | string
  | { type: 'struct'; fields: SparkField[] }
  | { type: 'array'; elementType: SparkType; containsNull?: boolean }
  | { type: 'map'; keyType: SparkType; valueType: SparkType; valueContainsNull?: boolean };
interface SparkField {
  name: string;
  type: SparkType;
  nullable?: boolean;
  metadata?: Record<string, unknown>;
}

const ATOMIC: Record<string, DataType> = {
  string: 'string',
  long: 'long',
  integer: 'int',
  short: 'int',
  byte: 'int',
  double: 'double',
  float: 'double',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  binary: 'string',
  void: 'null',
};

function fromSpark(t: SparkType, table: string, column: string): DataType {
  if (typeof t === 'string') {
    const atomic = ATOMIC[t] ?? (/^decimal\(\d+,\s*\d+\)$/.test(t) ? 'double' : undefined);
    if (atomic === undefined) {
      throw new SluiceError('DELTA_UNSUPPORTED_FEATURE', `Delta table ${table}: column '${column}' is ${t}, which Sluice has no type for`, {
        file: table,
        column,
      });
    }
    return atomic;
  }
  if (t.type === 'array') return { array: fromSpark(t.elementType, table, column) };
  if (t.type === 'map') return { map: { key: fromSpark(t.keyType, table, column), value: fromSpark(t.valueType, table, column) } };
  return { struct: t.fields.map((f) => ({ name: f.name, type: fromSpark(f.type, table, `${column}.${f.name}`), nullable: f.nullable !== false })) };
}

/** The Sluice schema of a table's schemaString (`table`: for messages). */
export function deltaSchema(schemaString: string, table: string): Schema {
  let parsed: { type?: string; fields?: SparkField[] };
  try {
    parsed = JSON.parse(schemaString) as typeof parsed;
  } catch (e) {
    throw new SluiceError('DELTA_LOG_CORRUPT', `Delta table ${table}: its schemaString is not JSON: ${(e as Error).message}`, { file: table });
  }
  if (parsed.type !== 'struct' || !Array.isArray(parsed.fields))
    throw new SluiceError('DELTA_LOG_CORRUPT', `Delta table ${table}: its schemaString is not a struct`, { file: table });
  return parsed.fields.map((f) => ({ name: f.name, type: fromSpark(f.type, table, f.name), nullable: f.nullable !== false }));
}

function toSpark(t: DataType): SparkType {
  switch (t) {
    case 'int':
      return 'integer';
    case 'null':
      return 'void';
    case 'interval':
      throw new SluiceError('UNSUPPORTED_OPERATION', 'an INTERVAL column cannot be written to a Delta table (as in Spark)', { option: 'format' });
  }
  if (typeof t === 'string') return t;
  if ('array' in t) return { type: 'array', elementType: toSpark(t.array), containsNull: true };
  if ('map' in t) return { type: 'map', keyType: toSpark(t.map.key), valueType: toSpark(t.map.value), valueContainsNull: true };
  return { type: 'struct', fields: t.struct.map(sparkField) };
}

const sparkField = (f: Field): SparkField => ({ name: f.name, type: toSpark(f.type), nullable: true, metadata: {} });

/** A schema as Spark's StructType JSON, every field nullable (as a streaming write declares them). */
export function sparkSchemaString(schema: Schema): string {
  return JSON.stringify({ type: 'struct', fields: schema.map(sparkField) });
}
