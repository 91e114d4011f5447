/**
 * Spark SQL expressions from text (`expr`, `selectExpr`, `filter("...")`), parsed into the same
 * expression tree the Column methods build. The grammar and its precedence are those of Spark's
 * SqlBaseParser.g4, lowest first:
 *
 *   OR · AND · NOT (or !) · a predicate after a value: [NOT] BETWEEN, [NOT] IN (...), IS [NOT] NULL,
 *   IS [NOT] TRUE / FALSE / UNKNOWN, IS [NOT] DISTINCT FROM · comparisons (= == <=> <> != < <= > >=)
 *   · + - || · * / % DIV · unary - + · postfix :: type and .field · primaries: literals, names,
 *   function calls, CASE, CAST(x AS type), ( ... ).
 *
 * Forms Spark rewrites in its parser are rewritten the same way: BETWEEN into two comparisons,
 * IN into equalities joined by OR (the same three-valued result), <=> and IS DISTINCT FROM into
 * CASE over IS NULL. Function names resolve case-insensitively in the registry (sqlFunctions.ts);
 * an unknown one is UNRESOLVED_ROUTINE. An aggregate call gives an AggregateColumn, for agg().
 *
 * The operators are the Parser's here; the primaries are sqlPrimaries.ts's, the steps over tokens
 * sqlTokens.ts's.
 */
import { exprName, GENERATORS, syntaxError, type Expr, type GeneratorName } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { AggregateColumn } from '../aggregates.js';
import { Column, patternMatch } from '../Column.js';
import { binary, lit, PrimaryParser } from './sqlPrimaries.js';

/**
 * What a piece of SQL text denotes: a column expression, or an aggregate (only agg() takes one).
 * `name` is the column name Spark gives a form rewritten here (`(v div 3)`, `(x IN (1, 2))`,
 * `ucase(id)`), for a whole expression without an alias.
 */
export type Parsed = { kind: 'column'; expr: Expr; name?: string } | { kind: 'aggregate'; agg: AggregateColumn };

const COMPARISONS: Record<string, Extract<Expr, { op: 'binary' }>['fn'] | 'nullSafeEqual'> = {
  '=': 'equalTo',
  '==': 'equalTo',
  '<>': 'notEqual',
  '!=': 'notEqual',
  '<': 'lt',
  '<=': 'leq',
  '>': 'gt',
  '>=': 'geq',
  '<=>': 'nullSafeEqual',
};

/** Words that end an expression or belong to a surrounding form, never an implicit alias. */
const RESERVED_AFTER = new Set([
  'and',
  'or',
  'not',
  'is',
  'in',
  'between',
  'like',
  'rlike',
  'ilike',
  'regexp',
  'as',
  'when',
  'then',
  'else',
  'end',
  'from',
  'div',
  'distinct',
  'where',
  'group',
  'having',
  'union',
  'join',
  'inner',
  'left',
  'right',
  'full',
  'cross',
  'semi',
  'anti',
  'on',
  'using',
  'order',
  'limit',
]);

const not = (expr: Expr): Expr => ({ op: 'unary', fn: 'not', expr });
const isNull = (expr: Expr): Expr => ({ op: 'unary', fn: 'isNull', expr });

/** Spark's `a <=> b`: true when both are null, false when one is, else a = b. */
function nullSafeEqual(a: Expr, b: Expr): Expr {
  return {
    op: 'when',
    branches: [
      { cond: isNull(a), value: isNull(b) },
      { cond: isNull(b), value: lit(false, 'boolean') },
    ],
    otherwise: binary('equalTo', a, b),
  };
}

const BITWISE_LEVELS: Array<[string, 'bitwiseOr' | 'bitwiseXor' | 'bitwiseAnd']> = [
  ['|', 'bitwiseOr'],
  ['^', 'bitwiseXor'],
  ['&', 'bitwiseAnd'],
];

export class Parser extends PrimaryParser {
  /** An expression with an optional alias (`x AS name`, or `x name` when `implicitAlias`). */
  namedExpression(implicitAlias: boolean): Parsed {
    const parsed = this.expression();
    let name: string | undefined;
    if (this.acceptWord('as')) {
      // A generator's several columns: posexplode(xs) AS (pos, x).
      if (this.acceptOp('(')) {
        const names = [this.aliasName()];
        while (this.acceptOp(',')) names.push(this.aliasName());
        this.expectOp(')');
        if (parsed.kind === 'aggregate') throw syntaxError(this.sql, this.t, 'a name list follows only a generator');
        return { kind: 'column', expr: { op: 'alias', expr: parsed.expr, name: names[0]!, ...(names.length > 1 && { names }) } };
      }
      name = this.aliasName();
    } else if (implicitAlias && this.t.kind === 'name' && (this.t.quoted || !RESERVED_AFTER.has(this.t.text.toLowerCase()))) name = this.aliasName();
    // A generator's columns are named by the generator (col, pos, key, value), not by its text.
    const generator = parsed.kind === 'column' && parsed.expr.op === 'call' && GENERATORS.includes(parsed.expr.fn as GeneratorName);
    if (name === undefined) name = parsed.kind === 'column' && !generator ? parsed.name : undefined;
    if (name === undefined) return parsed;
    return parsed.kind === 'aggregate'
      ? { kind: 'aggregate', agg: parsed.agg.alias(name) }
      : { kind: 'column', expr: { op: 'alias', expr: parsed.expr, name } };
  }

  expression(): Parsed {
    return this.or();
  }

  private or(): Parsed {
    const at = this.t;
    let left = this.and();
    while (this.acceptWord('or'))
      left = {
        kind: 'column',
        expr: binary(
          'or',
          this.column(left, at),
          this.sub(() => this.and()),
        ),
      };
    return left;
  }

  private and(): Parsed {
    const at = this.t;
    let left = this.not();
    while (this.acceptWord('and'))
      left = {
        kind: 'column',
        expr: binary(
          'and',
          this.column(left, at),
          this.sub(() => this.not()),
        ),
      };
    return left;
  }

  private not(): Parsed {
    if (this.acceptWord('not') || this.acceptOp('!')) return { kind: 'column', expr: not(this.sub(() => this.not())) };
    return this.predicated();
  }

  private predicated(): Parsed {
    const at = this.t;
    const value = this.comparison();
    const negated = (e: Expr, neg: boolean): Parsed => ({ kind: 'column', expr: neg ? not(e) : e });
    if (this.acceptWord('is')) {
      const neg = this.acceptWord('not');
      const x = this.column(value, at);
      if (this.acceptWord('null')) return { kind: 'column', expr: { op: 'unary', fn: neg ? 'isNotNull' : 'isNull', expr: x } };
      if (this.acceptWord('true')) return negated({ op: 'call', fn: 'coalesce', args: [x, lit(false, 'boolean')] }, neg);
      if (this.acceptWord('false')) return negated({ op: 'call', fn: 'coalesce', args: [not(x), lit(false, 'boolean')] }, neg);
      if (this.acceptWord('unknown')) return negated(isNull(x), neg);
      if (this.acceptWord('distinct')) {
        this.expectWord('from');
        const y = this.sub(() => this.comparison());
        const name = `(${exprName(x)} <=> ${exprName(y)})`;
        return { kind: 'column', expr: neg ? nullSafeEqual(x, y) : not(nullSafeEqual(x, y)), name: neg ? name : `(NOT ${name})` };
      }
      throw syntaxError(this.sql, this.t, 'expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM');
    }
    const save = this.i;
    const neg = this.acceptWord('not');
    if (this.acceptWord('between')) {
      const x = this.column(value, at);
      const lower = this.sub(() => this.comparison());
      this.expectWord('and');
      const upper = this.sub(() => this.comparison());
      return negated(binary('and', binary('geq', x, lower), binary('leq', x, upper)), neg);
    }
    if (this.acceptWord('in')) {
      const x = this.column(value, at);
      this.expectOp('(');
      const items = [this.sub(() => this.expression())];
      while (this.acceptOp(',')) items.push(this.sub(() => this.expression()));
      this.expectOp(')');
      const anyEqual = items.map((v) => binary('equalTo', x, v)).reduce((a, b) => binary('or', a, b));
      const name = `(${exprName(x)} IN (${items.map((v) => exprName(v)).join(', ')}))`;
      return { kind: 'column', expr: neg ? not(anyEqual) : anyEqual, name: neg ? `(NOT ${name})` : name };
    }
    for (const w of ['like', 'ilike', 'rlike', 'regexp']) {
      if (!this.acceptWord(w)) continue;
      const x = this.column(value, at);
      let pattern = this.sub(() => this.comparison());
      if ((w === 'like' || w === 'ilike') && this.acceptWord('escape')) pattern = this.escapedPattern(pattern);
      return negated(patternMatch(w === 'regexp' ? 'rlike' : (w as 'like' | 'ilike' | 'rlike'), x, pattern), neg);
    }
    this.i = save;
    return value;
  }

  /** LIKE's pattern with `ESCAPE 'c'`: c escapes the next character, rewritten to the default escape (\\). */
  private escapedPattern(pattern: Expr): Expr {
    const e = this.t;
    if (e.kind !== 'string' || [...e.value].length !== 1) throw syntaxError(this.sql, e, 'ESCAPE takes one character as a string');
    this.i++;
    if (pattern.op !== 'lit' || typeof pattern.value !== 'string') {
      throw new SluiceError('INVALID_EXPRESSION', `LIKE ... ESCAPE needs a literal pattern (at pos ${e.pos} of '${this.sql}')`);
    }
    const esc = e.value;
    let out = '';
    const chars = [...pattern.value];
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i]!;
      if (c === esc) {
        const next = chars[++i];
        if (next === undefined || (next !== '%' && next !== '_' && next !== esc)) {
          throw new SluiceError(
            'INVALID_EXPRESSION',
            `[INVALID_FORMAT.ESC_IN_THE_MIDDLE] the escape character '${esc}' must be followed by %, _ or itself in '${pattern.value}' (in '${this.sql}')`,
          );
        }
        out += next === '\\' ? '\\\\' : `\\${next}`;
      } else out += c === '\\' ? '\\\\' : c;
    }
    return lit(out, 'string');
  }

  private comparison(): Parsed {
    const at = this.t;
    let left = this.bitwise(0);
    for (;;) {
      const t = this.t;
      const fn = t.kind === 'op' ? COMPARISONS[t.text] : undefined;
      if (fn === undefined) return left;
      this.i++;
      const l = this.column(left, at);
      const r = this.sub(() => this.bitwise(0));
      left =
        fn === 'nullSafeEqual'
          ? { kind: 'column', expr: nullSafeEqual(l, r), name: `(${exprName(l)} <=> ${exprName(r)})` }
          : { kind: 'column', expr: binary(fn, l, r) };
    }
  }

  /** `|`, then `^`, then `&` (Spark's precedence: all below + and -, above comparisons). */
  private bitwise(level: number): Parsed {
    if (level === BITWISE_LEVELS.length) return this.additive();
    const [symbol, fn] = BITWISE_LEVELS[level]!;
    const at = this.t;
    let left = this.bitwise(level + 1);
    while (this.acceptOp(symbol)) {
      const l = this.column(left, at);
      const r = this.sub(() => this.bitwise(level + 1));
      left = { kind: 'column', expr: binary(fn, l, r) };
    }
    return left;
  }

  private additive(): Parsed {
    const at = this.t;
    let left = this.multiplicative();
    for (;;) {
      const op = this.isOp('+') ? 'plus' : this.isOp('-') ? 'minus' : this.isOp('||') ? 'concat' : undefined;
      if (op === undefined) return left;
      this.i++;
      const l = this.column(left, at);
      const r = this.sub(() => this.multiplicative());
      left = { kind: 'column', expr: op === 'concat' ? { op: 'call', fn: 'concat', args: [l, r] } : binary(op, l, r) };
    }
  }

  private multiplicative(): Parsed {
    const at = this.t;
    let left = this.unary();
    for (;;) {
      const op = this.isOp('*') ? 'multiply' : this.isOp('/') ? 'divide' : this.isOp('%') ? 'mod' : this.isWord('div') ? 'div' : undefined;
      if (op === undefined) return left;
      this.i++;
      const l = this.column(left, at);
      const r = this.sub(() => this.unary());
      // a DIV b: the quotient truncated toward zero, as a LONG (null for a zero divisor, as a / b).
      left =
        op === 'div'
          ? { kind: 'column', expr: { op: 'cast', expr: binary('divide', l, r), to: 'long' }, name: `(${exprName(l)} div ${exprName(r)})` }
          : { kind: 'column', expr: binary(op, l, r) };
    }
  }

  private unary(): Parsed {
    if (this.isOp('-') || this.isOp('+')) {
      const minus = this.isOp('-');
      this.i++;
      const next = this.t;
      // A negative number literal stays a literal (its type is the number's, as in Spark).
      if (minus && next.kind === 'number') {
        this.i++;
        return { kind: 'column', expr: this.postfix(this.numberLiteral(next, true)) };
      }
      const x = this.sub(() => this.unary());
      return { kind: 'column', expr: minus ? { op: 'unary', fn: 'negate', expr: x } : x };
    }
    if (this.acceptOp('~')) return { kind: 'column', expr: { op: 'unary', fn: 'bitwiseNot', expr: this.sub(() => this.unary()) } };
    const at = this.t;
    const p = this.primary();
    if (p.kind === 'aggregate') {
      if (this.isOp('::') || this.isOp('.') || this.isOp('[')) this.column(p, at);
      return p;
    }
    const e = this.postfix(p.expr);
    return e === p.expr ? p : { kind: 'column', expr: e };
  }
}

function checkText(sql: unknown, what: string): string {
  if (typeof sql !== 'string') throw new SluiceError('INVALID_EXPRESSION', `${what} takes SQL text, got ${sql === null ? 'null' : typeof sql}`);
  return sql;
}

/** The expression of `p` as a column: an aggregate through the parser's onAggregate, if set. */
export function columnOf(parser: Parser, p: Parsed): Expr | undefined {
  if (p.kind === 'column') return p.expr;
  return parser.onAggregate?.(p.agg);
}

/** One expression, with an optional alias (`expr`, `selectExpr`; Spark's parseExpression). */
export function parseExpression(sql: string, what = 'expr'): Parsed {
  const p = new Parser(checkText(sql, what));
  const parsed = p.namedExpression(true);
  p.expectEnd();
  return parsed;
}

/** A column expression from SQL text: an aggregate here is an error naming where it may go. */
export function parseColumn(sql: string, what: string): Column {
  const parsed = parseExpression(sql, what);
  if (parsed.kind === 'aggregate') {
    throw new SluiceError('INVALID_EXPRESSION', `${what}: aggregate ${parsed.agg.name} is allowed only in groupBy(...).agg(...): '${sql}'`);
  }
  return new Column(parsed.expr);
}
