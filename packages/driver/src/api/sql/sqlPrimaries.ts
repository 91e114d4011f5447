/**
 * The primaries of Spark SQL expressions, the grammar's highest level: literals (numbers, strings,
 * booleans, NULL, TIMESTAMP '...', DATE '...', INTERVAL ...), names and their `::type`, `.field`
 * and `[i]` postfixes, function calls (with lambdas), CASE, CAST, EXTRACT and ( ... ). The
 * operators above them are parseExpression.ts's Parser.
 */
import {
  addIntervals,
  exprName,
  formatInterval,
  intervalOf,
  intervalUnit,
  parseDataType,
  parseInterval,
  syntaxError,
  toInternal,
  type Expr,
  type Interval,
  type Token,
} from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import type { AggregateColumn } from '../aggregates.js';
import { datePart, resolveFunction, type SqlArg } from './sqlFunctions.js';
import type { Parsed } from './parseExpression.js';
import { TokenCursor } from './sqlTokens.js';

export const lit = (value: string | number | boolean | null, type: Extract<Expr, { op: 'lit' }>['type']): Expr => ({ op: 'lit', value, type });
export const binary = (fn: Extract<Expr, { op: 'binary' }>['fn'], left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right });

export abstract class PrimaryParser extends TokenCursor {
  /**
   * Set by a SELECT with aggregates (sqlStatement.ts): an aggregate inside an expression becomes
   * the column this gives for it, computed by the query's aggregation.
   */
  onAggregate: ((agg: AggregateColumn) => Expr) | undefined;

  /** A whole expression, operators and all (the Parser's). */
  abstract expression(): Parsed;

  /** A sub-expression that must be a column expression (an aggregate only stands alone). */
  protected column(p: Parsed, at: Token): Expr {
    if (p.kind === 'column') return p.expr;
    if (this.onAggregate) return this.onAggregate(p.agg);
    throw new SluiceError(
      'INVALID_EXPRESSION',
      `aggregate ${p.agg.name} must be a whole expression of groupBy(...).agg(...), not part of one (at pos ${at.pos} of '${this.sql}')`,
    );
  }

  protected sub(parse: () => Parsed): Expr {
    const at = this.t;
    return this.column(parse(), at);
  }

  /** `x::type`, `x.field` (a struct field of any expression whose name is a column path), `x[i]` and `m[key]`. */
  protected postfix(e: Expr): Expr {
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

  protected primary(): Parsed {
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
  protected numberLiteral(t: Extract<Token, { kind: 'number' }>, negative: boolean): Expr {
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
