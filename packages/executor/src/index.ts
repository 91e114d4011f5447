export * from './types.js';
export * from './messages.js';
export { encodeRows, decodeRows } from './rowCodec.js';
export { planOutputSchema, exprName, exprType } from './expr.js';
export { rowToExternal, rowToInternal, toExternal, toInternal } from './values.js';
export { parseSchema, parseDataType, schemaToDDL } from './schema.js';
export { readFileRecords, formatRecords, inferJsonSchema, inferJsonSchemaFromFiles, withCorruptRecordColumn, validateReadSchema } from './formats.js';
export { readInput } from './readInput.js';
