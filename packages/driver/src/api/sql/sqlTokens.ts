/**
 * A cursor over the tokens of SQL text (the executor's sql/sqlLexer.ts), with the steps every
 * parser of SQL here takes: look at the current token or one ahead, accept or expect a word or an
 * operator, a name, the end. The expression parser (parseExpression.ts) and the statement parser
 * (sqlStatement.ts) read through it.
 */
import { syntaxError, tokenize, type Token } from '@sluice/executor';

export class TokenCursor {
  protected readonly tokens: Token[];
  protected i = 0;

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

  aliasName(): string {
    const t = this.t;
    if (t.kind !== 'name') throw syntaxError(this.sql, t, 'expected a name');
    this.i++;
    return t.text;
  }
}
