import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/state';
import { parseDataType, parseSchema, schemaToDDL } from './schema.js';
import type { Schema } from './types.js';

function schemaError(fn: () => unknown): SluiceError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SluiceError);
    expect((e as SluiceError).code).toBe('INVALID_SCHEMA');
    return e as SluiceError;
  }
  throw new Error('expected INVALID_SCHEMA');
}

describe('parseSchema (DDL)', () => {
  it('parses the seed schema with case-insensitive types and aliases', () => {
    expect(parseSchema('event_time TIMESTAMP, id string, value Double')).toEqual([
      { name: 'event_time', type: 'timestamp', nullable: true },
      { name: 'id', type: 'string', nullable: true },
      { name: 'value', type: 'double', nullable: true },
    ]);
    expect(parseSchema('a INTEGER, b BIGINT, c FLOAT, d boolean, e int, f long').map((f) => f.type)).toEqual([
      'int',
      'long',
      'double',
      'boolean',
      'int',
      'long',
    ]);
  });

  it('parses nested structs in both field forms, NOT NULL and back-quoted names', () => {
    expect(parseSchema('s STRUCT<a: INT, b STRUCT<c STRING NOT NULL>> not null, `my col` LONG')).toEqual([
      {
        name: 's',
        type: {
          struct: [
            { name: 'a', type: 'int', nullable: true },
            { name: 'b', type: { struct: [{ name: 'c', type: 'string', nullable: false }] }, nullable: true },
          ],
        },
        nullable: false,
      },
      { name: 'my col', type: 'long', nullable: true },
    ]);
  });

  it('reads the text with the SQL lexer: comments are skipped, STRUCT<> is an empty struct, and names keep the DDL characters', () => {
    expect(parseSchema('a INT, -- the key\n b /* its value */ STRING')).toEqual([
      { name: 'a', type: 'int', nullable: true },
      { name: 'b', type: 'string', nullable: true },
    ]);
    expect(parseSchema('s STRUCT<>')).toEqual([{ name: 's', type: { struct: [] }, nullable: true }]);
    expect(parseSchema('prix_é DOUBLE, a$b INT, 1d LONG').map((f) => [f.name, f.type])).toEqual([
      ['prix_é', 'double'],
      ['a$b', 'int'],
      ['1d', 'long'],
    ]);
  });

  it('a lexer error is INVALID_SCHEMA with the option, never a SQL syntax error', () => {
    const e = schemaError(() => parseSchema('a INT, b "STRING', 'mySchema'));
    expect(e.option).toBe('mySchema');
    expect(e.message).toBe(`options.mySchema: unclosed string literal at position 9 in 'a INT, b "STRING'`);
  });

  it('round-trips through schemaToDDL', () => {
    const ddl = 'event_time TIMESTAMP NOT NULL, s STRUCT<a: INT, `b c`: STRUCT<d: BOOLEAN NOT NULL>>, `x``y` DOUBLE';
    const schema = parseSchema(ddl);
    expect(schemaToDDL(schema)).toBe(ddl);
    expect(parseSchema(schemaToDDL(schema))).toEqual(schema);
  });

  it('names the bad type, its column and position', () => {
    const e = schemaError(() => parseSchema('event_time TIMESTAMP, id STRNG'));
    expect(e.option).toBe('schema');
    expect(e.column).toBe('id');
    expect(e.message).toContain("'STRNG'");
    expect(e.message).toContain('position 25');
    expect(schemaError(() => parseSchema('s STRUCT<a: INT, b: DECIMAL>', 'mySchema')).column).toBe('s.b');
    expect(schemaError(() => parseSchema('s STRUCT<a: INT, b: DECIMAL>', 'mySchema')).option).toBe('mySchema');
  });

  it.each([
    ['', 'no columns'],
    ['a INT,', 'end of input'],
    ['a', 'expected a type'],
    ['a INT b STRING', "unexpected 'b'"],
    ['s STRUCT<a INT', "expected '>'"],
    ['a INT NOT', 'expected NULL'],
    ['a INT; DROP', "unexpected character ';'"],
    ['`a INT', 'unclosed backticked name at position 0'],
    ['`` INT', 'empty back-quoted name at position 0'],
    ['a INT /* note', 'unclosed comment at position 6'],
    ["a 'INT'", "expected a type for column 'a', found ''INT'' at position 2"],
    ['a.b INT', "expected a type for column 'a', found '.' at position 1"],
    ['a INT, A STRING', 'duplicate column'],
    ['s STRUCT<x INT, x INT>', "duplicate column 's.x'"],
  ])('rejects %j', (ddl, fragment) => {
    expect(schemaError(() => parseSchema(ddl)).message).toContain(fragment);
  });
});

describe('parseSchema (object and field-list forms)', () => {
  it('reads an object, a nested object being a struct', () => {
    expect(parseSchema({ event_time: 'timestamp', id: 'STRING not null', s: { a: 'int', t: 'struct<b: long>' } })).toEqual([
      { name: 'event_time', type: 'timestamp', nullable: true },
      { name: 'id', type: 'string', nullable: false },
      {
        name: 's',
        type: {
          struct: [
            { name: 'a', type: 'int', nullable: true },
            { name: 't', type: { struct: [{ name: 'b', type: 'long', nullable: true }] }, nullable: true },
          ],
        },
        nullable: true,
      },
    ]);
  });

  it('rejects bad object values with the column path', () => {
    const e = schemaError(() => parseSchema({ s: { a: 'integr' } }));
    expect(e.column).toBe('s.a');
    expect(e.message).toContain("'integr'");
    expect(schemaError(() => parseSchema({ a: 5 } as never)).column).toBe('a');
    expect(schemaError(() => parseSchema({})).message).toContain('no columns');
  });

  it('validates and normalizes an already-parsed schema', () => {
    const s = [
      { name: 'a', type: 'INT' },
      { name: 'b', type: { struct: [{ name: 'c', type: 'string', nullable: false }] } },
    ];
    expect(parseSchema(s as unknown as Schema)).toEqual([
      { name: 'a', type: 'int', nullable: true },
      { name: 'b', type: { struct: [{ name: 'c', type: 'string', nullable: false }] }, nullable: true },
    ]);
    expect(schemaError(() => parseSchema([{ name: '', type: 'int', nullable: true }])).message).toContain('name');
    expect(schemaError(() => parseSchema([{ name: 'a', type: 'number', nullable: true }] as never)).column).toBe('a');
    expect(
      schemaError(() =>
        parseSchema([
          { name: 'a', type: 'int', nullable: true },
          { name: 'a', type: 'long', nullable: true },
        ]),
      ).message,
    ).toContain("duplicate column 'a'");
  });
});

describe('parseDataType', () => {
  it('parses atomic and struct type names', () => {
    expect(parseDataType('Timestamp')).toBe('timestamp');
    expect(parseDataType('bigint')).toBe('long');
    expect(parseDataType('struct<a:int>')).toEqual({ struct: [{ name: 'a', type: 'int', nullable: true }] });
  });

  it('rejects unknown names with INVALID_SCHEMA and no option', () => {
    const e = schemaError(() => parseDataType('varchar'));
    expect(e.option).toBeUndefined();
    expect(e.message).toContain("'varchar'");
    expect(schemaError(() => parseDataType('int int')).message).toContain("unexpected 'int'");
  });
});
