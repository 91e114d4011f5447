/**
 * Schemas as users write them (DDL strings or plain objects) turned into the plan's `Schema`, and
 * back into DDL for messages and checkpoints. `parseSchema(schemaToDDL(s))` deep-equals `s`.
 *
 * DDL: `event_time TIMESTAMP, id STRING, s STRUCT<a: INT, b STRING NOT NULL>`; type names are
 * case-insensitive; names may be back-quoted (`` `my col` ``, a back-quote doubled inside). The text
 * is read by the SQL lexer (sql/sqlLexer.ts), so comments are skipped as in any SQL text; its
 * errors become INVALID_SCHEMA naming the option.
 * Object form: `{ event_time: 'timestamp', s: { a: 'int' } }` (a nested object is a struct).
 */
import { SluiceError } from '@sluice/state';
import { tokenize, tokenText, type Token } from '../sql/sqlLexer.js';
import type { AtomicType, DataType, Field, Schema } from './types.js';

const kTypeNames: Record<string, AtomicType> = {
  STRING: 'string',
  INT: 'int',
  INTEGER: 'int',
  SMALLINT: 'int',
  SHORT: 'int',
  TINYINT: 'int',
  BYTE: 'int',
  LONG: 'long',
  BIGINT: 'long',
  DOUBLE: 'double',
  FLOAT: 'double',
  REAL: 'double',
  BOOLEAN: 'boolean',
  BOOL: 'boolean',
  TIMESTAMP: 'timestamp',
  DATE: 'date',
  INTERVAL: 'interval',
  NULL: 'null',
  VOID: 'null',
};

const kAtomicDDL: Record<AtomicType, string> = {
  string: 'STRING',
  int: 'INT',
  long: 'LONG',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  timestamp: 'TIMESTAMP',
  date: 'DATE',
  interval: 'INTERVAL',
  null: 'NULL',
};

/**
 * Parses a user schema. `option` names the option in error messages ("options.schema: ...").
 * Every failure is a SluiceError with code INVALID_SCHEMA, `option` set and, when known, `column`.
 */
export function parseSchema(input: string | Record<string, string | object> | Schema, option = 'schema'): Schema {
  let fields: Field[];
  if (typeof input === 'string') {
    const p = new DDLParser(input, option);
    fields = p.parseTopLevel();
  } else if (Array.isArray(input)) {
    fields = input.map((f, i) => normalizeField(f, `[${i}]`, option, ''));
  } else if (input !== null && typeof input === 'object') {
    fields = objectToFields(input, option, '');
  } else {
    throw invalid(option, `expected a DDL string, an object or a field list, got ${describe(input)}`);
  }
  if (fields.length === 0) throw invalid(option, 'the schema has no columns');
  checkDuplicates(fields, option, '');
  return fields;
}

/** Parses one type name as used by `cast('double')` or a schema object's values. */
export function parseDataType(name: string, option?: string): DataType {
  if (typeof name !== 'string') throw invalid(option, `expected a type name, got ${describe(name)}`);
  const p = new DDLParser(name, option);
  const t = p.parseType(undefined);
  p.expectEnd();
  return t;
}

/** The DDL form of a schema: `a INT, s STRUCT<b: STRING NOT NULL>`. */
export function schemaToDDL(schema: Schema): string {
  return schema.map((f) => fieldToDDL(f)).join(', ');
}

export function dataTypeToDDL(t: DataType): string {
  if (typeof t === 'string') return kAtomicDDL[t];
  if ('array' in t) return `ARRAY<${dataTypeToDDL(t.array)}>`;
  if ('map' in t) return `MAP<${dataTypeToDDL(t.map.key)}, ${dataTypeToDDL(t.map.value)}>`;
  return `STRUCT<${t.struct.map((f) => fieldToDDL(f, ': ')).join(', ')}>`;
}

function fieldToDDL(f: Field, sep = ' '): string {
  return `${quoteName(f.name)}${sep}${dataTypeToDDL(f.type)}${f.nullable ? '' : ' NOT NULL'}`;
}

function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replaceAll('`', '``')}\``;
}

// ---------------------------------------------------------------------------------------------

/** A DDL string read with the SQL lexer (sql/sqlLexer.ts), as Spark reads schema strings with its SQL lexer. */
class DDLParser {
  private readonly tokens: Token[];
  private i = 0;

  constructor(
    private readonly src: string,
    private readonly option: string | undefined,
  ) {
    const error = (pos: number, hint: string | undefined): SluiceError => this.error(hint ?? `unexpected character '${src[pos] ?? ''}'`, pos);
    // `<>` is one SQL operator; in a type it closes an empty STRUCT<>, so it is read as `<` and `>`.
    this.tokens = tokenize(src, { ddlNames: true, error }).flatMap((t): Token[] =>
      t.kind === 'op' && t.text === '<>'
        ? [
            { kind: 'op', text: '<', pos: t.pos, end: t.pos + 1 },
            { kind: 'op', text: '>', pos: t.pos + 1, end: t.end },
          ]
        : [t],
    );
    const empty = this.tokens.find((t) => t.kind === 'name' && t.quoted && t.text === '');
    if (empty) throw this.error('empty back-quoted name', empty.pos);
  }

  parseTopLevel(): Field[] {
    if (this.peek().kind === 'end') return [];
    const fields = this.parseFieldList(undefined);
    this.expectEnd();
    return fields;
  }

  expectEnd(): void {
    const t = this.peek();
    if (t.kind !== 'end') throw this.error(`unexpected ${this.shown(t)}`, t.pos);
  }

  /** Types are case-insensitive; STRUCT<...> nests; `parent` is the column path for messages. */
  parseType(column: string | undefined): DataType {
    const t = this.next();
    if (t.kind !== 'name' || t.quoted) {
      throw this.error(`expected a type${column ? ` for column '${column}'` : ''}, found ${this.shown(t)}`, t.pos, column);
    }
    const upper = t.text.toUpperCase();
    if (upper === 'STRUCT') {
      this.expectPunct('<', column);
      const fields = this.peekPunct('>') ? [] : this.parseFieldList(column);
      this.expectPunct('>', column);
      checkDuplicates(fields, this.option, column ? `${column}.` : '');
      return { struct: fields };
    }
    if (upper === 'ARRAY') {
      this.expectPunct('<', column);
      const element = this.parseType(column);
      this.expectPunct('>', column);
      return { array: element };
    }
    if (upper === 'MAP') {
      this.expectPunct('<', column);
      const key = this.parseType(column);
      this.expectPunct(',', column);
      const value = this.parseType(column);
      this.expectPunct('>', column);
      return { map: { key, value } };
    }
    const atomic = kTypeNames[upper];
    if (atomic === undefined) {
      throw this.error(
        `unknown type '${t.text}'${column ? ` for column '${column}'` : ''} ` +
          `(supported: STRING, INT, LONG, DOUBLE, BOOLEAN, TIMESTAMP, DATE, STRUCT<...>, ARRAY<...>, MAP<..., ...>)`,
        t.pos,
        column,
      );
    }
    return atomic;
  }

  private parseFieldList(parent: string | undefined): Field[] {
    const fields: Field[] = [];
    for (;;) {
      fields.push(this.parseField(parent));
      if (!this.peekPunct(',')) return fields;
      this.i++;
    }
  }

  private parseField(parent: string | undefined): Field {
    const t = this.next();
    if (t.kind !== 'name') throw this.error(`expected a column name, found ${this.shown(t)}`, t.pos);
    const path = parent ? `${parent}.${t.text}` : t.text;
    if (this.peekPunct(':')) this.i++;
    const type = this.parseType(path);
    let nullable = true;
    const n = this.peek();
    if (n.kind === 'name' && !n.quoted && n.text.toUpperCase() === 'NOT') {
      this.i++;
      const nn = this.next();
      if (nn.kind !== 'name' || nn.text.toUpperCase() !== 'NULL') {
        throw this.error(`expected NULL after NOT for column '${path}'`, nn.pos, path);
      }
      nullable = false;
    }
    const after = this.peek();
    if (after.kind === 'name') {
      throw this.error(`unexpected ${this.shown(after)} after the type of column '${path}'`, after.pos, path);
    }
    return { name: t.text, type, nullable };
  }

  private peek(): Token {
    return this.tokens[this.i] ?? { kind: 'end', pos: this.src.length, end: this.src.length };
  }

  private next(): Token {
    const t = this.peek();
    if (this.i < this.tokens.length) this.i++;
    return t;
  }

  private peekPunct(p: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.text === p;
  }

  private expectPunct(p: string, column: string | undefined): void {
    const t = this.next();
    if (t.kind !== 'op' || t.text !== p) throw this.error(`expected '${p}', found ${this.shown(t)}`, t.pos, column);
  }

  /** A token as messages quote it: a name as it reads (unquoted), anything else as written. */
  private shown(t: Token): string {
    if (t.kind === 'end') return 'end of input';
    return `'${t.kind === 'name' ? t.text : tokenText(t, this.src)}'`;
  }

  private error(what: string, pos: number, column?: string): SluiceError {
    return invalid(this.option, `${what} at position ${pos} in '${this.src}'`, column);
  }
}

// ---------------------------------------------------------------------------------------------

function objectToFields(obj: object, option: string, prefix: string): Field[] {
  const fields: Field[] = [];
  for (const [name, value] of Object.entries(obj)) {
    const path = prefix + name;
    if (name === '') throw invalid(option, 'a column name is empty');
    if (typeof value === 'string') {
      // Object values may carry NOT NULL too: { id: 'string not null' }.
      const m = /^(.*?)\s+not\s+null\s*$/is.exec(value);
      const type = parseDataTypeFor(m ? m[1]! : value, option, path);
      fields.push({ name, type, nullable: !m });
    } else if (isPlainObject(value) && isStructTypeObject(value)) {
      fields.push({ name, type: normalizeType(value, option, path), nullable: true });
    } else if (isPlainObject(value)) {
      const inner = objectToFields(value, option, `${path}.`);
      checkDuplicates(inner, option, `${path}.`);
      fields.push({ name, type: { struct: inner }, nullable: true });
    } else {
      throw invalid(option, `column '${path}' has type ${describe(value)}; expected a type name or an object`, path);
    }
  }
  return fields;
}

function parseDataTypeFor(text: string, option: string, path: string): DataType {
  try {
    return parseDataType(text, option);
  } catch (e) {
    if (e instanceof SluiceError) throw invalid(option, `column '${path}': ${stripPrefix(e.message, option)}`, path);
    throw e;
  }
}

function normalizeField(f: unknown, where: string, option: string, prefix: string): Field {
  if (!isPlainObject(f)) throw invalid(option, `field ${where} must be an object { name, type, nullable }`);
  const name = (f as { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') {
    throw invalid(option, `field ${where} must have a non-empty string name`);
  }
  const path = prefix + name;
  const nullable = (f as { nullable?: unknown }).nullable;
  if (nullable !== undefined && typeof nullable !== 'boolean') {
    throw invalid(option, `column '${path}': nullable must be a boolean`, path);
  }
  const type = normalizeType((f as { type?: unknown }).type, option, path);
  return { name, type, nullable: nullable ?? true };
}

function normalizeType(t: unknown, option: string, path: string): DataType {
  if (typeof t === 'string') return parseDataTypeFor(t, option, path);
  if (isPlainObject(t) && isStructTypeObject(t)) {
    const fields = t.struct.map((f, i) => normalizeField(f, `${path}[${i}]`, option, `${path}.`));
    checkDuplicates(fields, option, `${path}.`);
    return { struct: fields };
  }
  if (isPlainObject(t) && Object.keys(t).length === 1 && 'array' in t) return { array: normalizeType(t.array, option, `${path}[]`) };
  if (isPlainObject(t) && Object.keys(t).length === 1 && 'map' in t && isPlainObject(t.map)) {
    const m = t.map as { key?: unknown; value?: unknown };
    return { map: { key: normalizeType(m.key, option, `${path}{key}`), value: normalizeType(m.value, option, `${path}{value}`) } };
  }
  throw invalid(option, `column '${path}' has an invalid type ${describe(t)}`, path);
}

/** `{ struct: [...] }` with no other key is a StructType, not a struct with a column "struct". */
function isStructTypeObject(v: object): v is { struct: unknown[] } {
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === 'struct' && Array.isArray((v as { struct: unknown }).struct);
}

// Names are compared case-insensitively, as Spark does with spark.sql.caseSensitive=false.
function checkDuplicates(fields: Field[], option: string | undefined, prefix: string): void {
  const seen = new Map<string, string>();
  for (const f of fields) {
    const key = f.name.toLowerCase();
    const prev = seen.get(key);
    if (prev !== undefined) {
      const what = prev === f.name ? `'${prefix}${f.name}'` : `'${prefix}${prev}' and '${prefix}${f.name}'`;
      throw invalid(option, `duplicate column ${what}`, prefix + f.name);
    }
    seen.set(key, f.name);
  }
}

function invalid(option: string | undefined, what: string, column?: string): SluiceError {
  const message = option === undefined ? `invalid type: ${what}` : `options.${option}: ${what}`;
  return new SluiceError('INVALID_SCHEMA', message, {
    ...(option !== undefined && { option }),
    ...(column !== undefined && { column }),
  });
}

function stripPrefix(message: string, option: string): string {
  const p = `options.${option}: `;
  return message.startsWith(p) ? message.slice(p.length) : message;
}

function isPlainObject(v: unknown): v is object {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `'${v}'`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}
