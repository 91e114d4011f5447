/**
 * The user-facing column builder, mirroring Spark's Column. A Column only wraps a serializable
 * Expr: closures cannot cross into worker threads, so every operation builds plan data that the
 * executor compiles (packages/executor/src/expr.ts). Types are checked when a DataFrame operator
 * receives the column, against that DataFrame's schema.
 */
import { exprName, parseDataType, type BinaryOp, type DataType, type Expr, type UnaryOp } from '@sluice/executor';
import { SluiceError } from '@sluice/state';

/** A JavaScript value that stands for a literal, as Spark's methods taking `Any` accept. */
export type Literal = string | number | boolean | Date | bigint | null;
/** A Column, or a JavaScript value used as a literal (a string here is text, not a column name). */
export type ColumnOrLiteral = Column | Literal;

/**
 * An expression over a DataFrame's columns (Spark's Column), made by `col`, `lit`, `expr` and
 * the functions, and combined by its methods, named as Spark's. A Column is plain data (it crosses
 * into the worker threads): JavaScript closures have no place in it; user code runs through `udf`.
 * Its types are checked when a DataFrame operator takes it. Operands that are not Columns are
 * literals (`col('v').gt(10)`; a string there is text, not a column name).
 *
 * @example
 * ```ts
 * df.filter(col('v').gt(10).and(col('id').isNotNull()))
 *   .select(col('id'), col('v').multiply(2).alias('twice'), when(col('v').gt(100), 'big').otherwise('small').alias('size'));
 * ```
 */
export class Column {
  /** @internal The expression tree. */
  readonly expr: Expr;

  /** @internal */
  constructor(expr: Expr) {
    this.expr = expr;
  }

  /** this + other (SQL `+`); null if either is null. */
  plus(other: ColumnOrLiteral): Column {
    return this.binary('plus', other);
  }
  /** this - other (SQL `-`). */
  minus(other: ColumnOrLiteral): Column {
    return this.binary('minus', other);
  }
  /** this * other (SQL `*`). */
  multiply(other: ColumnOrLiteral): Column {
    return this.binary('multiply', other);
  }
  /** this / other (SQL `/`): always DOUBLE, as in Spark; division by zero gives null. */
  divide(other: ColumnOrLiteral): Column {
    return this.binary('divide', other);
  }
  /** this % other (SQL `%`): the remainder takes the sign of the dividend; modulo zero gives null. */
  mod(other: ColumnOrLiteral): Column {
    return this.binary('mod', other);
  }
  /** this > other (SQL `>`); null if either is null. */
  gt(other: ColumnOrLiteral): Column {
    return this.binary('gt', other);
  }
  /** this >= other (SQL `>=`). */
  geq(other: ColumnOrLiteral): Column {
    return this.binary('geq', other);
  }
  /** this < other (SQL `<`). */
  lt(other: ColumnOrLiteral): Column {
    return this.binary('lt', other);
  }
  /** this <= other (SQL `<=`). */
  leq(other: ColumnOrLiteral): Column {
    return this.binary('leq', other);
  }
  /** this = other (SQL `=`; Scala's `===`); null if either is null (see eqNullSafe). */
  equalTo(other: ColumnOrLiteral): Column {
    return this.binary('equalTo', other);
  }
  /** this <> other (SQL `<>`; Scala's `=!=`). */
  notEqual(other: ColumnOrLiteral): Column {
    return this.binary('notEqual', other);
  }
  /** Logical AND, three-valued: false and null is false, true and null is null. */
  and(other: ColumnOrLiteral): Column {
    return this.binary('and', other);
  }
  /** Logical OR, three-valued: true or null is true, false or null is null. */
  or(other: ColumnOrLiteral): Column {
    return this.binary('or', other);
  }
  /** Logical NOT; null stays null. */
  not(): Column {
    return this.unary('not');
  }
  /** Spark's unary minus (`-col` in Scala). */
  negate(): Column {
    return this.unary('negate');
  }
  /** Whether the value is null. */
  isNull(): Column {
    return this.unary('isNull');
  }
  /** Whether the value is not null. */
  isNotNull(): Column {
    return this.unary('isNotNull');
  }

  /** SQL LIKE: `_` one character, `%` any run, `\\` escapes; the whole string must match. */
  like(pattern: string): Column {
    return new Column(patternMatch('like', this.expr, lit(pattern).expr));
  }
  /** LIKE ignoring case. */
  ilike(pattern: string): Column {
    return new Column(patternMatch('ilike', this.expr, lit(pattern).expr));
  }
  /** Whether the regular expression matches somewhere in the string. */
  rlike(pattern: string): Column {
    return new Column(patternMatch('rlike', this.expr, lit(pattern).expr));
  }

  /** The value cast to type `to` (Spark's cast): a type name as in a schema (`'double'`, `'BIGINT'`, `'timestamp'`, `'struct<a: int>'`) or a DataType. */
  cast(to: string | DataType): Column {
    return new Column({ op: 'cast', expr: this.expr, to: typeof to === 'string' ? parseDataType(to) : to });
  }

  /** A name for this column; a generator with several columns (posexplode) takes one name for each. */
  alias(...names: string[]): Column {
    const bad = names.find((n) => typeof n !== 'string' || n === '');
    if (names.length === 0 || bad !== undefined) {
      throw new SluiceError('INVALID_EXPRESSION', `alias needs a non-empty name, got ${String(bad)}`);
    }
    return new Column({ op: 'alias', expr: this.expr, name: names[0]!, ...(names.length > 1 && { names }) });
  }
  /** Same as alias. */
  as(...names: string[]): Column {
    return this.alias(...names);
  }

  /** Bitwise AND of integers (SQL `&`). */
  bitwiseAND(other: ColumnOrLiteral): Column {
    return this.binary('bitwiseAnd', other);
  }
  /** Bitwise OR of integers (SQL `|`). */
  bitwiseOR(other: ColumnOrLiteral): Column {
    return this.binary('bitwiseOr', other);
  }
  /** Bitwise XOR of integers (SQL `^`). */
  bitwiseXOR(other: ColumnOrLiteral): Column {
    return this.binary('bitwiseXor', other);
  }

  /** Whether the value is one of `values` (SQL's IN: null when none matches and a null is among them). */
  isin(...values: Array<ColumnOrLiteral | ColumnOrLiteral[]>): Column {
    const list = (values.length === 1 && Array.isArray(values[0]) ? values[0] : values) as ColumnOrLiteral[];
    if (list.length === 0) throw new SluiceError('INVALID_EXPRESSION', 'isin needs at least one value');
    return list.map((v) => this.equalTo(v)).reduce((a, b) => a.or(b));
  }
  /** lower <= this <= upper. */
  between(lower: ColumnOrLiteral, upper: ColumnOrLiteral): Column {
    return this.geq(lower).and(this.leq(upper));
  }
  /** Null-safe equality (SQL's <=>): true for two nulls, false for one. */
  eqNullSafe(other: ColumnOrLiteral): Column {
    const o = lit(other);
    const isNull = (c: Column): Column => c.isNull();
    return new Column({
      op: 'when',
      branches: [
        { cond: isNull(this).expr, value: isNull(o).expr },
        { cond: isNull(o).expr, value: lit(false).expr },
      ],
      otherwise: this.equalTo(o).expr,
    });
  }
  /** Whether the string starts with `prefix`. */
  startsWith(prefix: ColumnOrLiteral): Column {
    return new Column({ op: 'call', fn: 'startswith', args: [this.expr, lit(prefix).expr] });
  }
  /** Whether the string ends with `suffix`. */
  endsWith(suffix: ColumnOrLiteral): Column {
    return new Column({ op: 'call', fn: 'endswith', args: [this.expr, lit(suffix).expr] });
  }
  /** Whether the string contains `part`. */
  contains(part: ColumnOrLiteral): Column {
    return new Column({ op: 'call', fn: 'contains', args: [this.expr, lit(part).expr] });
  }
  /** substr(pos, len): substring, 1-based. */
  substr(pos: number | Column, len: number | Column): Column {
    return new Column({ op: 'call', fn: 'substring', args: [this.expr, lit(pos).expr, lit(len).expr] });
  }
  /** Whether the value is NaN (false for null). */
  isNaN(): Column {
    return new Column({ op: 'call', fn: 'isnan', args: [this.expr] });
  }

  /** An element of an array (0-based, null out of range) or a map's value for a key, as SQL's x[i]. */
  getItem(key: ColumnOrLiteral): Column {
    return new Column({ op: 'call', fn: 'get', args: [this.expr, lit(key).expr] });
  }

  /** A field of a struct column: col('s').getField('a') is col('s.a'). */
  getField(name: string): Column {
    if (this.expr.op !== 'col') throw new SluiceError('INVALID_EXPRESSION', `getField('${name}') needs a column reference, as col('s').getField('a')`);
    return new Column({ op: 'col', name: `${this.expr.name}.${name}` });
  }

  /** Adds a branch to a column made by `when(...)`; branches are tried in order. */
  when(condition: Column | boolean, value: ColumnOrLiteral): Column {
    const e = this.openWhen('when');
    return new Column({ ...e, branches: [...e.branches, { cond: lit(condition).expr, value: lit(value).expr }] });
  }

  /** The value of a `when(...)` column when no branch holds; without it, that value is null. */
  otherwise(value: ColumnOrLiteral): Column {
    return new Column({ ...this.openWhen('otherwise'), otherwise: lit(value).expr });
  }

  /** The name Spark would give this column in a select: `(v > 10)`, `upper(id)`, an alias. */
  toString(): string {
    return exprName(this.expr);
  }

  private binary(fn: BinaryOp, other: ColumnOrLiteral): Column {
    return new Column({ op: 'binary', fn, left: this.expr, right: lit(other).expr });
  }

  private unary(fn: UnaryOp): Column {
    return new Column({ op: 'unary', fn, expr: this.expr });
  }

  private openWhen(method: string): Extract<Expr, { op: 'when' }> {
    const e = this.expr;
    if (e.op !== 'when' || e.otherwise !== undefined) {
      throw new SluiceError('INVALID_EXPRESSION', `${method}() applies only to a column made by when() and not yet ended by otherwise(): ${exprName(e)}`);
    }
    return e;
  }
}

/** x LIKE p, x ILIKE p (LIKE of both in lower case, as Spark defines it) and x RLIKE p. */
export function patternMatch(how: 'like' | 'ilike' | 'rlike', x: Expr, pattern: Expr): Expr {
  if (how === 'rlike') return { op: 'call', fn: 'rlike', args: [x, pattern] };
  const lower = (e: Expr): Expr => ({ op: 'call', fn: 'lower', args: [e] });
  return { op: 'call', fn: 'like', args: how === 'ilike' ? [lower(x), lower(pattern)] : [x, pattern] };
}

/**
 * A literal column (Spark's lit). Integral numbers become LONG, other numbers DOUBLE, strings
 * STRING, booleans BOOLEAN, Dates TIMESTAMP, null (or undefined) NULL; a Column is returned as it is.
 */
export function lit(value: ColumnOrLiteral | undefined): Column {
  if (value instanceof Column) return value;
  return new Column(literalExpr(value));
}

function literalExpr(value: Literal | undefined): Expr {
  if (value === null || value === undefined) return { op: 'lit', value: null, type: 'null' };
  switch (typeof value) {
    case 'string':
      return { op: 'lit', value, type: 'string' };
    case 'boolean':
      return { op: 'lit', value, type: 'boolean' };
    case 'number':
      return { op: 'lit', value, type: Number.isSafeInteger(value) ? 'long' : 'double' };
    case 'bigint':
      if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
        return { op: 'lit', value: Number(value), type: 'long' };
      }
      throw new SluiceError('INVALID_EXPRESSION', `literal ${value}n is beyond the exact range of a LONG in Sluice (2^53)`);
  }
  if (value instanceof Date) {
    const ms = value.getTime();
    if (Number.isNaN(ms)) throw new SluiceError('INVALID_EXPRESSION', 'literal Date is invalid');
    return { op: 'lit', value: ms, type: 'timestamp' };
  }
  throw new SluiceError('INVALID_EXPRESSION', `unsupported literal ${Object.prototype.toString.call(value)}; use a string, number, boolean, Date or null`);
}

/** A column argument of a function or DataFrame operator: a string names a column, as in Spark. */
export function toColumn(c: Column | string): Column {
  if (c instanceof Column) return c;
  if (typeof c === 'string') return new Column({ op: 'col', name: c });
  throw new SluiceError('INVALID_EXPRESSION', `expected a Column or a column name, got ${c === null ? 'null' : typeof c}`);
}
