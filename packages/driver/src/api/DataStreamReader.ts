/** `session.readStream`: format, options and schema, then `load()` gives a streaming DataFrame. */
import { resolveSource, type SourceFormat } from '../sources/resolveSource.js';
import { DataFrame } from './DataFrame.js';
import { Reader } from './Reader.js';

/**
 * `session.readStream` (Spark's DataStreamReader): a format, its options and a schema, then
 * `load()` gives a streaming DataFrame. Options and schema are checked at `load()`, so a bad one
 * fails there, before any query starts.
 *
 * @example
 * ```ts
 * const events = session.readStream
 *   .format('json')
 *   .schema('event_time TIMESTAMP, id STRING, value DOUBLE')
 *   .option('maxFilesPerTrigger', 10)
 *   .load('data/in');
 * ```
 */
export class DataStreamReader extends Reader<DataStreamReader, SourceFormat> {
  /**
   * A streaming DataFrame of the source: a file source reads the directory `path`; `memory` reads
   * the memory stream named `path`; `rate`, `rate-micro-batch`, `nexmark` and `redis` take no path.
   */
  load(path?: string): DataFrame {
    const spec = resolveSource(this.requireFormat(), this.opts.copy(), this.userSchema, path, (name, schema) => this.session.memoryStream(name, schema));
    return new DataFrame(this.session, { source: spec, ops: [] }, true);
  }
}
