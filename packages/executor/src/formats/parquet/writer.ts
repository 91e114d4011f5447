/**
 * Writing rows as one Parquet file, through hyparquet-writer, with the file's schema made from
 * Sluice's. Types written: STRING, INT, LONG, DOUBLE, BOOLEAN, DATE, TIMESTAMP (INT64
 * microseconds, UTC, as Spark writes with outputTimestampType TIMESTAMP_MICROS), STRUCT, ARRAY and
 * MAP.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import type { SchemaElement } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { snappyCompressor } from 'hysnappy';
import { SluiceError } from '@sluice/state';
import { dataTypeToDDL } from '../../schema/schema.js';
import type { DataType, Row, Schema } from '../../schema/types.js';

export const PARQUET_COMPRESSIONS = ['none', 'uncompressed', 'snappy', 'gzip', 'zstd', 'brotli'] as const;
export type ParquetCompression = (typeof PARQUET_COMPRESSIONS)[number];

/** zstd compression (Node 20's zlib has none): a WebAssembly build, started on first use. */
let zstd: { compress: (input: Uint8Array, level?: number) => Uint8Array } | undefined;

/** Readies what writing with `compression` needs (zstd's WebAssembly); writeParquet needs it done. */
export async function prepareParquetWrite(compression: ParquetCompression): Promise<void> {
  if (compression !== 'zstd' || zstd !== undefined) return;
  const wasm = createRequire(import.meta.url)('@bokuweb/zstd-wasm') as { init(): Promise<void>; compress(input: Uint8Array, level?: number): Uint8Array };
  await wasm.init();
  zstd = wasm;
}

/** One WebAssembly instance of hysnappy's compressor per worker (snappyCompress would start one per page). */
let snappy: ((input: Uint8Array) => Uint8Array) | undefined;

const COMPRESSORS = {
  // hysnappy's WebAssembly build: several times hyparquet-writer's own JavaScript one.
  SNAPPY: (input: Uint8Array) => {
    snappy ??= snappyCompressor();
    return snappy(input);
  },
  GZIP: (input: Uint8Array) => new Uint8Array(gzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(brotliCompressSync(input)),
  ZSTD: (input: Uint8Array) => {
    if (zstd === undefined) throw new Error('zstd compression was not prepared (prepareParquetWrite)');
    return zstd.compress(input, 3);
  },
};

/** The Parquet schema elements of a field (depth first, as the footer lists them). */
function schemaElements(name: string, type: DataType, nullable: boolean): SchemaElement[] {
  const repetition_type = nullable ? 'OPTIONAL' : 'REQUIRED';
  switch (type) {
    case 'string':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type }];
    case 'int':
      return [{ name, type: 'INT32', repetition_type }];
    case 'long':
      return [{ name, type: 'INT64', repetition_type }];
    case 'double':
      return [{ name, type: 'DOUBLE', repetition_type }];
    case 'boolean':
      return [{ name, type: 'BOOLEAN', repetition_type }];
    case 'date':
      return [{ name, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' }, repetition_type }];
    case 'timestamp':
      return [
        {
          name,
          type: 'INT64',
          converted_type: 'TIMESTAMP_MICROS',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
          repetition_type,
        },
      ];
    case 'interval':
    case 'null':
      throw new SluiceError('UNSUPPORTED_OPERATION', `column '${name}' is ${dataTypeToDDL(type)}, which Parquet cannot hold (as in Spark)`, {
        column: name,
        option: 'format',
      });
  }
  if ('array' in type) {
    return [
      { name, repetition_type, converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      ...schemaElements('element', type.array, true),
    ];
  }
  if ('map' in type) {
    return [
      { name, repetition_type, converted_type: 'MAP', logical_type: { type: 'MAP' }, num_children: 1 },
      { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
      ...schemaElements('key', type.map.key, false),
      ...schemaElements('value', type.map.value, true),
    ];
  }
  return [{ name, repetition_type, num_children: type.struct.length }, ...type.struct.flatMap((f) => schemaElements(f.name, f.type, true))];
}

/** The Parquet schema of `schema`: UNSUPPORTED_OPERATION names a column Parquet cannot hold. */
function parquetWriteSchema(schema: Schema): SchemaElement[] {
  return [{ name: 'spark_schema', num_children: schema.length }, ...schema.flatMap((f) => schemaElements(f.name, f.type, true))];
}

/** Checks up front that every column of `schema` can be written to Parquet (UNSUPPORTED_OPERATION naming one that cannot). */
export function checkParquetWritable(schema: Schema): void {
  parquetWriteSchema(schema);
}

/** An engine-form value as hyparquet-writer takes it for `type`. */
function fileValue(type: DataType): (v: unknown) => unknown {
  switch (type) {
    case 'long':
      return (v) => (v == null ? null : BigInt(Math.trunc(v as number)));
    case 'timestamp':
      return (v) => (v == null ? null : BigInt(Math.round((v as number) * 1000)));
    case 'string': {
      // UTF-8 bytes made once per distinct string of the file (hyparquet-writer would encode every value).
      const bytes = new Map<string, Uint8Array>();
      return (v) => {
        if (typeof v !== 'string') return v ?? null;
        let b = bytes.get(v);
        if (b === undefined) {
          b = UTF8.encode(v);
          bytes.set(v, b);
        }
        return b;
      };
    }
    case 'int':
    case 'double':
    case 'boolean':
    case 'date':
    case 'interval':
    case 'null':
      return (v) => v ?? null;
  }
  if ('array' in type) {
    const element = fileValue(type.array);
    return (v) => (v == null ? null : (v as unknown[]).map(element));
  }
  if ('map' in type) {
    const key = fileValue(type.map.key);
    const value = fileValue(type.map.value);
    return (v) => (v == null ? null : new Map((v as Array<[unknown, unknown]>).map(([k, x]) => [key(k), value(x)])));
  }
  const fields = type.struct.map((f) => [f.name, fileValue(f.type)] as const);
  return (v) => {
    if (v == null) return null;
    const out: Record<string, unknown> = {};
    for (const [name, conv] of fields) out[name] = conv((v as Row)[name]);
    return out;
  };
}

const UTF8 = new TextEncoder();

/** Rows per row group of a written file: the unit a reader skips by statistics. */
const ROW_GROUP_ROWS = 100_000;

/** `rows` as one Parquet file of `schema`. */
export function writeParquet(rows: readonly Row[], schema: Schema, compression: ParquetCompression): Uint8Array {
  const elements = parquetWriteSchema(schema);
  const columnData = schema.map((f) => {
    const conv = fileValue(f.type);
    const data: unknown[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) data[i] = conv(rows[i]![f.name]);
    return { name: f.name, data };
  });
  const codec =
    compression === 'none' || compression === 'uncompressed' ? 'UNCOMPRESSED' : (compression.toUpperCase() as 'SNAPPY' | 'GZIP' | 'ZSTD' | 'BROTLI');
  const buffer = parquetWriteBuffer({ columnData, schema: elements, codec, compressors: COMPRESSORS, rowGroupSize: ROW_GROUP_ROWS, createdBy: 'sluice' });
  return new Uint8Array(buffer);
}
