/**
 * The JSON column scanner against the row reader on the same text: every type, every parse mode,
 * the corrupt-record column, and lines the scanner must hand over (escapes, nesting, invalid JSON,
 * values that do not convert). The row reader is the reference.
 */
import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/state';
import type { ParseMode, ReadOptions } from '../task/messages.js';
import type { Row, Schema } from '../schema/types.js';
import { parseRecords } from './readers.js';
import { compileJsonColumnReader } from './jsonColumns.js';
import { rowsFromBatch, type ColumnBatch } from '../columns/vectors.js';
import { kDefaultReadOptions } from './options.js';
import { parseIsoTimestamp } from '../schema/timestamps.js';
import { SCHEMA as EXPR_SCHEMA } from '../expressions/exprTestKit.js';

/** The expression tests' columns of every atomic type. */
const SCHEMA: Schema = EXPR_SCHEMA.filter((f) => typeof f.type === 'string');
const WITH_CORRUPT: Schema = [...SCHEMA, { name: '_corrupt_record', type: 'string', nullable: true }];

const TIMES = [
  '2024-01-02T03:04',
  '2024-01-02 03:04:05.6',
  '2024-01-02t03:04:05.123456789z',
  '2024-01-02T03:04:05.1234567890Z',
  '2024-01-02T05:04:05+02',
  '2024-01-02T00:34:05-0230',
  '2024-01-02T00:34:05-02:30',
  '2024-02-29',
  '2023-02-29',
  '2024-13-01',
  '2024-01-02T24:00',
  '2024-01-0',
  '2024-01-02T03:0',
  '+2024-01-02',
  '2024-01-02 03:04:05 UTC',
];

const LINES = [
  '{"id":"k1","v":1.5,"n":7,"i":-3,"ts":"2024-01-01T00:00:00.000Z","ok":true}',
  '  { "id" : "k2" , "v" : -0 , "n" : -0, "ts": 1700000000123.9 , "ok" : false }  ',
  '{"id":"esc\\"aped\\u00e9\\n","v":"NaN","n":12345678901234567,"extra":{"deep":[1,2,{"x":3}]}}',
  '{"n":9007199254740993}',
  '{"id":"😀 ä","i":2147483648}',
  '{"id":1.50,"v":1e3,"n":1.0,"i":2E1,"ts":-1}',
  '{"id":true,"ok":"yes"}',
  '{"ts":"not a time"}',
  '{"id":"dup","id":"last"}',
  '{}',
  '',
  '   ',
  '{"id":"unterminated}',
  '[1,2]',
  'null',
  '{"v":01}',
  '{"v":.5}',
  '{"v":1.}',
  '{"id":"a"} trailing',
  '{"id":"a",}',
  '{"\\u0069d":"key with an escape"}',
  '{"id":"tab\tinside"}',
  '{"__proto__":"p","constructor":"c","id":"proto"}',
  '{"v":null,"n":null,"id":null}',
  '{"v":-1.25e-300,"n":-9007199254740991}',
  ...TIMES.map((t) => `{"ts":"${t}","id":"t"}`),
  '{"ts":"2024-01-02T03:04:05Z","ts":"1999-12-31"}',
];
const TEXT = `\ufeff${LINES.join('\n')}\n`;

function columns(schema: Schema, options: ReadOptions, text: string, maxRows: number): { rows: Row[]; total: number; batches: number } {
  const batches: ColumnBatch[] = [];
  const total = compileJsonColumnReader(schema, options)(text, 'f.json', maxRows, (b) => batches.push(b));
  return { rows: batches.flatMap((b) => rowsFromBatch(b, schema)), total, batches: batches.length };
}

describe('the ISO timestamp fast path inside a longer text', () => {
  it('gives the value of the text alone, or NaN (then the scanner converts the text itself)', () => {
    for (const t of TIMES) {
      for (const after of ['"', '9', '99:00', 'Z', '.5']) {
        const s = `"${t}${after}`;
        const inPlace = parseIsoTimestamp(s, 1, 1 + t.length);
        const alone = parseIsoTimestamp(t);
        if (!Number.isNaN(inPlace)) expect(inPlace, `${t} before ${after}`).toBe(alone);
        if (after === '"') expect(Object.is(inPlace, alone), t).toBe(true);
      }
    }
  });
});

describe('the JSON column scanner reads what the row reader reads', () => {
  for (const mode of ['PERMISSIVE', 'DROPMALFORMED'] as ParseMode[]) {
    for (const schema of [SCHEMA, WITH_CORRUPT]) {
      it(`${mode}${schema === WITH_CORRUPT ? ' with _corrupt_record' : ''}`, () => {
        const options = { ...kDefaultReadOptions, mode };
        const want = parseRecords('json', TEXT, schema, options, 'f.json');
        const got = columns(schema, options, TEXT, 4);
        expect(got.rows).toEqual(want);
        expect(got.total).toBe(want.length);
        expect(got.batches).toBe(Math.ceil(want.length / 4));
        // -0 stays -0 where the row reader keeps it.
        expect(got.rows.map((r) => Object.is(r.v, -0))).toEqual(want.map((r) => Object.is(r.v, -0)));
      });
    }
  }

  it('FAILFAST: the same error at the same line', () => {
    const options = { ...kDefaultReadOptions, mode: 'FAILFAST' as ParseMode };
    const err = (f: () => unknown): SluiceError => {
      try {
        f();
      } catch (e) {
        return e as SluiceError;
      }
      throw new Error('expected an error');
    };
    const want = err(() => parseRecords('json', TEXT, SCHEMA, options, 'f.json'));
    const got = err(() => columns(SCHEMA, options, TEXT, 100));
    expect(got).toBeInstanceOf(SluiceError);
    expect(got.toJSON()).toEqual(want.toJSON());
  });

  it('reads only the schema fields, and a struct column through the row reader', () => {
    const narrow: Schema = [{ name: 'n', type: 'long', nullable: true }];
    expect(columns(narrow, kDefaultReadOptions, TEXT, 100).rows).toEqual(parseRecords('json', TEXT, narrow, kDefaultReadOptions, 'f.json'));
    const nested: Schema = [{ name: 'extra', type: { struct: [{ name: 'deep', type: 'string', nullable: true }] }, nullable: true }, ...SCHEMA];
    expect(columns(nested, kDefaultReadOptions, TEXT, 100).rows).toEqual(parseRecords('json', TEXT, nested, kDefaultReadOptions, 'f.json'));
  });
});
