/** `session.readStream`: format, options and schema, then `load()` gives a streaming DataFrame. */
import { resolveSource } from '../sources/resolveSource.js';
import { DataFrame } from './DataFrame.js';
import { Reader } from './Reader.js';

export class DataStreamReader extends Reader<DataStreamReader> {
  load(path?: string): DataFrame {
    const spec = resolveSource(this.requireFormat(), this.opts.copy(), this.userSchema, path, (name, schema) =>
      this.session.memoryStream(name, schema),
    );
    return new DataFrame(this.session, { source: spec, ops: [], post: [] }, true);
  }
}
