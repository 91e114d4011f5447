/**
 * Code of the user's that the workers import: a user function (udf) and a stateful processor
 * (statefulProcessor), each a module URL and an export.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseDataType, type DataType } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Column, toColumn } from '../Column.js';

/**
 * A user function that each worker imports itself: `moduleUrl` is a URL (file:, data:) or a file
 * path (resolved against the current directory), and `exportName` a synchronous function of that
 * module. Arguments arrive as JavaScript values (TIMESTAMP as Date, SQL null as null); the result
 * must be of `returnType` (`'double'`, `'string'`, `'timestamp'`, `'struct<a: int>'`, ...; undefined is
 * null), else UDF_RESULT_TYPE_MISMATCH. What it throws fails the query with UDF_FAILED.
 *
 * @example
 * ```ts
 * const double = udf(new URL('./udfs.mjs', import.meta.url), 'double', 'double');
 * df.select(double('value').alias('twice'));
 * ```
 */
export function udf(moduleUrl: string | URL, exportName: string, returnType: string | DataType): (...cols: Array<Column | string>) => Column {
  if (typeof exportName !== 'string' || exportName === '') {
    throw new SluiceError('INVALID_EXPRESSION', `udf needs the name of an exported function, got ${String(exportName)}`);
  }
  const url = moduleHref(moduleUrl);
  const type = typeof returnType === 'string' ? parseDataType(returnType) : returnType;
  return (...cols) => new Column({ op: 'udf', moduleUrl: url, exportName, returnType: type, args: cols.map((c) => toColumn(c).expr) });
}

/** A stateful processor (a class, or a function for flatMapGroupsWithState) exported by a module every worker imports. */
export interface StatefulProcessorRef {
  /** Tells it apart from other values. */
  readonly kind: 'statefulProcessor';
  /** The module's URL (a path given was made an absolute file: URL). */
  readonly moduleUrl: string;
  /** The export of the module: a class (transformWithState) or a function (the GroupState APIs). */
  readonly exportName: string;
}

/**
 * The processor of `groupBy(...).transformWithState` (a class with init, handleInputRows, and
 * optionally handleExpiredTimer, handleInitialState and close), or the function of
 * flatMapGroupsWithState and mapGroupsWithState: export `exportName` of the module at `moduleUrl`,
 * which every worker imports once, as udf modules are.
 *
 * @example
 * ```ts
 * const counter = statefulProcessor(new URL('./counter.mjs', import.meta.url), 'Counter');
 * df.groupBy('id').transformWithState(counter, { outputSchema: 'id STRING, count LONG', outputMode: 'update' });
 * ```
 */
export function statefulProcessor(moduleUrl: string | URL, exportName: string): StatefulProcessorRef {
  if (typeof exportName !== 'string' || exportName === '') {
    throw new SluiceError('INVALID_EXPRESSION', `statefulProcessor needs the name of an export, got ${String(exportName)}`);
  }
  return Object.freeze({ kind: 'statefulProcessor', moduleUrl: moduleHref(moduleUrl), exportName });
}

/** The module's URL text, the same in every worker: paths become absolute file URLs here. */
function moduleHref(moduleUrl: string | URL): string {
  if (moduleUrl instanceof URL) return moduleUrl.href;
  if (typeof moduleUrl !== 'string' || moduleUrl === '') {
    throw new SluiceError('INVALID_EXPRESSION', `udf needs a module URL or path, got ${String(moduleUrl)}`);
  }
  // Two or more letters before ':' make a URL scheme; one letter is a Windows drive.
  if (/^[a-z][a-z\d+.-]+:/i.test(moduleUrl)) return moduleUrl;
  return pathToFileURL(isAbsolute(moduleUrl) ? moduleUrl : resolve(moduleUrl)).href;
}
