/**
 * A column chunk of one row group decoded into engine values. A top-level column of a primitive
 * type goes page by page into its vector (readFlatColumn): hyparquet decodes each page's headers,
 * compression, levels and values, and a dictionary-encoded STRING column keeps its dictionary and
 * codes. Nested columns go through hyparquet's column reader and assembly (readNestedColumn).
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { getSchemaPath, getTreePath } from 'hyparquet/src/schema.js';
import { parquetHeader, readColumn } from 'hyparquet/src/column.js';
import { assembleNested } from 'hyparquet/src/assemble.js';
import { flatten } from 'hyparquet/src/utils.js';
import { convert, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { readPlain } from 'hyparquet/src/plain.js';
import type { ColumnDecoder, DecodedArray } from 'hyparquet/src/types.js';
import { compressors as decompressors } from 'hyparquet-compressors';
import type { DataType, Row } from '../../schema/types.js';
import type { Vector } from '../../columns/vectors.js';
import type { FileColumn } from './fileSchema.js';
import { floorDiv, PARSERS } from './footer.js';

/** A file's decompressors: Node's own where it has them, hyparquet-compressors' for the rest. */
const DECOMPRESSORS = {
  ...decompressors,
  GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(brotliDecompressSync(input)),
};

/** A file value (hyparquet's decoding, PARSERS applied) in engine form for `type`. */
export function engineValue(type: DataType): (v: unknown) => unknown {
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
export const isFlat = (column: FileColumn, type: DataType): boolean =>
  column.node.children.length === 0 && column.node.element.repetition_type !== 'REPEATED' && typeof type === 'string';

/**
 * A flat column's chunk in one row group as a vector of `rows` values of `type` (readsAs allows
 * it). Nulls come from the definition levels; a dictionary-encoded STRING vector is the dictionary
 * and the page's indexes.
 */
export function readFlatColumn(file: AsyncBuffer, metadata: FileMetaData, group: number, column: FileColumn, type: DataType, rows: number): Vector {
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
export function readNestedColumn(file: AsyncBuffer, metadata: FileMetaData, group: number, column: FileColumn, rows: number): ArrayLike<unknown> {
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
export function sliceVector(v: Vector, lo: number, hi: number): Vector {
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
