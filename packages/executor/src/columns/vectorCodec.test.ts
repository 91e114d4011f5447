import { ByteBuffer } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { readerOf, readVector, writeVector } from './vectorCodec.js';
import { valueAt, type Vector } from './vectors.js';

const values = (v: Vector): unknown[] => Array.from({ length: v.length }, (_, i) => valueAt(v, i));

function roundTrip(v: Vector, idx: Int32Array | null, count: number): Vector {
  const out = new ByteBuffer(8);
  writeVector(out, v, idx, count);
  writeVector(out, v, idx, count);
  const r = readerOf(out.bytes());
  const first = readVector(r, count);
  expect(values(readVector(r, count))).toEqual(values(first));
  expect(r.pos).toBe(out.pos);
  return first;
}

describe('column vectors in bytes', () => {
  const vectors: Vector[] = [
    { kind: 'num', length: 4, values: Float64Array.of(1.5, -0, 0, Number.NaN), nulls: Uint8Array.of(0, 0, 1, 0) },
    { kind: 'bool', length: 4, values: Uint8Array.of(1, 0, 1, 0), nulls: null },
    { kind: 'str', length: 4, dict: ['x', 'ÿ€😀', 'unused', 'y'.repeat(40)], codes: Int32Array.of(1, 0, 3, 0), nulls: Uint8Array.of(0, 1, 0, 0) },
    { kind: 'any', length: 4, values: [{ start: 1, end: 2 }, null, [1, 2], 'z'] },
  ];

  it('read back every kind, with nulls, whole or the rows picked', () => {
    for (const v of vectors) {
      expect(values(roundTrip(v, null, 4))).toEqual(values(v));
      const idx = Int32Array.of(0, 2, 3);
      expect(values(roundTrip(v, idx, 3))).toEqual([0, 2, 3].map((i) => valueAt(v, i)));
    }
  });

  it('carry only the dictionary entries the rows use', () => {
    const got = roundTrip(vectors[2]!, Int32Array.of(2, 3), 2);
    expect(got.kind === 'str' && got.dict).toEqual(['y'.repeat(40), 'x']);
    const nulls = roundTrip({ kind: 'str', length: 2, dict: [], codes: new Int32Array(2), nulls: Uint8Array.of(1, 1) }, null, 2);
    expect(values(nulls)).toEqual([null, null]);
  });

  it('refuse bytes that are not a vector', () => {
    const out = new ByteBuffer(8);
    writeVector(out, vectors[2]!, null, 4);
    const bytes = out.bytes();
    expect(() => readVector(readerOf(bytes.subarray(0, bytes.length - 1)), 4)).toThrow(RangeError);
    expect(() => readVector(readerOf(Uint8Array.of(9, 0)), 1)).toThrow(/kind 9/);
    const badCode = bytes.slice();
    badCode[badCode.length - 4] = 99;
    expect(() => readVector(readerOf(badCode), 4)).toThrow(/past the dictionary/);
  });
});
