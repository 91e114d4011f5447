/**
 * Every error a user can cause carries a stable `code` (documented in docs/reference/errors.md) and, where one
 * exists, the file, option or column it is about. Messages may change; codes never do.
 * It lives in the lowest package so that state, executor and driver throw the same class.
 */
/**
 * Every code a SluiceError can carry. docs/reference/errors.md documents each of them
 * (test/code-rules.test.ts fails when one is missing there).
 */
export const ERROR_CODES = [
  // configuration, options and plans
  'INVALID_CONF',
  'UNKNOWN_FORMAT',
  'OPTIONAL_DEPENDENCY_MISSING',
  'UNKNOWN_OPTION',
  'INVALID_OPTION',
  'SCHEMA_REQUIRED',
  'INVALID_SCHEMA',
  'UNRESOLVED_COLUMN',
  'MISSING_AGGREGATION',
  'MISSING_GROUP_BY',
  'COLUMN_ALREADY_EXISTS',
  'DATATYPE_MISMATCH',
  'WRONG_NUM_ARGS',
  'INVALID_EXPRESSION',
  'PARSE_SYNTAX_ERROR',
  'UNRESOLVED_ROUTINE',
  'INVALID_EVENT_TIME_COLUMN',
  'UDF_NOT_FOUND',
  'UDF_ASYNC_RESULT',
  'UDF_FAILED',
  'UDF_RESULT_TYPE_MISMATCH',
  'FOREACH_BATCH_FAILED',
  'UNSUPPORTED_OUTPUT_MODE',
  'UNSUPPORTED_OPERATION',
  // checkpoints
  'CHECKPOINT_LOCATION_REQUIRED',
  'CHECKPOINT_LOCKED',
  'CHECKPOINT_CORRUPT',
  'CHECKPOINT_VERSION_UNSUPPORTED',
  'CHECKPOINT_INCOMPATIBLE',
  'UNRESUMABLE_CONTROL_BATCH',
  // state
  'STATE_FILE_BUDGET_TOO_SMALL',
  'STATE_MEMORY_BUDGET_TOO_SMALL',
  'STATE_STORE_CORRUPT',
  'STATE_STORE_LOCKED',
  'STATE_STORE_CLOSED',
  'STATE_STORE_INCOMPATIBLE',
  'STATE_UNDO_MISSING',
  'STATE_COMMIT_OUT_OF_ORDER',
  'INVALID_STATE_KEY',
  'STATE_VALUE_TYPE_MISMATCH',
  'STATE_SCHEMA_INCOMPATIBLE',
  'STATEFUL_PROCESSOR_INVALID_OPERATION',
  // the environment: paths, disk, file handles
  'PATH_NOT_FOUND',
  'PATH_NOT_DIRECTORY',
  'PATH_NOT_WRITABLE',
  'PATH_NOT_READABLE',
  'DISK_FULL',
  'TOO_MANY_OPEN_FILES',
  // sources and running queries
  'MALFORMED_RECORD',
  'SOURCE_FILE_UNREADABLE',
  'SOURCE_PATH_CHANGED',
  'PARQUET_CORRUPT',
  'PARQUET_UNSUPPORTED_TYPE',
  // Delta tables
  'DELTA_TABLE_NOT_FOUND',
  'DELTA_LOG_CORRUPT',
  'DELTA_UNSUPPORTED_FEATURE',
  'DELTA_VERSION_NOT_FOUND',
  'DELTA_SOURCE_IGNORE_DELETE',
  'DELTA_SOURCE_TABLE_IGNORE_CHANGES',
  'DELTA_SCHEMA_CHANGED',
  'DELTA_COMMIT_CONFLICT',
  'SINK_CORRUPT',
  'SINK_OWNED_BY_ANOTHER_QUERY',
  // the SQLite upsert sink
  'SQLITE_DATABASE_NOT_FOUND',
  'SQLITE_OPEN_FAILED',
  'SQLITE_TABLE_NOT_FOUND',
  'SQLITE_COLUMN_MISMATCH',
  'SQLITE_NO_UNIQUE_KEY',
  'SQLITE_LOCKED',
  'SQLITE_WRITE_FAILED',
  // the Redis Streams source
  'REDIS_CONNECTION_FAILED',
  'REDIS_CONNECTION_LOST',
  'REDIS_STREAM_NOT_FOUND',
  'REDIS_WRONG_TYPE',
  'REDIS_DATA_LOSS',
  'TASK_FAILED',
  'STREAMING_QUERY_FAILED',
  'QUERY_NAME_IN_USE',
  'NOT_STREAMING',
  'NOT_STATIC',
  'UNKNOWN_TABLE',
  'TABLE_OR_VIEW_NOT_FOUND',
  'TEMP_TABLE_OR_VIEW_ALREADY_EXISTS',
  'TABLE_SCHEMA_MISMATCH',
  'SESSION_CLOSED',
  'WORKER_ENTRY_MISSING',
  'WORKER_OUT_OF_MEMORY',
] as const;

/**
 * The code of a {@link SluiceError}; docs/reference/errors.md says what each means.
 * @useDeclaredType
 */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Codes of the process warnings Sluice emits (`process.emitWarning(message, { code })`). */
export const WARNING_CODES = [
  'SLUICE_CONF_IGNORED',
  'SLUICE_LISTENER_EVENTS_DROPPED',
  'SLUICE_LISTENER_ERROR',
  'SLUICE_STATE_RELEASE_FAILED',
  'SLUICE_STATE_SHARDS_BELOW_SLOTS',
  'SLUICE_BROADCAST_OVER_THRESHOLD',
  'SLUICE_REDIS_DATA_LOSS',
  'SLUICE_DELTA_CHECKPOINT_FAILED',
] as const;

export type WarningCode = (typeof WARNING_CODES)[number];

/** Emits a process warning with one of Sluice's warning codes. */
export function warn(code: WarningCode, message: string): void {
  process.emitWarning(message, { code });
}

export interface SluiceErrorDetails {
  file?: string;
  option?: string;
  column?: string;
  line?: number;
  /** Names the user may have meant (a misspelled column or option), closest first. */
  suggestions?: string[];
  cause?: unknown;
}

/**
 * The error of everything a user can cause: its `code` is stable (docs/reference/errors.md
 * lists them; messages may change), and it names the file, option or column it is about where
 * there is one. The error it comes from, if any, is its `cause`.
 *
 * @example
 * ```ts
 * try {
 *   await df.writeStream.format('json').start('out');
 * } catch (e) {
 *   if (isSluiceError(e) && e.code === 'CHECKPOINT_LOCATION_REQUIRED') console.error(e.option, e.message);
 * }
 * ```
 */
export class SluiceError extends Error {
  /** The stable code, such as `INVALID_OPTION` or `CHECKPOINT_CORRUPT`. */
  readonly code: ErrorCode;
  /** The file or directory it is about. */
  readonly file?: string;
  /** The option or conf key it is about. */
  readonly option?: string;
  /** The column it is about. */
  readonly column?: string;
  /** The line of the file (or SQL text) it is about. */
  readonly line?: number;
  /** Names the user may have meant (a misspelled column or option), closest first. */
  readonly suggestions?: string[];

  /** @internal */
  constructor(code: ErrorCode, message: string, details: SluiceErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SluiceError';
    this.code = code;
    if (details.file !== undefined) this.file = details.file;
    if (details.option !== undefined) this.option = details.option;
    if (details.column !== undefined) this.column = details.column;
    if (details.line !== undefined) this.line = details.line;
    if (details.suggestions !== undefined) this.suggestions = details.suggestions;
  }

  /** @internal Plain form that survives structured clone across the worker boundary, cause included. */
  toJSON(): SerializedError {
    const cause = this.cause;
    return {
      code: this.code,
      message: this.message,
      ...(this.file !== undefined && { file: this.file }),
      ...(this.option !== undefined && { option: this.option }),
      ...(this.column !== undefined && { column: this.column }),
      ...(this.line !== undefined && { line: this.line }),
      ...(this.suggestions !== undefined && { suggestions: this.suggestions }),
      ...(cause !== undefined && {
        cause:
          cause instanceof Error
            ? { name: cause.name, message: cause.message, ...(cause.stack !== undefined && { stack: cause.stack }) }
            : { name: 'Error', message: String(cause) },
      }),
    };
  }

  /** @internal The error of its plain form (toJSON). */
  static fromJSON(e: SerializedError): SluiceError {
    const { code, message, cause, ...details } = e;
    let revived: Error | undefined;
    if (cause) {
      revived = new Error(cause.message);
      revived.name = cause.name;
      if (cause.stack !== undefined) revived.stack = cause.stack;
    }
    return new SluiceError(code, message, { ...details, ...(revived && { cause: revived }) });
  }
}

export interface SerializedError {
  code: ErrorCode;
  message: string;
  file?: string;
  option?: string;
  column?: string;
  line?: number;
  suggestions?: string[];
  /** The error's cause (a user's error, say), as name, message and stack. */
  cause?: { name: string; message: string; stack?: string };
}

/** Whether `e` is a {@link SluiceError}, so that its `code` can be read. */
export function isSluiceError(e: unknown): e is SluiceError {
  return e instanceof SluiceError;
}
