import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './timestamps.js';
import type { Schema } from './types.js';
import { createCast, formatDouble, rowToExternal, rowToInternal, toExternal, toInternal } from './values.js';

const JAN_1_2024 = Date.UTC(2024, 0, 1);

describe('toExternal', () => {
  it('turns timestamps into Dates and leaves other values alone', () => {
    const d = toExternal(JAN_1_2024, 'timestamp');
    expect(d).toBeInstanceOf(Date);
    expect((d as Date).toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(toExternal(5, 'long')).toBe(5);
    expect(toExternal('x', 'string')).toBe('x');
  });

  it('keeps null as null, and reads undefined as null', () => {
    expect(toExternal(null, 'timestamp')).toBeNull();
    expect(toExternal(undefined, 'string')).toBeNull();
  });

  it('converts struct fields recursively', () => {
    const type = {
      struct: [
        { name: 'start', type: 'timestamp' as const, nullable: true },
        { name: 'n', type: 'long' as const, nullable: true },
      ],
    };
    const v = toExternal({ start: JAN_1_2024, n: 3 }, type) as Record<string, unknown>;
    expect(v.start).toEqual(new Date(JAN_1_2024));
    expect(v.n).toBe(3);
    expect(toExternal(null, type)).toBeNull();
  });
});

describe('toInternal', () => {
  it('accepts a Date, ISO text or epoch ms for a timestamp', () => {
    expect(toInternal(new Date(JAN_1_2024), 'timestamp')).toBe(JAN_1_2024);
    expect(toInternal('2024-01-01T00:00:00Z', 'timestamp')).toBe(JAN_1_2024);
    expect(toInternal('2024-01-01T02:00:00+02:00', 'timestamp')).toBe(JAN_1_2024);
    expect(toInternal(JAN_1_2024, 'timestamp')).toBe(JAN_1_2024);
    expect(toInternal(String(JAN_1_2024), 'timestamp')).toBe(JAN_1_2024);
    expect(toInternal('not a time', 'timestamp')).toBeNull();
    expect(toInternal(new Date(NaN), 'timestamp')).toBeNull();
  });

  it('gives numbers for numeric types and null for what cannot be one', () => {
    expect(toInternal(7, 'int')).toBe(7);
    expect(toInternal('42', 'long')).toBe(42);
    expect(toInternal(12n, 'long')).toBe(12);
    expect(toInternal(2.9, 'int')).toBe(2);
    expect(toInternal(3_000_000_000, 'int')).toBeNull();
    expect(toInternal('1.5', 'double')).toBe(1.5);
    expect(toInternal({}, 'double')).toBeNull();
  });

  it('turns undefined into null for every type', () => {
    for (const t of ['string', 'int', 'long', 'double', 'boolean', 'timestamp'] as const) {
      expect(toInternal(undefined, t)).toBeNull();
    }
  });

  it('stringifies numbers and Dates for a string column', () => {
    expect(toInternal(5, 'string')).toBe('5');
    expect(toInternal(new Date(JAN_1_2024), 'string')).toBe('2024-01-01T00:00:00.000Z');
  });
});

describe('rows', () => {
  const schema: Schema = [
    { name: 'ts', type: 'timestamp', nullable: true },
    { name: 'id', type: 'string', nullable: true },
    { name: 'v', type: 'double', nullable: true },
  ];

  it('round-trips a row between engine and external form', () => {
    const external = { ts: new Date(JAN_1_2024), id: 'a', v: 1.5 };
    const internal = rowToInternal(external, schema);
    expect(internal).toEqual({ ts: JAN_1_2024, id: 'a', v: 1.5 });
    expect(rowToExternal(internal, schema)).toEqual(external);
  });

  it('fills missing fields with null and drops fields outside the schema', () => {
    expect(rowToInternal({ id: 'a', extra: 1 }, schema)).toEqual({ ts: null, id: 'a', v: null });
  });
});

describe('parseTimestamp', () => {
  it('reads the forms Spark accepts, in UTC when no zone is given', () => {
    expect(parseTimestamp('2024-01-01')).toBe(JAN_1_2024);
    expect(parseTimestamp('2024-01-01 00:00:00')).toBe(JAN_1_2024);
    expect(parseTimestamp('2024-01-01T00:00:00.123456Z')).toBe(JAN_1_2024 + 123);
    expect(parseTimestamp('2023-12-31T19:00:00-05:00')).toBe(JAN_1_2024);
    // Years below 100 are not shifted to the 1900s as Date.UTC would do.
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toBe(new Date('0001-01-01T00:00:00Z').getTime());
  });

  it('rejects dates that do not exist', () => {
    expect(parseTimestamp('2023-02-30')).toBeNull();
    expect(parseTimestamp('2024-13-01')).toBeNull();
    expect(parseTimestamp('2024-01-01T24:00:00')).toBeNull();
  });
});

describe('formatDouble', () => {
  it('prints doubles as Java does', () => {
    expect(formatDouble(1)).toBe('1.0');
    expect(formatDouble(1.5)).toBe('1.5');
    expect(formatDouble(1e7)).toBe('1.0E7');
    expect(formatDouble(1.5e-4)).toBe('1.5E-4');
    expect(formatDouble(NaN)).toBe('NaN');
    expect(formatDouble(-Infinity)).toBe('-Infinity');
  });
});

describe('createCast', () => {
  const cast = (v: unknown, from: Parameters<typeof createCast>[0], to: Parameters<typeof createCast>[1]): unknown => createCast(from, to)!(v);

  it('has no cast between a timestamp and a struct', () => {
    expect(createCast('timestamp', { struct: [] })).toBeUndefined();
  });

  it('casts structs field by field by position', () => {
    const from = { struct: [{ name: 'a', type: 'string' as const, nullable: true }] };
    const to = { struct: [{ name: 'b', type: 'int' as const, nullable: true }] };
    expect(cast({ a: '7' }, from, to)).toEqual({ b: 7 });
    expect(cast({ a: '7' }, from, 'string')).toBe('{7}');
  });
});
