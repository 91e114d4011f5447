/**
 * Turns `readStream.format(f).option(...).schema(...).load(path)` into a validated source spec.
 * All option checks happen here, at `load()`, so a bad option never reaches a running query.
 */
import { resolve } from 'node:path';
import {
  datetimePatternProblem,
  kDefaultReadOptions,
  nexmarkSchema,
  parseSchema,
  validateReadSchema,
  withCorruptRecordColumn,
  type ReadOptions,
  type Row,
  type Schema,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { Options } from '../conf/Options.js';
import { parseBoolean, parseBytes, parseDuration, parseEnum, parseNonNegativeInt, parseNonNegativeNumber, parsePositiveInt } from '../conf/parsers.js';
import type { FileSourceConfig } from './FileStreamSource.js';
import { validateCleanSource } from './fileSystem.js';
import type { SqliteTableConfig } from './sqliteTable.js';
import { REDIS_FIELD_TYPES, REDIS_SCHEMA, type RedisSourceConfig } from './RedisStreamSource.js';
import type { MemoryStream } from './MemoryStream.js';
import { RATE_SCHEMA } from './RateSource.js';
import type { RateMicroBatchConfig } from './RateMicroBatchSource.js';
import type { NexmarkSourceConfig } from './NexmarkSource.js';
import { deltaSourceTable, rejectDeclaredSchema, type DeltaStreamOptions, type DeltaTableRef } from '../delta/DeltaSource.js';
import type { FilePiece } from './filePieces.js';
import { resolveOptional } from '../optionalDependency.js';

/** A Delta source: readStream's options, or for session.read the version read and its live files. */
export type DeltaSpec = DeltaTableRef & ({ stream: DeltaStreamOptions } | { version: number; files: FilePiece[] });

export const SOURCE_FORMATS = ['json', 'csv', 'text', 'parquet', 'delta', 'rate', 'rate-micro-batch', 'nexmark', 'memory', 'redis'] as const;
/**
 * The formats `session.readStream` reads: files (json, csv, text, parquet), Delta tables, the
 * test sources rate, rate-micro-batch and memory, the Nexmark generator, and Redis streams.
 * @useDeclaredType
 */
export type SourceFormat = (typeof SOURCE_FORMATS)[number];
/** The formats of file sources (streaming and static). */
export type FileFormat = 'json' | 'csv' | 'text' | 'parquet';

export type SourceSpec =
  | { format: FileFormat; schema: Schema; file: FileSourceConfig }
  | { format: 'rate'; schema: Schema; rowsPerSecond: number; numPartitions?: number }
  | { format: 'rate-micro-batch'; schema: Schema; rateMicroBatch: RateMicroBatchConfig }
  | { format: 'nexmark'; schema: Schema; nexmark: NexmarkSourceConfig }
  | { format: 'memory'; schema: Schema; stream: MemoryStream }
  /** A Delta table: streamed by commit (readStream), or read at one version (session.read: `files` set). */
  | { format: 'delta'; schema: Schema; delta: DeltaSpec }
  | { format: 'redis'; schema: Schema; redis: RedisSourceConfig }
  /** Static only: session.read.format('sqlite'). */
  | { format: 'sqlite'; schema: Schema; sqlite: SqliteTableConfig }
  /** Static only: rows held by the plan (session.createDataFrame, SQL's VALUES and SELECT without FROM), in engine form. */
  | { format: 'values'; schema: Schema; rows: Row[] };

export function checkFormat(format: string, known: readonly string[], what: string): void {
  if (!known.includes(format)) {
    throw new SluiceError('UNKNOWN_FORMAT', `unknown ${what} format '${format}'; known: ${known.join(', ')}`, {
      option: 'format',
    });
  }
}

function optInt(o: Options, key: string): number | undefined {
  const v = o.take(key);
  return v === undefined ? undefined : parsePositiveInt(v, key);
}

/** Read options shared by file sources and `session.read`. */
export function readOptions(format: FileFormat, o: Options): ReadOptions {
  if (format === 'parquet') return kDefaultReadOptions;
  const mode = parseEnum(o.take('mode') ?? 'PERMISSIVE', ['PERMISSIVE', 'DROPMALFORMED', 'FAILFAST'] as const, 'mode');
  const corrupt = String(o.take('columnNameOfCorruptRecord') ?? '_corrupt_record');
  let header = false;
  let sep = ',';
  if (format === 'csv') {
    header = parseBoolean(o.take('header') ?? false, 'header');
    const s = o.take('sep') ?? o.take('delimiter') ?? ',';
    if (typeof s !== 'string' || s.length !== 1) {
      throw new SluiceError('INVALID_OPTION', `options.sep must be a single character (got ${JSON.stringify(s)})`, {
        option: 'sep',
      });
    }
    sep = s;
  }
  const formats: Pick<ReadOptions, 'timestampFormat' | 'dateFormat'> = {};
  for (const key of ['timestampFormat', 'dateFormat'] as const) {
    const v = format === 'text' ? undefined : o.take(key);
    if (v === undefined) continue;
    const problem = typeof v === 'string' ? datetimePatternProblem(v) : 'it is not text';
    if (problem !== undefined) throw new SluiceError('INVALID_OPTION', `options.${key}: ${problem}`, { option: key });
    formats[key] = v as string;
  }
  return { mode, columnNameOfCorruptRecord: corrupt, header, sep, ...formats };
}

/** Parse options and schema of a file source, for readStream and read alike. */
export function fileReadSpec(
  format: FileFormat,
  o: Options,
  userSchema: Schema | undefined,
  streaming: boolean,
  infer?: (read: ReadOptions) => Schema,
): { read: ReadOptions; schema: Schema } {
  const corruptColumnNamed = o.has('columnNameOfCorruptRecord');
  const read = readOptions(format, o);
  const schema = userSchema === undefined && infer ? infer(read) : fileSchema(format, userSchema, read, streaming, corruptColumnNamed);
  return { read, schema };
}

/**
 * The schema a file source reads with: given (json/csv) or fixed (text). As in Spark, PERMISSIVE
 * mode fills the corrupt-record column when the schema declares it; naming the column with the
 * `columnNameOfCorruptRecord` option declares it too.
 */
export function fileSchema(format: FileFormat, userSchema: Schema | undefined, read: ReadOptions, streaming: boolean, corruptColumnNamed: boolean): Schema {
  if (format === 'text') {
    // As Spark: the text format reads one STRING column (value, unless the schema names it).
    if (userSchema !== undefined) validateReadSchema(format, userSchema, read);
    return userSchema?.length === 1 ? userSchema : [{ name: 'value', type: 'string', nullable: true }];
  }
  if (!userSchema) {
    throw new SluiceError('SCHEMA_REQUIRED', `a ${streaming ? 'streaming ' : ''}${format} source needs a schema: call .schema('col TYPE, ...') before load()`, {
      option: 'schema',
    });
  }
  if (format === 'parquet') return userSchema;
  const schema = read.mode === 'PERMISSIVE' && corruptColumnNamed ? withCorruptRecordColumn(userSchema, read) : userSchema;
  validateReadSchema(format, schema, read);
  return schema;
}

/** The source spec of a file source (streaming or static). */
export function fileSourceSpec(file: FileSourceConfig): SourceSpec {
  return { format: file.format, schema: file.schema, file };
}

export function resolveSource(
  format: string,
  o: Options,
  userSchema: Schema | undefined,
  path: string | undefined,
  memoryStream: (name: string, schema: Schema | undefined) => MemoryStream,
): SourceSpec {
  checkFormat(format, SOURCE_FORMATS, 'source');
  const f = format as SourceFormat;
  const pathOpt = path ?? (o.take('path') as string | undefined);
  let spec: SourceSpec;
  if (f === 'json' || f === 'csv' || f === 'text' || f === 'parquet') {
    if (pathOpt === undefined || pathOpt === '') {
      throw new SluiceError('INVALID_OPTION', `a ${f} source needs a directory: load(path)`, { option: 'path' });
    }
    const dir = resolve(String(pathOpt));
    const { read, schema } = fileReadSpec(f, o, userSchema, true);
    const cleanSource = parseEnum(o.take('cleanSource') ?? 'off', ['off', 'archive', 'delete'] as const, 'cleanSource');
    const archive = o.take('sourceArchiveDir');
    const archiveDir = archive === undefined ? undefined : resolve(String(archive));
    validateCleanSource(cleanSource, dir, archiveDir);
    const maxFilesPerTrigger = optInt(o, 'maxFilesPerTrigger');
    const bytes = o.take('maxBytesPerTrigger');
    const maxBytesPerTrigger = bytes === undefined ? undefined : parseBytes(bytes, 'maxBytesPerTrigger');
    spec = fileSourceSpec({
      format: f,
      path: dir,
      schema,
      read,
      cleanSource,
      ...(archiveDir !== undefined && { archiveDir }),
      admission: {
        ...(maxFilesPerTrigger !== undefined && { maxFilesPerTrigger }),
        ...(maxBytesPerTrigger !== undefined && { maxBytesPerTrigger }),
        latestFirst: parseBoolean(o.take('latestFirst') ?? false, 'latestFirst'),
        maxFileAgeMs: parseDuration((o.take('maxFileAge') as string | number | undefined) ?? '7 days', 'maxFileAge'),
      },
    });
  } else if (f === 'delta') {
    if (pathOpt === undefined || pathOpt === '')
      throw new SluiceError('INVALID_OPTION', 'a delta source needs the table directory: load(path)', { option: 'path' });
    rejectDeclaredSchema(userSchema);
    const { path, tableId, schemaString, schema } = deltaSourceTable(resolve(String(pathOpt)));
    const starting = o.take('startingVersion');
    const bytes = o.take('maxBytesPerTrigger');
    const flag = (name: string): boolean => parseBoolean(o.take(name) ?? false, name);
    const stream: DeltaStreamOptions = {
      ...(starting !== undefined && starting !== 'latest' && { startingVersion: parseNonNegativeInt(starting, 'startingVersion') }),
      maxFilesPerTrigger: optInt(o, 'maxFilesPerTrigger') ?? 1000,
      ...(bytes !== undefined && { maxBytesPerTrigger: parseBytes(bytes, 'maxBytesPerTrigger') }),
      ignoreDeletes: flag('ignoreDeletes'),
      ignoreChanges: flag('ignoreChanges'),
      skipChangeCommits: flag('skipChangeCommits'),
    };
    spec = { format: 'delta', schema, delta: { path, tableId, schemaString, stream } };
  } else if (f === 'redis') {
    resolveOptional('ioredis', "format('redis')", 'format');
    spec = { format: 'redis', schema: userSchema ?? REDIS_SCHEMA, redis: redisConfig(o, userSchema) };
  } else if (f === 'rate') {
    const rowsPerSecond = optInt(o, 'rowsPerSecond') ?? 1;
    const numPartitions = optInt(o, 'numPartitions');
    spec = { format: f, schema: RATE_SCHEMA, rowsPerSecond, ...(numPartitions !== undefined && { numPartitions }) };
  } else if (f === 'rate-micro-batch') {
    const rowsPerBatch = optInt(o, 'rowsPerBatch');
    if (rowsPerBatch === undefined) {
      throw new SluiceError('INVALID_OPTION', 'options.rowsPerBatch is required for rate-micro-batch', { option: 'rowsPerBatch' });
    }
    const numPartitions = optInt(o, 'numPartitions');
    spec = {
      format: f,
      schema: RATE_SCHEMA,
      rateMicroBatch: {
        rowsPerBatch,
        ...(numPartitions !== undefined && { numPartitions }),
        startTimestamp: parseNonNegativeNumber(o.take('startTimestamp') ?? 0, 'startTimestamp'),
        advanceMillisPerBatch: parseNonNegativeNumber(o.take('advanceMillisPerBatch') ?? 1000, 'advanceMillisPerBatch'),
      },
    };
  } else if (f === 'nexmark') {
    const nexmark = nexmarkConfig(o);
    spec = { format: f, schema: nexmarkSchema(nexmark.table), nexmark };
  } else {
    const name = pathOpt ?? (o.take('name') as string | undefined);
    if (!name) throw new SluiceError('INVALID_OPTION', 'a memory source needs a name: load(name)', { option: 'path' });
    const stream = memoryStream(String(name), userSchema);
    spec = { format: f, schema: stream.schema, stream };
  }
  o.rejectUnknown(`${f} source`);
  return spec;
}

export function parseUserSchema(s: unknown): Schema {
  return parseSchema(s as Parameters<typeof parseSchema>[0], 'schema');
}

/** Options of format('redis'): url and stream are required. */
function redisConfig(o: Options, userSchema: Schema | undefined): RedisSourceConfig {
  for (const f of userSchema ?? []) {
    const standard = REDIS_SCHEMA.find((r) => r.name === f.name);
    const type = typeof f.type === 'string' ? f.type : 'struct';
    if (standard ? standard.type !== type : !REDIS_FIELD_TYPES.includes(type)) {
      throw new SluiceError(
        'INVALID_SCHEMA',
        `column ${f.name} of a redis source: ${standard ? `${f.name} is ${String(standard.type).toUpperCase()}` : `a field becomes ${REDIS_FIELD_TYPES.join(', ')}, not ${type}`}`,
        { column: f.name },
      );
    }
  }
  const url = o.take('url');
  if (typeof url !== 'string' || url === '') throw new SluiceError('INVALID_OPTION', 'a redis source needs option url (redis://host:port)', { option: 'url' });
  const stream = o.take('stream');
  const streams =
    typeof stream === 'string'
      ? stream
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : [];
  if (streams.length === 0)
    throw new SluiceError('INVALID_OPTION', 'a redis source needs option stream: one name, or several separated by commas', { option: 'stream' });
  const starting = o.take('startingOffsets') ?? 'latest';
  let startingOffsets: RedisSourceConfig['startingOffsets'];
  if (starting === 'earliest' || starting === 'latest') startingOffsets = starting;
  else {
    try {
      const parsed = JSON.parse(String(starting)) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Object.values(parsed).some((v) => typeof v !== 'string' || !/^\d+-\d+$/.test(v)))
        throw new Error('not a map of stream to entry id');
      startingOffsets = parsed as Record<string, string>;
    } catch (e) {
      throw new SluiceError(
        'INVALID_OPTION',
        `startingOffsets must be earliest, latest or a JSON map of stream to entry id ("1700000000000-0"): ${(e as Error).message}`,
        { option: 'startingOffsets' },
      );
    }
  }
  const max = optInt(o, 'maxOffsetsPerTrigger');
  return {
    url,
    streams,
    startingOffsets,
    ...(max !== undefined && { maxOffsetsPerTrigger: max }),
    failOnDataLoss: parseBoolean(o.take('failOnDataLoss') ?? true, 'failOnDataLoss'),
  };
}

/** Options of format('nexmark'): which table, the seed, the event-time rate and the bounds. */
function nexmarkConfig(o: Options): NexmarkSourceConfig {
  const table = parseEnum(o.take('table') ?? 'all', ['all', 'person', 'auction', 'bid'] as const, 'table');
  const seed = o.take('seed') ?? 0;
  if (!Number.isSafeInteger(Number(seed)))
    throw new SluiceError('INVALID_OPTION', `options.seed must be an integer (got ${JSON.stringify(seed)})`, { option: 'seed' });
  const start = o.take('startTimestamp');
  const maxEvents = optInt(o, 'maxEvents');
  const maxOffsetsPerTrigger = optInt(o, 'maxOffsetsPerTrigger');
  const numPartitions = optInt(o, 'numPartitions');
  return {
    table,
    seed: Number(seed),
    eventsPerSecond: optInt(o, 'eventsPerSecond') ?? 10_000,
    ...(start !== undefined && { startTimestamp: parseNonNegativeNumber(start, 'startTimestamp') }),
    ...(maxEvents !== undefined && { maxEvents }),
    ...(maxOffsetsPerTrigger !== undefined && { maxOffsetsPerTrigger }),
    ...(numPartitions !== undefined && { numPartitions }),
  };
}
