/** What `session.readStream` and `session.read` share: format, options and schema. */
import type { Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Options, type OptionValue } from '../conf/Options.js';
import { parseUserSchema } from '../sources/resolveSource.js';
import type { Session } from './Session.js';
import type { DataFrame } from './DataFrame.js';

export abstract class Reader<Self> {
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

  abstract load(path?: string): DataFrame;

  /** Spark's shorthands: format(f).load(path). */
  json(path: string): DataFrame {
    this.fmt = 'json';
    return this.load(path);
  }

  csv(path: string): DataFrame {
    this.fmt = 'csv';
    return this.load(path);
  }

  text(path: string): DataFrame {
    this.fmt = 'text';
    return this.load(path);
  }

  parquet(path: string): DataFrame {
    this.fmt = 'parquet';
    return this.load(path);
  }

  protected requireFormat(): string {
    if (this.fmt === undefined) {
      throw new SluiceError('UNKNOWN_FORMAT', 'no format given: call .format(...) before load()', { option: 'format' });
    }
    return this.fmt;
  }
}
