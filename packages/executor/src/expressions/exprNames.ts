/**
 * Names of expressions as Spark prints them: exprSql for messages, exprName for the output
 * column a projection produces.
 */
import type { BinaryOp, Expr } from './types.js';
import type { DataType, Schema } from '../schema/types.js';
import { resolveColumn } from './resolveColumn.js';
import { formatDouble, formatTimestamp, toInternal, typeName } from '../schema/values.js';
import { formatDate } from '../schema/timestamps.js';

const BINARY_SYMBOL: Record<BinaryOp, string> = {
  plus: '+',
  minus: '-',
  multiply: '*',
  divide: '/',
  mod: '%',
  gt: '>',
  geq: '>=',
  lt: '<',
  leq: '<=',
  equalTo: '=',
  notEqual: '!=',
  and: 'AND',
  or: 'OR',
  bitwiseAnd: '&',
  bitwiseOr: '|',
  bitwiseXor: '^',
};

/** Spark's printed form of an expression: (v > 10), upper(id), CAST(v AS DOUBLE), CASE WHEN … END. */
export function exprSql(expr: Expr): string {
  switch (expr.op) {
    case 'col':
      return expr.name;
    case 'lit':
      return literalSql(expr.value, expr.type);
    case 'alias':
      return `${exprSql(expr.expr)} AS ${expr.name}`;
    case 'binary': {
      const l = exprSql(expr.left);
      const r = exprSql(expr.right);
      return expr.fn === 'notEqual' ? `(NOT (${l} = ${r}))` : `(${l} ${BINARY_SYMBOL[expr.fn]} ${r})`;
    }
    case 'unary': {
      const x = exprSql(expr.expr);
      if (expr.fn === 'not') return `(NOT ${x})`;
      if (expr.fn === 'isNull') return `(${x} IS NULL)`;
      if (expr.fn === 'isNotNull') return `(${x} IS NOT NULL)`;
      if (expr.fn === 'bitwiseNot') return `~${x}`;
      return `(- ${x})`;
    }
    case 'cast':
      return `CAST(${exprSql(expr.expr)} AS ${typeName(expr.to)})`;
    case 'when': {
      const branches = expr.branches.map((b) => ` WHEN ${exprSql(b.cond)} THEN ${exprSql(b.value)}`).join('');
      const otherwise = expr.otherwise === undefined ? '' : ` ELSE ${exprSql(expr.otherwise)}`;
      return `CASE${branches}${otherwise} END`;
    }
    case 'call':
      return `${expr.fn}(${expr.args.map(exprSql).join(', ')})`;
    case 'udf':
      return `${expr.exportName}(${expr.args.map(exprSql).join(', ')})`;
    case 'lambda':
      return `${expr.params.length === 1 ? expr.params[0] : `(${expr.params.join(', ')})`} -> ${exprSql(expr.body)}`;
    case 'window': {
      // Durations print as interval strings, which window() accepts back.
      const ms = (n: number): string => `${n} milliseconds`;
      const slide = expr.slideMs === expr.sizeMs && expr.startMs === 0 ? '' : `, ${ms(expr.slideMs)}`;
      const start = expr.startMs === 0 ? '' : `, ${ms(expr.startMs)}`;
      return `window(${exprSql(expr.expr)}, ${ms(expr.sizeMs)}${slide}${start})`;
    }
  }
}

function literalSql(value: unknown, type: DataType): string {
  if (value === null) return 'NULL';
  if (type === 'double' && typeof value === 'number') return formatDouble(value);
  if (type === 'timestamp') {
    const ms = toInternal(value, 'timestamp');
    return `TIMESTAMP '${ms === null ? String(value) : formatTimestamp(ms as number)}'`;
  }
  if (type === 'date' && typeof value === 'number') return `DATE '${formatDate(value)}'`;
  if (type === 'interval') return `INTERVAL '${String(value)}'`;
  return String(value);
}

/**
 * The output column name of an expression: its alias, else its column name, else its printed
 * form. As in Spark, a cast of a column keeps the column's name; with a schema, a column is named
 * as the schema spells it ('ID' resolved to 'id') and a nested one by its last part
 * ('window.start' is 'start'); a window expression is `window`, a session window `session_window`.
 */
export function exprName(expr: Expr, schema?: Schema): string {
  if (expr.op === 'alias') return expr.name;
  // Spark names a window column `window`, whatever its time column and durations.
  if (expr.op === 'window') return 'window';
  if (expr.op === 'call' && expr.fn === 'session_window') return 'session_window';
  if (expr.op === 'col') {
    if (schema === undefined) return expr.name;
    const path = resolveColumn(expr.name, schema).path;
    return path[path.length - 1]!;
  }
  if (expr.op === 'cast' && (expr.expr.op === 'col' || expr.expr.op === 'alias')) return exprName(expr.expr, schema);
  return exprSql(expr);
}
