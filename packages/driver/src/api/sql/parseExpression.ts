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
 */
import {
  addIntervals,
  exprName,
  formatInterval,
  GENERATORS,
  intervalOf,
  intervalUnit,
  parseDataType,
  parseInterval,
  syntaxError,
  tokenize,
  toInternal,
  type Expr,
  type GeneratorName,
  type Interval,
  type Token,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { AggregateColumn } from '../aggregates.js';
import { Column, patternMatch } from '../Column.js';
import { datePart, resolveFunction, type SqlArg } from './sqlFunctions.js';

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

const lit = (value: string | number | boolean | null, type: Extract<Expr, { op: 'lit' }>['type']): Expr => ({ op: 'lit', value, type });
const not = (expr: Expr): Expr => ({ op: 'unary', fn: 'not', expr });
const isNull = (expr: Expr): Expr => ({ op: 'unary', fn: 'isNull', expr });
const binary = (fn: Extract<Expr, { op: 'binary' }>['fn'], left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right });

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

export class Parser {
  private readonly tokens: Token[];
  private i = 0;
  /**
   * Set by a SELECT with aggregates (sqlStatement.ts): an aggregate inside an expression becomes
   * the column this gives for it, computed by the query's aggregation.
   */
  onAggregate: ((agg: AggregateColumn) => Expr) | undefined;

  constructor(readonly sql: string) {
    this.tokens = tokenize(sql);
  }

  get t(): Token {
    return this.tokens[this.i] as Token;
  }

  peek(ahead = 1): Token {
    return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)] as Token;
  }

  /** Whether the current token is the unquoted word `w` (case-insensitive). */
  isWord(w: string, t: Token = this.t): boolean {
    return t.kind === 'name' && !t.quoted && t.text.toLowerCase() === w;
  }

  isOp(op: string, t: Token = this.t): boolean {
    return t.kind === 'op' && t.text === op;
  }

  acceptWord(w: string): boolean {
    if (!this.isWord(w)) return false;
    this.i++;
    return true;
  }

  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i++;
    return true;
  }

  expectWord(w: string): void {
    if (!this.acceptWord(w)) throw syntaxError(this.sql, this.t, `expected ${w.toUpperCase()}`);
  }

  expectOp(op: string): void {
    if (!this.acceptOp(op)) throw syntaxError(this.sql, this.t, `expected '${op}'`);
  }

  expectEnd(): void {
    if (this.t.kind !== 'end') throw syntaxError(this.sql, this.t);
  }

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

  aliasName(): string {
    const t = this.t;
    if (t.kind !== 'name') throw syntaxError(this.sql, t, 'expected a name');
    this.i++;
    return t.text;
  }

  expression(): Parsed {
    return this.or();
  }

  /** A sub-expression that must be a column expression (an aggregate only stands alone). */
  private column(p: Parsed, at: Token): Expr {
    if (p.kind === 'column') return p.expr;
    if (this.onAggregate) return this.onAggregate(p.agg);
    throw new SluiceError(
      'INVALID_EXPRESSION',
      `aggregate ${p.agg.name} must be a whole expression of groupBy(...).agg(...), not part of one (at pos ${at.pos} of '${this.sql}')`,
    );
  }

  private sub(parse: () => Parsed): Expr {
    const at = this.t;
    return this.column(parse(), at);
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

  /** `x::type`, `x.field` (a struct field of any expression whose name is a column path), `x[i]` and `m[key]`. */
  private postfix(e: Expr): Expr {
    for (;;) {
      if (this.acceptOp('::')) e = { op: 'cast', expr: e, to: this.dataType() };
      else if (this.isOp('.') && e.op === 'col' && this.peek().kind === 'name') {
        this.i++;
        e = { op: 'col', name: `${e.name}.${(this.t as Extract<Token, { kind: 'name' }>).text}` };
        this.i++;
      } else if (this.acceptOp('[')) {
        // arr[i] (0-based, null out of range) and map[key]: Spark's subscripts, as get(x, i).
        const index = this.sub(() => this.expression());
        this.expectOp(']');
        e = { op: 'call', fn: 'get', args: [e, index] };
      } else return e;
    }
  }

  /**
   * A type name as Spark's DDL reads it: a name, with its parameters when `<...>` or `(...)`
   * follows (`INT`, `DECIMAL(10, 2)`, `STRUCT<a: INT>`); parseDataType checks it.
   */
  private dataType(): ReturnType<typeof parseDataType> {
    const first = this.t;
    if (first.kind !== 'name') throw syntaxError(this.sql, first, 'expected a type');
    this.i++;
    if (this.isOp('<') || this.isOp('(')) {
      let depth = 0;
      do {
        if (this.t.kind === 'end') throw syntaxError(this.sql, this.t, 'unclosed type parameters');
        if (this.isOp('<') || this.isOp('(')) depth++;
        if (this.isOp('>') || this.isOp(')')) depth--;
        this.i++;
      } while (depth > 0);
    }
    const text = this.sql.slice(first.pos, (this.tokens[this.i - 1] as Token).end);
    try {
      return parseDataType(text);
    } catch (e) {
      if (e instanceof SluiceError) throw new SluiceError('INVALID_EXPRESSION', `${e.message} (in '${this.sql}')`);
      throw e;
    }
  }

  private primary(): Parsed {
    const t = this.t;
    switch (t.kind) {
      case 'number':
        this.i++;
        return { kind: 'column', expr: this.numberLiteral(t, false) };
      case 'string': {
        this.i++;
        let value = t.value;
        // Adjacent string literals are one, as in Spark: 'a' 'b' is 'ab'.
        while (this.t.kind === 'string') value += (this.tokens[this.i++] as Extract<Token, { kind: 'string' }>).value;
        return { kind: 'column', expr: lit(value, 'string') };
      }
      case 'op':
        if (this.acceptOp('(')) {
          const inner = this.expression();
          if (this.isOp(',')) {
            // (a, b): a struct of the values, fields named as struct(a, b) names them (Spark's row constructor).
            const items = [this.column(inner, t)];
            while (this.acceptOp(',')) items.push(this.sub(() => this.expression()));
            this.expectOp(')');
            return resolveFunction(
              'struct',
              items.map((expr) => ({ expr })),
              this.sql,
            );
          }
          this.expectOp(')');
          return inner;
        }
        throw syntaxError(this.sql, t);
      case 'end':
        throw syntaxError(this.sql, t);
      case 'name':
        return this.named(t);
    }
  }

  private named(t: Extract<Token, { kind: 'name' }>): Parsed {
    const word = t.quoted ? undefined : t.text.toLowerCase();
    const next = this.peek();
    if (word === 'true' || word === 'false') {
      this.i++;
      return { kind: 'column', expr: lit(word === 'true', 'boolean') };
    }
    if (word === 'null') {
      this.i++;
      return { kind: 'column', expr: lit(null, 'null') };
    }
    if (word === 'case' && !this.isOp('(', next)) return this.caseExpression();
    if ((word === 'timestamp' || word === 'date') && next.kind === 'string') return this.typedLiteral(word);
    if (word === 'interval' && (next.kind === 'string' || next.kind === 'number' || this.isOp('-', next))) return this.intervalLiteral();
    if (word === 'extract' && this.isOp('(', next)) {
      // EXTRACT(field FROM source), Spark's form of date_part.
      this.i += 2;
      const field = this.aliasName();
      this.expectWord('from');
      const source = this.sub(() => this.expression());
      this.expectOp(')');
      return { kind: 'column', expr: datePart(field, source, this.sql), name: `extract(${field} FROM ${exprName(source)})` };
    }
    if (word === 'cast' && this.isOp('(', next)) {
      this.i += 2;
      const x = this.sub(() => this.expression());
      this.expectWord('as');
      const to = this.dataType();
      this.expectOp(')');
      return { kind: 'column', expr: { op: 'cast', expr: x, to } };
    }
    this.i++;
    if (this.isOp('(')) return this.call(t);
    // Spark's niladic functions may be written without parentheses.
    if ((word === 'current_timestamp' || word === 'current_date') && !t.quoted) return { kind: 'column', expr: { op: 'call', fn: word, args: [] }, name: word };
    return { kind: 'column', expr: { op: 'col', name: t.text } };
  }

  private call(name: Extract<Token, { kind: 'name' }>): Parsed {
    this.expectOp('(');
    const args: SqlArg[] = [];
    if (this.acceptWord('distinct')) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        `${name.text}(DISTINCT ...): distinct aggregations are not supported on streaming DataFrames, as in Spark; consider approx_count_distinct() (at pos ${name.pos} of '${this.sql}')`,
      );
    }
    if (!this.isOp(')')) {
      do {
        if (this.isOp('*') && (this.isOp(')', this.peek()) || this.isOp(',', this.peek()))) {
          this.i++;
          args.push({ star: true });
          continue;
        }
        const lambda = this.lambdaParams();
        if (lambda !== undefined) {
          args.push({ expr: { op: 'lambda', params: lambda, body: this.sub(() => this.expression()) } });
          continue;
        }
        const at = this.t;
        const p = this.expression();
        args.push({ expr: this.column(p, at) });
        // substring(str FROM pos [FOR len]), Spark's SQL-standard form.
        if (args.length === 1 && ['substring', 'substr'].includes(name.text.toLowerCase()) && this.acceptWord('from')) {
          args.push({ expr: this.sub(() => this.expression()) });
          if (this.acceptWord('for')) args.push({ expr: this.sub(() => this.expression()) });
          break;
        }
      } while (this.acceptOp(','));
    }
    this.expectOp(')');
    return resolveFunction(name.text, args, this.sql);
  }

  /** A lambda's parameters, `x ->` or `(x, y) ->`, consumed; undefined (nothing consumed) when no lambda starts here. */
  private lambdaParams(): string[] | undefined {
    const t = this.t;
    if (t.kind === 'name' && this.isOp('->', this.peek())) {
      this.i += 2;
      return [t.text];
    }
    if (!this.isOp('(')) return undefined;
    const names: string[] = [];
    let j = 1;
    for (;;) {
      const n = this.peek(j);
      if (n.kind !== 'name') return undefined;
      names.push(n.text);
      if (this.isOp(',', this.peek(j + 1))) j += 2;
      else if (this.isOp(')', this.peek(j + 1)) && this.isOp('->', this.peek(j + 2))) break;
      else return undefined;
    }
    this.i += j + 3;
    return names;
  }

  /** CASE WHEN c THEN v ... [ELSE e] END, and CASE x WHEN v1 THEN r1 ... END (x = v1, ...). */
  private caseExpression(): Parsed {
    this.i++;
    const subject = this.isWord('when') ? undefined : this.sub(() => this.expression());
    const branches: Array<{ cond: Expr; value: Expr }> = [];
    while (this.acceptWord('when')) {
      const w = this.sub(() => this.expression());
      this.expectWord('then');
      branches.push({ cond: subject === undefined ? w : binary('equalTo', subject, w), value: this.sub(() => this.expression()) });
    }
    if (branches.length === 0) throw syntaxError(this.sql, this.t, 'expected WHEN');
    const otherwise = this.acceptWord('else') ? this.sub(() => this.expression()) : undefined;
    this.expectWord('end');
    return { kind: 'column', expr: { op: 'when', branches, ...(otherwise !== undefined && { otherwise }) } };
  }

  /** TIMESTAMP '...' and DATE '...', read as CAST of the text reads them (UTC); text that is not one is an error, as in Spark. */
  private typedLiteral(word: 'timestamp' | 'date'): Parsed {
    const t = this.peek() as Extract<Token, { kind: 'string' }>;
    this.i += 2;
    const value = toInternal(t.value, word);
    if (value === null || (word === 'timestamp' && /^\s*-?\d+\s*$/.test(t.value))) {
      throw new SluiceError(
        'INVALID_EXPRESSION',
        `[INVALID_TYPED_LITERAL] the value of the typed literal ${word.toUpperCase()} is invalid: '${t.value}' (in '${this.sql}')`,
      );
    }
    return { kind: 'column', expr: lit(value as number, word) };
  }

  /**
   * INTERVAL literals: `INTERVAL 1 HOUR`, `INTERVAL '10' MINUTE`, `INTERVAL 1 DAY 2 HOURS`,
   * `INTERVAL '1 day 2 hours'`, `INTERVAL -30 SECONDS`. Their value is an INTERVAL; `ts + INTERVAL
   * ...` moves a timestamp or date. The ANSI `... TO ...` forms are not supported.
   */
  private intervalLiteral(): Parsed {
    const start = this.t;
    this.i++;
    let acc: Interval = [0, 0, 0];
    const bad = (why: string): SluiceError =>
      new SluiceError('INVALID_EXPRESSION', `[INVALID_TYPED_LITERAL] the INTERVAL literal at pos ${start.pos} is invalid: ${why} (in '${this.sql}')`);
    for (let first = true; ; first = false) {
      const negative = this.acceptOp('-');
      const v = this.t;
      if (v.kind !== 'string' && v.kind !== 'number') {
        if (first) throw bad('expected an amount');
        if (negative) throw bad('expected an amount after -');
        break;
      }
      const unitToken = this.peek();
      const unit = unitToken.kind === 'name' ? intervalUnit(unitToken.text) : undefined;
      if (unit === undefined) {
        // INTERVAL '1 day 2 hours': the text holds the units.
        if (v.kind !== 'string' || !first) break;
        this.i++;
        const whole = parseInterval(v.value);
        if (whole === null) throw bad(`'${v.value}' is not an interval`);
        acc = whole;
        break;
      }
      const text = v.kind === 'string' ? v.value.trim() : v.text;
      if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) throw bad(`'${text}' is not a number`);
      this.i += 2;
      acc = addIntervals(acc, intervalOf((negative ? -1 : 1) * Number(text), unit));
      if (this.isWord('to'))
        throw new SluiceError(
          'UNSUPPORTED_OPERATION',
          `INTERVAL ... TO ... literals are not supported; write the units, as INTERVAL 1 DAY 2 HOURS (in '${this.sql}')`,
        );
    }
    return { kind: 'column', expr: lit(formatInterval(acc), 'interval') };
  }

  /**
   * Spark's numeric literals: an integer is INT when it fits, else BIGINT; suffix L is BIGINT, S
   * and Y are INT here (no SMALLINT or TINYINT), D and an exponent DOUBLE. A decimal such as 1.5 is
   * DECIMAL in Spark and DOUBLE here, as is the BD suffix, until DECIMAL is a type.
   */
  private numberLiteral(t: Extract<Token, { kind: 'number' }>, negative: boolean): Expr {
    const m = /^(.*?)(bd|[lsydf])?$/i.exec(t.text) as RegExpExecArray;
    const digits = (negative ? '-' : '') + m[1]!;
    const suffix = m[2]?.toLowerCase();
    const value = Number(digits);
    const integral = /^-?\d+$/.test(digits);
    if (suffix === 'd' || suffix === 'f' || suffix === 'bd' || !integral) return lit(value, 'double');
    if (!Number.isSafeInteger(value)) {
      throw new SluiceError('INVALID_EXPRESSION', `literal ${t.text} is beyond the exact range of a LONG in Sluice (2^53) (in '${this.sql}')`);
    }
    if (suffix === 'l') return lit(value, 'long');
    return lit(value, suffix === undefined && (value > 2147483647 || value < -2147483648) ? 'long' : 'int');
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
