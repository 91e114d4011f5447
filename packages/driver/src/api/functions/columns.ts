/**
 * Columns by name and from SQL text (col, column, expr), and the conditionals (when, not,
 * coalesce).
 */
import { SluiceError } from '@sluice/state';
import { Column, lit, toColumn, type ColumnOrLiteral } from '../Column.js';
import { parseExpression } from '../sql/parseExpression.js';
import { starTarget } from '../starText.js';
import { call } from './args.js';

/** A column by name (Spark's col): `col('v')`, a struct's field `col('s.a')`, `col('*')` in a select. */
export function col(name: string): Column {
  if (typeof name !== 'string' || name === '') {
    throw new SluiceError('INVALID_EXPRESSION', `col() needs a non-empty column name, got ${String(name)}`);
  }
  return new Column({ op: 'col', name });
}

/**
 * A column from Spark SQL expression text (Spark's expr): `expr("upper(name) AS name")`,
 * `expr("CASE WHEN v > 10 THEN 'big' ELSE 'small' END")`. An aggregate call
 * (`expr("count(*)")`) gives an AggregateColumn, which groupBy(...).agg(...) takes. A text that
 * does not parse is PARSE_SYNTAX_ERROR; an unknown function, UNRESOLVED_ROUTINE.
 */
export function expr(sql: string): Column {
  // `'s.*'` selects a struct's fields (or `'*'` every column) once select expands it, as Spark's expr does.
  const star = starTarget(sql);
  if (star !== undefined) return col(star);
  const parsed = parseExpression(sql);
  return parsed.kind === 'aggregate' ? parsed.agg : new Column(parsed.expr);
}

/** Same as col, as in Spark. */
export const column = col;

/** Starts a conditional column: when(c1, v1).when(c2, v2).otherwise(v3). */
export function when(condition: Column | boolean, value: ColumnOrLiteral): Column {
  return new Column({ op: 'when', branches: [{ cond: lit(condition).expr, value: lit(value).expr }] });
}

/** Logical NOT of a boolean column, as Column.not. */
export function not(c: Column | string): Column {
  return toColumn(c).not();
}
/** The first non-null argument. */
export function coalesce(...cols: Array<Column | string>): Column {
  if (cols.length === 0) throw new SluiceError('INVALID_EXPRESSION', 'coalesce needs at least one column');
  return call(
    'coalesce',
    cols.map((c) => toColumn(c).expr),
  );
}
