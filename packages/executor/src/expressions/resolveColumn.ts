/**
 * Column resolution shared by typing, naming and compilation: a column name is looked up in a
 * schema the way Spark does it, so every stage agrees on which field a name means.
 */
import { didYouMean, quoteId, SluiceError, suggest } from '@sluice/state';
import type { Field, Schema } from '../schema/types.js';
import { isStructType, typeName } from '../schema/values.js';
import type { Expr } from './types.js';

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
  // A path that reached a struct suggests that struct's fields (window.strat: window.start, window.end).
  const inner = path.length > 0 && fields !== undefined ? fields.map((f) => [...path, f.name].join('.')) : [];
  throw unresolvedColumn(name, schema, inner.length > 0 ? inner : schema.map((f) => f.name));
}

/**
 * UNRESOLVED_COLUMN for `name`, with Spark's "did you mean" over `candidates` (default: the
 * schema's columns) and the schema's columns listed.
 */
export function unresolvedColumn(name: string, schema: Schema, candidates: readonly string[] = schema.map((f) => f.name)): SluiceError {
  const suggestions = suggest(name, candidates);
  return new SluiceError(
    'UNRESOLVED_COLUMN',
    `[UNRESOLVED_COLUMN.${suggestions.length > 0 ? 'WITH_SUGGESTION' : 'WITHOUT_SUGGESTION'}] A column, variable, or function parameter with name ${quoteId(name)} cannot be resolved.` +
      `${didYouMean(suggestions)} Available columns: ${schema.map((f) => f.name).join(', ') || '(none)'}.`,
    { column: name, suggestions },
  );
}

/**
 * Spark's `struct.*` in a select: one column per field of the struct column `target` (a dotted
 * path reaches a nested struct), each named by its field, in the struct's order.
 */
export function expandStar(target: string, schema: Schema): Expr[] {
  let resolved: ResolvedColumn;
  try {
    resolved = resolveColumn(target, schema);
  } catch (e) {
    if (!(e instanceof SluiceError)) throw e;
    // Only a struct can be expanded, so only structs are suggested.
    const suggestions = suggest(
      target,
      schema.filter((f) => isStructType(f.type)).map((f) => f.name),
    );
    throw new SluiceError(
      'UNRESOLVED_COLUMN',
      `[CANNOT_RESOLVE_STAR_EXPAND] Cannot resolve ${quoteId(target)}.* given input columns ${schema.map((f) => quoteId(f.name)).join(', ') || '(none)'}. ` +
        `Please check that the specified table or struct exists and is accessible in the input columns.${didYouMean(suggestions)}`,
      { column: `${target}.*`, suggestions },
    );
  }
  const { path, field } = resolved;
  if (!isStructType(field.type)) {
    throw new SluiceError('DATATYPE_MISMATCH', `Can only star expand struct data types: column ${quoteId(path.join('.'))} is ${typeName(field.type)}`, {
      column: `${target}.*`,
    });
  }
  return field.type.struct.map((f): Expr => ({ op: 'alias', expr: { op: 'col', name: [...path, f.name].join('.') }, name: f.name }));
}
