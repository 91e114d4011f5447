/**
 * Every error a user can cause carries a stable `code` (documented in the README) and, where one
 * exists, the file, option or column it is about. Messages may change; codes never do.
 * It lives in the lowest package so that state, executor and driver throw the same class.
 */
export interface SluiceErrorDetails {
  file?: string;
  option?: string;
  column?: string;
  line?: number;
  cause?: unknown;
}

export class SluiceError extends Error {
  readonly code: string;
  readonly file?: string;
  readonly option?: string;
  readonly column?: string;
  readonly line?: number;

  constructor(code: string, message: string, details: SluiceErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SluiceError';
    this.code = code;
    if (details.file !== undefined) this.file = details.file;
    if (details.option !== undefined) this.option = details.option;
    if (details.column !== undefined) this.column = details.column;
    if (details.line !== undefined) this.line = details.line;
  }

  /** Plain form that survives structured clone across the worker boundary. */
  toJSON(): SerializedError {
    return {
      code: this.code,
      message: this.message,
      ...(this.file !== undefined && { file: this.file }),
      ...(this.option !== undefined && { option: this.option }),
      ...(this.column !== undefined && { column: this.column }),
      ...(this.line !== undefined && { line: this.line }),
    };
  }

  static fromJSON(e: SerializedError): SluiceError {
    const { code, message, ...details } = e;
    return new SluiceError(code, message, details);
  }
}

export interface SerializedError {
  code: string;
  message: string;
  file?: string;
  option?: string;
  column?: string;
  line?: number;
}

export function isSluiceError(e: unknown): e is SluiceError {
  return e instanceof SluiceError;
}
