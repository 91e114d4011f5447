/** `session.read`: a static DataFrame over files, or over a Sluice file sink's committed output. */
import { resolve } from 'node:path';
import type { ReadOptions } from '@sluice/executor';
import { checkInputDir } from '../checkpoint/directories.js';
import { checkFormat, fileReadSpec, fileSourceSpec } from '../sources/resolveSource.js';
import { DataFrame } from './DataFrame.js';
import { Reader } from './Reader.js';
import { tableSchema } from '../sinks/tables.js';

export const STATIC_FORMATS = ['json', 'csv', 'text'] as const;

export class DataFrameReader extends Reader<DataFrameReader> {
  /** A table written by writeStream.toTable(name), with the schema it was written with. */
  table(name: string): DataFrame {
    const { dir, schema } = tableSchema(this.session.conf, name);
    return new DataFrameReader(this.session).format('json').schema(schema).load(dir);
  }

  /** Reads a directory of files, or a Sluice file sink's output through its manifest. */
  load(path: string): DataFrame {
    const format = this.requireFormat();
    checkFormat(format, STATIC_FORMATS, 'static source');
    const f = format as (typeof STATIC_FORMATS)[number];
    const o = this.opts.copy();
    const dir = resolve(path);
    checkInputDir(dir);
    const infer = f === 'json' ? (read: ReadOptions) => this.session.inferJsonSchema(dir, read) : undefined;
    const { read, schema } = fileReadSpec(f, o, this.userSchema, false, infer);
    o.rejectUnknown(`${f} static source`);
    const spec = fileSourceSpec({
      format: f,
      path: dir,
      schema,
      read,
      cleanSource: 'off',
      admission: { latestFirst: false, maxFileAgeMs: Number.POSITIVE_INFINITY },
    });
    return new DataFrame(this.session, { source: spec, ops: [], post: [] }, false);
  }
}
