/**
 * Column resolution shared by typing, naming and compilation: a column name is looked up in a
 * schema the way Spark does it, so every stage agrees on which field a name means.
 */
import { SluiceError } from '@sluice/state';
import type { Field, Schema } from '../schema/types.js';
import { isStructType } from '../schema/values.js';

export interface ResolvedColumn {
  /** Field names from the row down to the value: one name, or several for 'window.start'. */
  path: string[];
  field: Field;
}

/**
 * A field by exact name, else by a unique case-insensitive match (Spark's default
 * spark.sql.caseSensitive=false; parsed schemas never hold two names that differ only in case).
 */
function findField(fields: Schema, name: string): Field | undefined {
  const exact = fields.find((f) => f.name === name);
  if (exact !== undefined) return exact;
  const lower = name.toLowerCase();
  const matches = fields.filter((f) => f.name.toLowerCase() === lower);
  return matches.length === 1 ? matches[0] : undefined;
}

/** A top-level field, else a dotted path into structs ('window.start'), as in Spark. */
export function resolveColumn(name: string, schema: Schema): ResolvedColumn {
  const top = findField(schema, name);
  if (top !== undefined) return { path: [top.name], field: top };
  const parts = name.split('.');
  const path: string[] = [];
  let fields: Schema | undefined = schema;
  let field: Field | undefined;
  let nullable = false;
  for (const part of parts) {
    field = fields === undefined ? undefined : findField(fields, part);
    if (field === undefined) break;
    path.push(field.name);
    nullable ||= field.nullable;
    fields = isStructType(field.type) ? field.type.struct : undefined;
  }
  if (parts.length > 1 && field !== undefined) return { path, field: { ...field, nullable } };
  throw new SluiceError(
    'UNRESOLVED_COLUMN',
    `cannot resolve column '${name}'; available columns: ${schema.map((f) => f.name).join(', ') || '(none)'}`,
    { column: name },
  );
}
