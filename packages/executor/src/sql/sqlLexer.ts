/**
 * Tokens of Spark SQL text, as Spark's lexer (SqlBaseLexer.g4) makes them: names (a backticked
 * name keeps its case and may hold any character, `` doubled), numbers with their type suffixes,
 * strings in single or double quotes with backslash escapes, operators, and comments (`--` to the
 * end of the line, C-style blocks) skipped. Keywords are names here: the parser decides by context,
 * as Spark does with its non-reserved keywords (a column may be called `date`).
 *
 * One lexer for all SQL text: expressions and statements (the driver's parser) and the DDL of
 * schemas and type names (schema/schema.ts), as Spark reads both with SqlBaseLexer.
 */
import { SluiceError } from '@sluice/state';

export type Token =
  | { kind: 'name'; text: string; quoted: boolean; pos: number; end: number }
  | { kind: 'number'; text: string; pos: number; end: number }
  | { kind: 'string'; value: string; pos: number; end: number }
  | { kind: 'op'; text: string; pos: number; end: number }
  | { kind: 'end'; pos: number; end: number };

/** Longest first, so that `<=>` is not read as `<=` then `>`. */
const OPERATORS = [
  '<=>',
  '->',
  '<>',
  '!=',
  '<=',
  '>=',
  '==',
  '||',
  '::',
  ':',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  ',',
  '.',
  '[',
  ']',
  '!',
  '~',
  '&',
  '|',
  '^',
];

const ESCAPES: Record<string, string> = { '0': '\0', b: '\b', n: '\n', r: '\r', t: '\t', Z: '\x1a', '%': '\\%', _: '\\_' };

/** The text of a token as Spark's messages quote it. */
export function tokenText(t: Token, sql: string): string {
  return t.kind === 'end' ? '<EOF>' : sql.slice(t.pos, t.end);
}

/** Spark's PARSE_SYNTAX_ERROR at token `t`: "Syntax error at or near 'x'" with its line and position. */
export function syntaxError(sql: string, t: Token, hint?: string): SluiceError {
  const before = sql.slice(0, t.pos);
  const line = before.split('\n').length;
  const pos = t.pos - (before.lastIndexOf('\n') + 1);
  const near = t.kind === 'end' ? 'end of input' : `'${tokenText(t, sql)}'`;
  return new SluiceError(
    'PARSE_SYNTAX_ERROR',
    `[PARSE_SYNTAX_ERROR] Syntax error at or near ${near}${hint ? `: ${hint}` : ''}. (line ${line}, pos ${pos})\n\n== SQL ==\n${sql}`,
    {
      line,
    },
  );
}

export interface LexerOptions {
  /**
   * Unquoted names as schema strings have always taken them: any run of Unicode letters and digits,
   * `_` and `$`, a digit first too (`1st_place`, `prix_é`, `a$b`). Off, a name is Spark SQL's: an
   * ASCII letter or `_`, then ASCII letters, digits and `_`.
   */
  ddlNames?: boolean;
  /**
   * The error for text that is no token at `pos` (`hint`: what is wrong, when more than the
   * character itself); Spark's PARSE_SYNTAX_ERROR unless given.
   */
  error?: (pos: number, hint: string | undefined) => Error;
}

const DDL_NAME_CHAR = /[\p{L}\p{N}_$]/u;

export function tokenize(sql: string, options: LexerOptions = {}): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (pos: number, hint?: string): never => {
    if (options.error) throw options.error(pos, hint);
    throw syntaxError(sql, { kind: 'op', text: sql[pos] ?? '', pos, end: Math.min(pos + 1, sql.length) }, hint);
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (sql.startsWith('--', i)) {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
      continue;
    }
    if (sql.startsWith('/*', i)) {
      const close = sql.indexOf('*/', i + 2);
      if (close < 0) fail(i, 'unclosed comment');
      i = close + 2;
      continue;
    }
    const start = i;
    if (options.ddlNames && DDL_NAME_CHAR.test(c)) {
      while (i < sql.length && DDL_NAME_CHAR.test(sql[i] as string)) i++;
      tokens.push({ kind: 'name', text: sql.slice(start, i), quoted: false, pos: start, end: i });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      while (i < sql.length && /[A-Za-z0-9_]/.test(sql[i] as string)) i++;
      tokens.push({ kind: 'name', text: sql.slice(start, i), quoted: false, pos: start, end: i });
      continue;
    }
    if (c === '`') {
      let text = '';
      for (i++; ; i++) {
        if (i >= sql.length) fail(start, 'unclosed backticked name');
        if (sql[i] === '`') {
          if (sql[i + 1] !== '`') break;
          i++;
        }
        text += sql[i];
      }
      i++;
      tokens.push({ kind: 'name', text, quoted: true, pos: start, end: i });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const m = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?(bd|[lsydf])?(?![A-Za-z0-9_])/i.exec(sql.slice(i));
      if (!m) fail(i);
      i += (m as RegExpExecArray)[0].length;
      tokens.push({ kind: 'number', text: sql.slice(start, i), pos: start, end: i });
      continue;
    }
    if (c === "'" || c === '"') {
      let value = '';
      for (i++; ; i++) {
        if (i >= sql.length) fail(start, 'unclosed string literal');
        const ch = sql[i] as string;
        if (ch === c) break;
        if (ch === '\\' && i + 1 < sql.length) {
          const next = sql[++i] as string;
          value += ESCAPES[next] ?? next;
          continue;
        }
        value += ch;
      }
      i++;
      tokens.push({ kind: 'string', value, pos: start, end: i });
      continue;
    }
    const op = OPERATORS.find((o) => sql.startsWith(o, i));
    if (op === undefined) fail(i);
    i += (op as string).length;
    tokens.push({ kind: 'op', text: op as string, pos: start, end: i });
  }
  tokens.push({ kind: 'end', pos: sql.length, end: sql.length });
  return tokens;
}
