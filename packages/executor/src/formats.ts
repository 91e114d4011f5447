/**
 * Line-oriented file formats: JSON lines, CSV (one record per line, RFC 4180 quoting inside the
 * line) and text, read into engine rows and written back from them. The code lives in formats/;
 * this module keeps the public names importable from one place.
 */
export {
  kDefaultReadOptions,
  kDefaultWriteOptions,
  type ReadFormat,
  validateReadSchema,
  withCorruptRecordColumn,
  type WriteFormat,
} from './formats/options.js';
export { parseRecords, readFileRecords } from './formats/readers.js';
export { splitCsvLine } from './formats/csvReader.js';
export { formatRecords } from './formats/writers.js';
export { parseIsoTimestamp } from './formats/timestamps.js';
export { inferJsonSchema, inferJsonSchemaFromFiles } from './formats/inferJsonSchema.js';
