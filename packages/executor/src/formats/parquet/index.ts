/**
 * Parquet files, through hyparquet (reading) and hyparquet-writer (writing): Sluice encodes and
 * decodes no Parquet itself. The folder maps Parquet's types to Sluice's and back
 * (fileSchema.ts, writer.ts), reads a file's footer (footer.ts; fileInfo.ts, what the driver plans with) and its wanted columns into column
 * vectors (reader.ts, columnChunks.ts), skips row groups that a pushed-down comparison (predicates.ts) rules out by
 * their statistics (statistics.ts), and writes rows as one file (writer.ts).
 */
export { parquetFileSchema, parquetRowGroupBytes } from './fileInfo.js';
export { parquetPredicates, type ParquetPredicate } from './predicates.js';
export { readParquetFile, readParquetRows, type ParquetRead } from './reader.js';
export { checkParquetWritable, PARQUET_COMPRESSIONS, prepareParquetWrite, writeParquet, type ParquetCompression } from './writer.js';
