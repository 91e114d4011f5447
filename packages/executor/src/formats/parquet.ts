/**
 * Parquet files, through hyparquet (reading) and hyparquet-writer (writing): Sluice encodes and
 * decodes no Parquet itself. This module maps Parquet's types to Sluice's and back, reads a file's
 * wanted columns into column vectors, skips row groups that a pushed-down comparison rules out by
 * their statistics, and writes rows as one file.
 *
 * Types read: BOOLEAN; INT32 as INT (DATE as DATE, unsigned 32-bit as LONG); INT64 as LONG (a
 * TIMESTAMP in any unit, and INT96, as TIMESTAMP); FLOAT and DOUBLE, and DECIMAL of any physical
 * type, as DOUBLE; BYTE_ARRAY (STRING, ENUM, JSON or unannotated) and UUID as STRING; groups as
 * STRUCT, LIST and MAP as ARRAY and MAP. A TIMESTAMP keeps milliseconds (Sluice's unit). Types
 * written: STRING, INT, LONG, DOUBLE, BOOLEAN, DATE, TIMESTAMP (INT64 microseconds, UTC, as Spark
 * writes with outputTimestampType TIMESTAMP_MICROS), STRUCT, ARRAY and MAP.
 *
 * A top-level column of a primitive type goes page by page into its vector (readFlatColumn):
 * hyparquet decodes each page's headers, compression, levels and values, and a dictionary-encoded
 * STRING column keeps its dictionary and codes. Nested columns go through hyparquet's column reader
 * and assembly (readNestedColumn). A read is synchronous: the file's bytes are read in place.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { parquetMetadata, parquetSchema, type AsyncBuffer, type FileMetaData, type SchemaElement, type SchemaTree } from 'hyparquet';
import { getSchemaPath, getTreePath, isListLike, isMapLike } from 'hyparquet/src/schema.js';
import { parquetHeader, readColumn } from 'hyparquet/src/column.js';
import { assembleNested } from 'hyparquet/src/assemble.js';
import { flatten } from 'hyparquet/src/utils.js';
import { convert, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { readPlain } from 'hyparquet/src/plain.js';
import type { ColumnDecoder, DecodedArray } from 'hyparquet/src/types.js';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { compressors as decompressors } from 'hyparquet-compressors';
import { snappyCompressor } from 'hysnappy';
import { SluiceError } from '@sluice/state';
import type { Expr } from '../expressions/types.js';
import { conjuncts } from '../expressions/joinBounds.js';
import { dataTypeToDDL } from '../schema/schema.js';
import type { DataType, Field, Row, Schema } from '../schema/types.js';
import { rowsFromBatch, VectorBuilder, type ColumnBatch, type Vector } from '../columns/vectors.js';

// ---- types -------------------------------------------------------------------------------------

/** Why a Parquet column has no Sluice type (undefined: it has one). */
type Mapped = { type: DataType } | { unsupported: string };

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
interface FileColumn {
  name: string;
  mapped: Mapped;
  node: SchemaTree;
}

function fileColumns(metadata: FileMetaData): FileColumn[] {
  return parquetSchema(metadata).children.map((node) => ({ name: node.element.name, mapped: mappedType(node), node }));
}

// ---- footers -----------------------------------------------------------------------------------

/** Engine-form values from hyparquet's decoding: times as epoch ms, dates as days. */
const PARSERS = {
  timestampFromMilliseconds: (v: bigint): number => Number(v),
  timestampFromMicroseconds: (v: bigint): number => floorDiv(v, 1000n),
  timestampFromNanoseconds: (v: bigint): number => floorDiv(v, 1_000_000n),
  dateFromDays: (d: number): number => d,
};

function floorDiv(v: bigint, by: bigint): number {
  const q = v / by;
  return Number(v < 0n && q * by !== v ? q - 1n : q);
}

/** A file read in place: hyparquet asks for the byte ranges it needs (the footer, the wanted column chunks). */
function fileBuffer(fd: number): AsyncBuffer {
  const size = fstatSync(fd).size;
  return {
    byteLength: size,
    slice(start: number, end = size): ArrayBuffer {
      const out = new Uint8Array(Math.max(0, end - start));
      let done = 0;
      while (done < out.length) {
        const n = readSync(fd, out, done, out.length - done, start + done);
        if (n === 0) break;
        done += n;
      }
      return out.buffer;
    },
  };
}

/** The footer of a Parquet file, parsed; PARQUET_CORRUPT naming the file when it is not one. */
function footerOf(file: AsyncBuffer, path: string): FileMetaData {
  try {
    if (file.byteLength < 12) throw new Error('the file is too short');
    const tail = new DataView(file.slice(file.byteLength - 8) as ArrayBuffer);
    const length = tail.getUint32(0, true);
    if (tail.getUint32(4, true) !== 0x31524150) throw new Error("it does not end with 'PAR1'");
    if (length + 8 > file.byteLength) throw new Error(`its footer length ${length} exceeds the file`);
    return parquetMetadata(file.slice(file.byteLength - length - 8) as ArrayBuffer, { parsers: PARSERS });
  } catch (e) {
    throw new SluiceError('PARQUET_CORRUPT', `${path} is not a readable Parquet file: ${(e as Error).message}`, { file: path });
  }
}

/** A file descriptor of `path`: PATH_NOT_FOUND when it is gone (a Delta file VACUUM removed, a file deleted after listing). */
function openParquet(path: string): number {
  try {
    return openSync(path, 'r');
  } catch (e) {
    const gone = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new SluiceError(gone ? 'PATH_NOT_FOUND' : 'PARQUET_CORRUPT', `cannot open ${path}: ${(e as Error).message}`, { file: path });
  }
}

function withFile<T>(path: string, fn: (file: AsyncBuffer) => T): T {
  const fd = openParquet(path);
  try {
    return fn(fileBuffer(fd));
  } finally {
    closeSync(fd);
  }
}

/**
 * The schema of a Parquet file, from its footer (every column nullable, as Spark reads files). A
 * column of a type Sluice lacks is PARQUET_UNSUPPORTED_TYPE naming it.
 */
export function parquetFileSchema(path: string): Schema {
  const columns = withFile(path, (file) => fileColumns(footerOf(file, path)));
  return columns.map((c) => {
    if (!('type' in c.mapped)) {
      throw new SluiceError('PARQUET_UNSUPPORTED_TYPE', `${path}: column '${c.name}' is Parquet ${c.mapped.unsupported}, which Sluice has no type for`, {
        file: path,
        column: c.name,
      });
    }
    return { name: c.name, type: c.mapped.type, nullable: true };
  });
}

/** The compressed bytes of each row group of a Parquet file, from its footer (the driver splits large files by them). */
export function parquetRowGroupBytes(path: string): number[] {
  return withFile(path, (file) => footerOf(file, path).row_groups.map((g) => Number(g.total_compressed_size ?? g.total_byte_size)));
}

// ---- reading -----------------------------------------------------------------------------------

/** Whether a file column of type `found` can be read as `wanted`: the same, or widened (INT to LONG, a number to DOUBLE). */
function readsAs(found: DataType, wanted: DataType): boolean {
  if (typeof found === 'string' || typeof wanted === 'string') {
    if (found === wanted) return true;
    return (found === 'int' && wanted === 'long') || ((found === 'int' || found === 'long') && wanted === 'double');
  }
  if ('array' in found && 'array' in wanted) return readsAs(found.array, wanted.array);
  if ('map' in found && 'map' in wanted) return readsAs(found.map.key, wanted.map.key) && readsAs(found.map.value, wanted.map.value);
  if ('struct' in found && 'struct' in wanted) {
    return wanted.struct.every((w) => {
      const f = found.struct.find((x) => x.name === w.name) ?? found.struct.find((x) => x.name.toLowerCase() === w.name.toLowerCase());
      return f === undefined || readsAs(f.type, w.type);
    });
  }
  return false;
}

/** A file value (hyparquet's decoding, PARSERS applied) in engine form for `type`. */
function engineValue(type: DataType): (v: unknown) => unknown {
  if (type === 'string') return (v) => (v == null ? null : typeof v === 'string' ? v : v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : String(v));
  if (type === 'boolean') return (v) => (v == null ? null : v === true || v === 1);
  if (typeof type === 'string') {
    // Numbers: bigint from INT64, a Date where a parser did not apply.
    return (v) => (v == null ? null : typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : Number(v));
  }
  if ('array' in type) {
    const element = engineValue(type.array);
    return (v) => (v == null ? null : Array.from(v as ArrayLike<unknown>, element));
  }
  if ('map' in type) {
    // hyparquet gives a map as an object keyed by its keys' text.
    const key = type.map.key === 'string' ? (k: string) => k : type.map.key === 'boolean' ? (k: string) => k === 'true' : (k: string) => Number(k);
    const value = engineValue(type.map.value);
    return (v) => (v == null ? null : Object.entries(v as Record<string, unknown>).map(([k, x]) => [key(k), value(x)]));
  }
  const fields = type.struct.map((f) => [f.name, engineValue(f.type)] as const);
  return (v) => {
    if (v == null) return null;
    const s = v as Record<string, unknown>;
    const out: Row = {};
    for (const [name, conv] of fields) out[name] = conv(s[name]);
    return out;
  };
}

/** The full parsers hyparquet's page decoding takes (PARSERS over its defaults). */
const PAGE_PARSERS = { ...DEFAULT_PARSERS, ...PARSERS };

/** Whether a file column is read page by page into its vector: a top-level column of a primitive type. */
const isFlat = (column: FileColumn, type: DataType): boolean =>
  column.node.children.length === 0 && column.node.element.repetition_type !== 'REPEATED' && typeof type === 'string';

/**
 * A flat column's chunk in one row group as a vector of `rows` values of `type` (readsAs allows
 * it). Nulls come from the definition levels; a dictionary-encoded STRING vector is the dictionary
 * and the page's indexes.
 */
function readFlatColumn(file: AsyncBuffer, metadata: FileMetaData, group: number, column: FileColumn, type: DataType, rows: number): Vector {
  const chunk = metadata.row_groups[group]!.columns.find((c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === column.name);
  const meta = chunk?.meta_data;
  if (meta === undefined) throw new Error(`row group ${group} has no chunk of column ${column.name}`);
  const bytes = chunkBytes(file, meta);
  const decoder: ColumnDecoder = {
    pathInSchema: [column.name],
    type: meta.type,
    element: column.node.element,
    schemaPath: getSchemaPath(metadata.schema, [column.name]),
    codec: meta.codec,
    parsers: PAGE_PARSERS,
    compressors: DECOMPRESSORS,
    utf8: true,
  };
  const optional = column.node.element.repetition_type === 'OPTIONAL';
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  const isString = type === 'string';
  const isBool = type === 'boolean';
  const nums = isString || isBool ? null : new Float64Array(rows);
  const bools = isBool ? new Uint8Array(rows) : null;
  const codes = isString ? new Int32Array(rows) : null;
  let nulls: Uint8Array | null = null;
  // A STRING chunk's strings: its dictionary's, then those of plain pages (codeOf: made when one comes).
  let strings: string[] = [];
  let codeOf: Map<string, number> | undefined;
  let dictionary: DecodedArray | undefined;
  let row = 0;
  while (row < rows && reader.offset < bytes.length) {
    const header = parquetHeader(reader);
    const page = bytes.subarray(reader.offset, reader.offset + header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    let levels: ArrayLike<number> | undefined;
    let values: DecodedArray;
    let encoding: string;
    let count: number;
    if (header.type === 'DICTIONARY_PAGE') {
      const plain = decompressPage(page, header.uncompressed_page_size, meta.codec, DECOMPRESSORS);
      const dictReader = { view: new DataView(plain.buffer, plain.byteOffset, plain.byteLength), offset: 0 };
      dictionary = convert(readPlain(dictReader, meta.type, header.dictionary_page_header!.num_values, column.node.element.type_length), decoder);
      if (isString) {
        strings = Array.from(dictionary as ArrayLike<unknown>, (v) => String(v));
        codeOf = undefined;
      }
      continue;
    } else if (header.type === 'DATA_PAGE') {
      const daph = header.data_page_header!;
      ({ definitionLevels: levels, dataPage: values } = readDataPage(
        decompressPage(page, header.uncompressed_page_size, meta.codec, DECOMPRESSORS),
        daph,
        decoder,
      ));
      encoding = daph.encoding;
      count = daph.num_values;
    } else if (header.type === 'DATA_PAGE_V2') {
      const v2 = header.data_page_header_v2!;
      ({ definitionLevels: levels, dataPage: values } = readDataPageV2(page, header, decoder));
      encoding = v2.encoding;
      count = v2.num_values;
    } else continue; // an index page
    const indexed = encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY';
    if (indexed && dictionary === undefined) throw new Error(`column ${column.name}: a dictionary-encoded page without a dictionary`);
    const vals: ArrayLike<unknown> =
      indexed && isString
        ? values
        : indexed
          ? Array.from(values as ArrayLike<number>, (k) => (dictionary as ArrayLike<unknown>)[k])
          : nums !== null
            ? pageNumbers(values, decoder)
            : convert(values, decoder);
    const hasLevels = optional && levels !== undefined && levels.length > 0;
    let k = 0;
    if (nums !== null && (vals instanceof Float64Array || vals instanceof Int32Array || vals instanceof Float32Array)) {
      // The common case, typed numbers: no check per value.
      for (let j = 0; j < count && row < rows; j++, row++) {
        if (hasLevels && levels![j] === 0) {
          nulls ??= new Uint8Array(rows);
          nulls[row] = 1;
        } else nums[row] = vals[k++] as number;
      }
      continue;
    }
    for (let j = 0; j < count && row < rows; j++, row++) {
      if (hasLevels && levels![j] === 0) {
        nulls ??= new Uint8Array(rows);
        nulls[row] = 1;
        continue;
      }
      const v = vals[k++];
      if (nums !== null) nums[row] = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : Number(v);
      else if (bools !== null) bools[row] = v === true || v === 1 ? 1 : 0;
      else if (indexed) codes![row] = v as number;
      else {
        const text = String(v);
        if (codeOf === undefined) codeOf = new Map(strings.map((x, i) => [x, i]));
        let code = codeOf.get(text);
        if (code === undefined) {
          code = strings.length;
          strings.push(text);
          codeOf.set(text, code);
        }
        codes![row] = code;
      }
    }
  }
  if (row < rows) throw new Error(`column ${column.name}: row group ${group} holds ${rows} rows, its pages ${row}`);
  if (nums !== null) return { kind: 'num', length: rows, values: nums, nulls };
  if (bools !== null) return { kind: 'bool', length: rows, values: bools, nulls };
  return { kind: 'str', length: rows, dict: strings, codes: codes!, nulls };
}

/**
 * A page's plain numbers in engine form, typed: INT32, FLOAT and DOUBLE as they are, INT64 as
 * numbers (a TIMESTAMP in milliseconds); DECIMAL, unsigned and INT96 through hyparquet's convert.
 */
function pageNumbers(values: DecodedArray, decoder: ColumnDecoder): DecodedArray {
  const { converted_type: ct, logical_type: lt } = decoder.element;
  if (ct === 'DECIMAL' || lt?.type === 'DECIMAL' || ct?.startsWith('UINT_') || (lt?.type === 'INTEGER' && !lt.isSigned)) return convert(values, decoder);
  if (values instanceof BigInt64Array) {
    const unit = ct === 'TIMESTAMP_MICROS' ? 'MICROS' : ct === 'TIMESTAMP_MILLIS' ? 'MILLIS' : lt?.type === 'TIMESTAMP' ? lt.unit : undefined;
    const out = new Float64Array(values.length);
    if (unit === 'NANOS') for (let i = 0; i < values.length; i++) out[i] = floorDiv(values[i]!, 1_000_000n);
    else if (unit === 'MICROS') {
      for (let i = 0; i < values.length; i++) {
        const x = Number(values[i]);
        // Exact below 2^53 microseconds (the year 2255); past it, in BigInt.
        out[i] = Math.abs(x) < Number.MAX_SAFE_INTEGER ? Math.floor(x / 1000) : floorDiv(values[i]!, 1000n);
      }
    } else for (let i = 0; i < values.length; i++) out[i] = Number(values[i]);
    return out;
  }
  return values instanceof Int32Array || values instanceof Float64Array || values instanceof Float32Array ? values : convert(values, decoder);
}

/** A column chunk's bytes (some writers put a dictionary offset of 0 for a chunk without one: it starts at the lesser real offset). */
function chunkBytes(file: AsyncBuffer, meta: NonNullable<FileMetaData['row_groups'][number]['columns'][number]['meta_data']>): Uint8Array {
  const dictionaryAt = meta.dictionary_page_offset !== undefined && meta.dictionary_page_offset > 0n ? Number(meta.dictionary_page_offset) : undefined;
  const start = Math.min(Number(meta.data_page_offset), dictionaryAt ?? Number.POSITIVE_INFINITY);
  return new Uint8Array(file.slice(start, start + Number(meta.total_compressed_size)) as ArrayBuffer);
}

/**
 * A nested top-level column (a group, or a LIST or MAP) in one row group, as hyparquet assembles
 * it: each of its leaf chunks read (readColumn), then put together (assembleNested).
 */
function readNestedColumn(file: AsyncBuffer, metadata: FileMetaData, group: number, column: FileColumn, rows: number): ArrayLike<unknown> {
  const tree = parquetSchema(metadata);
  const sub = new Map<string, DecodedArray>();
  for (const chunk of metadata.row_groups[group]!.columns) {
    const meta = chunk.meta_data;
    if (meta === undefined || meta.path_in_schema[0] !== column.name) continue;
    const schemaPath = getTreePath(tree, meta.path_in_schema);
    const decoder: ColumnDecoder = {
      pathInSchema: meta.path_in_schema,
      type: meta.type,
      element: schemaPath[schemaPath.length - 1]!.element,
      schemaPath,
      codec: meta.codec,
      parsers: PAGE_PARSERS,
      compressors: DECOMPRESSORS,
      utf8: true,
    };
    const bytes = chunkBytes(file, meta);
    const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
    const { data } = readColumn(reader, { groupStart: 0, selectStart: 0, selectEnd: rows, groupRows: rows }, decoder);
    sub.set(meta.path_in_schema.join('.'), flatten(data));
  }
  assembleNested(sub, column.node, PAGE_PARSERS);
  const values = sub.get(column.name);
  if (values === undefined || values.length < rows)
    throw new Error(`column ${column.name}: row group ${group} holds ${rows} rows, its pages ${values?.length ?? 0}`);
  return values;
}

/** Rows [lo, hi) of a vector, sharing its arrays. */
function sliceVector(v: Vector, lo: number, hi: number): Vector {
  const n = hi - lo;
  switch (v.kind) {
    case 'num':
      return { kind: 'num', length: n, values: v.values.subarray(lo, hi), nulls: v.nulls === null ? null : v.nulls.subarray(lo, hi) };
    case 'bool':
      return { kind: 'bool', length: n, values: v.values.subarray(lo, hi), nulls: v.nulls === null ? null : v.nulls.subarray(lo, hi) };
    case 'str':
      return { kind: 'str', length: n, dict: v.dict, codes: v.codes.subarray(lo, hi), nulls: v.nulls === null ? null : v.nulls.subarray(lo, hi) };
    case 'any':
      return { kind: 'any', length: n, values: v.values.slice(lo, hi) };
  }
}

/** A comparison of a column with a literal, which a row group's statistics can rule out. */
export interface ParquetPredicate {
  column: string;
  op: 'equalTo' | 'lt' | 'leq' | 'gt' | 'geq' | 'isNull' | 'isNotNull';
  value?: number | string | boolean;
}

const FLIPPED = { equalTo: 'equalTo', lt: 'gt', leq: 'geq', gt: 'lt', geq: 'leq' } as const;

/** The comparisons of column with literal among a filter's conjuncts (the rest it ignores: they only keep more row groups). */
export function parquetPredicates(cond: Expr): ParquetPredicate[] {
  const out: ParquetPredicate[] = [];
  for (const c of conjuncts(cond)) {
    if (c.op === 'unary' && (c.fn === 'isNull' || c.fn === 'isNotNull') && c.expr.op === 'col') out.push({ column: c.expr.name, op: c.fn });
    if (c.op !== 'binary' || !(c.fn in FLIPPED)) continue;
    const fn = c.fn as keyof typeof FLIPPED;
    const lit = (e: Expr): e is Extract<Expr, { op: 'lit' }> => e.op === 'lit' && e.value !== null;
    if (c.left.op === 'col' && lit(c.right)) out.push({ column: c.left.name, op: fn, value: c.right.value as number | string | boolean });
    else if (c.right.op === 'col' && lit(c.left)) out.push({ column: c.right.name, op: FLIPPED[fn], value: c.left.value as number | string | boolean });
  }
  return out;
}

/** Whether a row group may hold a row meeting every predicate, by its columns' statistics. */
function mayMatch(metadata: FileMetaData, group: number, predicates: readonly ParquetPredicate[], types: ReadonlyMap<string, DataType>): boolean {
  const rowGroup = metadata.row_groups[group]!;
  const rows = Number(rowGroup.num_rows);
  for (const p of predicates) {
    const type = types.get(p.column);
    const chunk = rowGroup.columns.find((c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === p.column);
    const stats = chunk?.meta_data?.statistics;
    if (type === undefined || stats === undefined) continue;
    const nulls = stats.null_count === undefined ? undefined : Number(stats.null_count);
    if (p.op === 'isNull') {
      if (nulls === 0) return false;
      continue;
    }
    if (nulls === rows) return false; // every value is null: no comparison holds
    if (p.op === 'isNotNull') continue;
    // Strings only by exact bounds (a writer may truncate them); numbers by either form.
    const exact = type !== 'string' || (stats.is_min_value_exact === true && stats.is_max_value_exact === true);
    const bound = (v: unknown): number | string | boolean | undefined =>
      v === undefined || v === null ? undefined : typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : (v as number | string | boolean);
    const min = bound(stats.min_value ?? (type === 'string' ? undefined : stats.min));
    const max = bound(stats.max_value ?? (type === 'string' ? undefined : stats.max));
    const x = p.value;
    if (!exact || min === undefined || max === undefined || typeof min !== typeof x || typeof max !== typeof x) continue;
    if (typeof x === 'number' && Number.isNaN(x)) continue;
    const out =
      (p.op === 'equalTo' && (x! < min || x! > max)) ||
      (p.op === 'lt' && min >= x!) ||
      (p.op === 'leq' && min > x!) ||
      (p.op === 'gt' && max <= x!) ||
      (p.op === 'geq' && max < x!);
    if (out) return false;
  }
  return true;
}

/** A file's decompressors: Node's own where it has them, hyparquet-compressors' for the rest. */
const DECOMPRESSORS = {
  ...decompressors,
  GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(brotliDecompressSync(input)),
};

export interface ParquetRead {
  batches: ColumnBatch[];
  rows: number;
  /** Row groups the statistics ruled out. */
  skippedGroups: number;
}

/**
 * The columns of `schema` from one Parquet file, as batches of at most `maxRows` rows: a column the
 * file lacks reads as null (Spark's rule for a declared schema); one whose type differs, beyond
 * widening, is INVALID_SCHEMA naming the column and the file. Row groups whose statistics rule out
 * a predicate are not read.
 */
export function readParquetFile(
  path: string,
  schema: Schema,
  predicates: readonly ParquetPredicate[],
  maxRows: number,
  rowGroups?: readonly [number, number],
): ParquetRead {
  const fd = openParquet(path);
  try {
    const file = fileBuffer(fd);
    const metadata = footerOf(file, path);
    const columns = fileColumns(metadata);
    // Each wanted column's name in the file (case-insensitive, as Spark resolves Parquet columns), or none.
    const sources = schema.map((f) => {
      const c = columns.find((x) => x.name === f.name) ?? columns.find((x) => x.name.toLowerCase() === f.name.toLowerCase());
      if (c === undefined) return undefined;
      if (!('type' in c.mapped)) {
        throw new SluiceError('PARQUET_UNSUPPORTED_TYPE', `${path}: column '${c.name}' is Parquet ${c.mapped.unsupported}, which Sluice has no type for`, {
          file: path,
          column: f.name,
        });
      }
      if (!readsAs(c.mapped.type, f.type)) {
        throw new SluiceError(
          'INVALID_SCHEMA',
          `${path}: column '${f.name}' is ${dataTypeToDDL(c.mapped.type)} in the file, which cannot be read as the schema's ${dataTypeToDDL(f.type)}`,
          { file: path, column: f.name },
        );
      }
      return c.name;
    });
    const types = new Map<string, DataType>();
    schema.forEach((f, i) => {
      const source = sources[i];
      if (source !== undefined && typeof f.type === 'string') types.set(source, f.type);
    });
    const out: ParquetRead = { batches: [], rows: 0, skippedGroups: 0 };
    let groupStart = 0;
    const [first, end] = rowGroups ?? [0, metadata.row_groups.length];
    for (let g = 0; g < Math.min(end, metadata.row_groups.length); g++) {
      const groupRows = Number(metadata.row_groups[g]!.num_rows);
      const start = groupStart;
      groupStart += groupRows;
      if (groupRows === 0 || g < first) continue;
      if (!mayMatch(metadata, g, predicates, types)) {
        out.skippedGroups++;
        continue;
      }
      // Flat columns page by page into vectors; nested ones as hyparquet assembles them.
      const flat = new Map<string, Vector>();
      const nested = new Map<string, ArrayLike<unknown>>();
      schema.forEach((f, i) => {
        const source = sources[i];
        if (source === undefined) return;
        const column = columns.find((c) => c.name === source) as FileColumn;
        try {
          if (isFlat(column, f.type)) flat.set(f.name, readFlatColumn(file, metadata, g, column, f.type, groupRows));
          else nested.set(f.name, readNestedColumn(file, metadata, g, column, groupRows));
        } catch (e) {
          throw e instanceof SluiceError
            ? e
            : new SluiceError('PARQUET_CORRUPT', `${path}: row group ${g} does not decode: ${(e as Error).message}`, { file: path });
        }
      });
      for (let lo = start; lo < start + groupRows; lo += maxRows) {
        const hi = Math.min(start + groupRows, lo + maxRows);
        const batch: ColumnBatch = { length: hi - lo, columns: new Map() };
        schema.forEach((f) => {
          const whole = flat.get(f.name);
          if (whole !== undefined) {
            batch.columns.set(f.name, sliceVector(whole, lo - start, hi - start));
            return;
          }
          const b = new VectorBuilder(f.type, hi - lo);
          const values = nested.get(f.name);
          const conv = engineValue(f.type);
          for (let r = lo; r < hi; r++) b.push(values === undefined ? null : conv(values[r - start]));
          batch.columns.set(f.name, b.build());
        });
        out.batches.push(batch);
        out.rows += batch.length;
      }
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** A Parquet file's rows of `schema` in engine form (the driver reads Delta checkpoints so). */
export function readParquetRows(path: string, schema: Schema): Row[] {
  return readParquetFile(path, schema, [], 1 << 16).batches.flatMap((b) => rowsFromBatch(b, schema));
}

// ---- writing -----------------------------------------------------------------------------------

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
