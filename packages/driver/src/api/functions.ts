/**
 * Spark's `functions` for stateless expressions. As in Spark (and PySpark), a string passed where
 * a column is expected names a column: upper('id') is upper(col('id')). Values given to lit, when
 * and otherwise are literals. The functions live in api/functions/, one file per kind; this module
 * gathers them.
 */
import { lit, toColumn } from './Column.js';

export { lit, toColumn };
export * from './functions/columns.js';
export * from './functions/math.js';
export * from './functions/strings.js';
export * from './functions/collections.js';
export * from './functions/datetime.js';
export * from './functions/json.js';
export * from './functions/udfs.js';
export * from './functions/aliases.js';
