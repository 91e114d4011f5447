/**
 * What the driver reads of a Parquet file before planning: its schema and its row groups' sizes,
 * from its footer. Free of hyparquet's types, so that the package's public declarations never name them.
 */
import { SluiceError } from '@sluice/state';
import type { Schema } from '../../schema/types.js';
import { fileColumns } from './fileSchema.js';
import { footerOf, withFile } from './footer.js';

/**
 * The schema of a Parquet file, from its footer (every column nullable, as Spark reads files). A
 * column of a type Sluice lacks is PARQUET_UNSUPPORTED_TYPE naming it.
 */
export function parquetFileSchema(path: string): Schema {
  const columns = withFile(path, (file) => fileColumns(footerOf(file, path)));
  return columns.map((c) => {
    if (!('type' in c.mapped)) {
      throw new SluiceError('PARQUET_UNSUPPORTED_TYPE', `${path}: column '${c.name}' is Parquet ${c.mapped.unsupported}, which Sluice has no type for`, {
        file: path,
        column: c.name,
      });
    }
    return { name: c.name, type: c.mapped.type, nullable: true };
  });
}

/** The compressed bytes of each row group of a Parquet file, from its footer (the driver splits large files by them). */
export function parquetRowGroupBytes(path: string): number[] {
  return withFile(path, (file) => footerOf(file, path).row_groups.map((g) => Number(g.total_compressed_size ?? g.total_byte_size)));
}
