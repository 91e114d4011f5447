/** `session.readStream` and `session.read`: format, options and schema, then `load()`. */
import type { ReadOptions, Schema } from '@sluice/executor';
import { DataFrame } from './DataFrame.js';
import { Options, type OptionValue } from './options.js';
import type { Session } from './Session.js';
import { checkFormat, fileReadSpec, parseUserSchema, resolveSource, type SourceSpec } from './sources/resolveSource.js';
import { resolve } from 'node:path';
import { SluiceError } from '@sluice/state';

abstract class Reader<Self> {
  protected fmt: string | undefined;
  protected readonly opts = new Options();
  protected userSchema: Schema | undefined;

  constructor(protected readonly session: Session) {}

  format(source: string): Self {
    this.fmt = source;
    return this as unknown as Self;
  }

  option(key: string, value: OptionValue): Self {
    this.opts.set(key, value);
    return this as unknown as Self;
  }

  options(values: Record<string, OptionValue>): Self {
    for (const [k, v] of Object.entries(values)) this.opts.set(k, v);
    return this as unknown as Self;
  }

  /** A DDL string (`'id STRING, v DOUBLE'`) or an object (`{ id: 'string', v: 'double' }`). */
  schema(schema: string | Record<string, unknown> | Schema): Self {
    this.userSchema = parseUserSchema(schema);
    return this as unknown as Self;
  }

  protected requireFormat(): string {
    if (this.fmt === undefined) {
      throw new SluiceError('UNKNOWN_FORMAT', 'no format given: call .format(...) before load()', { option: 'format' });
    }
    return this.fmt;
  }
}

export class DataStreamReader extends Reader<DataStreamReader> {
  load(path?: string): DataFrame {
    const spec = resolveSource(this.requireFormat(), this.opts.copy(), this.userSchema, path, (name, schema) =>
      this.session.memoryStream(name, schema),
    );
    return new DataFrame(this.session, { source: spec, ops: [], post: [] }, true);
  }
}

export const STATIC_FORMATS = ['json', 'csv', 'text'] as const;

export class DataFrameReader extends Reader<DataFrameReader> {
  /** Reads a directory of files, or a Sluice file sink's output through its manifest. */
  load(path: string): DataFrame {
    const format = this.requireFormat();
    checkFormat(format, STATIC_FORMATS, 'static source');
    const f = format as (typeof STATIC_FORMATS)[number];
    const o = this.opts.copy();
    const dir = resolve(path);
    const infer = f === 'json' ? (read: ReadOptions) => this.session.inferJsonSchema(dir, read) : undefined;
    const { read, schema } = fileReadSpec(f, o, this.userSchema, false, infer);
    o.rejectUnknown(`${f} static source`);
    const spec: SourceSpec = {
      format: f,
      schema,
      file: {
        format: f,
        path: dir,
        schema,
        read,
        cleanSource: 'off',
        admission: { latestFirst: false, maxFileAgeMs: Number.POSITIVE_INFINITY },
      },
    };
    return new DataFrame(this.session, { source: spec, ops: [], post: [] }, false);
  }
}
