/**
 * Format names, default options and the eager option/schema checks shared by the readers, the
 * writers and the driver.
 */
import { SluiceError } from '@sluice/state';
import type { ReadOptions, WriteOptions } from '../task/messages.js';
import { dataTypeToDDL, schemaToDDL } from '../schema/schema.js';
import type { Schema } from '../schema/types.js';

export type ReadFormat = 'json' | 'csv' | 'text';
export type WriteFormat = 'json' | 'csv';

export const kDefaultReadOptions: ReadOptions = {
  mode: 'PERMISSIVE',
  columnNameOfCorruptRecord: '_corrupt_record',
  header: false,
  sep: ',',
};
export const kDefaultWriteOptions: WriteOptions = { header: false, sep: ',' };

/**
 * Spark fills the corrupt-record column only when the user schema declares it. The driver calls
 * this when the user set `columnNameOfCorruptRecord` explicitly, to declare it for them.
 */
export function withCorruptRecordColumn(schema: Schema, options: Pick<ReadOptions, 'columnNameOfCorruptRecord'>): Schema {
  const name = options.columnNameOfCorruptRecord || kDefaultReadOptions.columnNameOfCorruptRecord;
  if (schema.some((f) => f.name === name)) return schema;
  return [...schema, { name, type: 'string', nullable: true }];
}

/** Eager checks the driver can run before a query starts; the readers run them too. */
export function validateReadSchema(format: ReadFormat, schema: Schema, options: ReadOptions): void {
  if (format === 'csv' && (typeof options.sep !== 'string' || options.sep === '')) {
    throw new SluiceError('INVALID_OPTION', 'options.sep must be a non-empty string', { option: 'sep' });
  }
  if (format === 'text') {
    if (schema.length > 1 || (schema[0] !== undefined && schema[0].type !== 'string')) {
      throw new SluiceError('INVALID_SCHEMA', `options.schema: the text format has exactly one STRING column (value STRING), got '${schemaToDDL(schema)}'`, {
        option: 'schema',
      });
    }
    return;
  }
  const corrupt = schema.find((f) => f.name === corruptName(options));
  if (corrupt !== undefined && corrupt.type !== 'string') {
    throw new SluiceError('INVALID_SCHEMA', `options.columnNameOfCorruptRecord: column '${corrupt.name}' must be STRING, got ${dataTypeToDDL(corrupt.type)}`, {
      option: 'columnNameOfCorruptRecord',
      column: corrupt.name,
    });
  }
}

export function corruptName(options: { columnNameOfCorruptRecord?: string | undefined }): string {
  return options.columnNameOfCorruptRecord || kDefaultReadOptions.columnNameOfCorruptRecord;
}
