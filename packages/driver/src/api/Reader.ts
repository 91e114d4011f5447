/** What `session.readStream` and `session.read` share: format, options and schema. */
import type { Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { Options, type OptionValue } from '../conf/Options.js';
import { parseUserSchema } from '../sources/resolveSource.js';
import type { Session } from './Session.js';
import type { DataFrame } from './DataFrame.js';

export abstract class Reader<Self, Format extends string = string> {
  protected fmt: string | undefined;
  protected readonly opts = new Options();
  protected userSchema: Schema | undefined;

  /** @internal */
  constructor(protected readonly session: Session) {}

  /**
   * The format to read (Spark's format); see the format type for those that exist. An unknown
   * name type-checks but is UNKNOWN_FORMAT at `load()`.
   */
  format(source: Format | (string & {})): Self {
    this.fmt = source;
    return this as unknown as Self;
  }

  /**
   * An option of the format (`maxFilesPerTrigger`, `header`, `rowsPerSecond`...). Keys are
   * case-insensitive, as in Spark; an option the format does not know is UNKNOWN_OPTION at `load()`.
   */
  option(key: string, value: OptionValue): Self {
    this.opts.set(key, value);
    return this as unknown as Self;
  }

  /** Several options at once, as `option` sets one. */
  options(values: Record<string, OptionValue>): Self {
    for (const [k, v] of Object.entries(values)) this.opts.set(k, v);
    return this as unknown as Self;
  }

  /** The schema of the data: a DDL string (`'id STRING, v DOUBLE'`), an object (`{ id: 'string', v: 'double' }`) or a {@link Schema}. */
  schema(schema: string | Record<string, unknown> | Schema): Self {
    this.userSchema = parseUserSchema(schema);
    return this as unknown as Self;
  }

  /** A DataFrame of the data, its options and schema checked here. */
  abstract load(path?: string): DataFrame;

  /** Spark's shorthand of `format('json').load(path)`. */
  json(path: string): DataFrame {
    this.fmt = 'json';
    return this.load(path);
  }

  /** Spark's shorthand of `format('csv').load(path)`. */
  csv(path: string): DataFrame {
    this.fmt = 'csv';
    return this.load(path);
  }

  /** Spark's shorthand of `format('text').load(path)`. */
  text(path: string): DataFrame {
    this.fmt = 'text';
    return this.load(path);
  }

  /** Spark's shorthand of `format('parquet').load(path)`. */
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
