import { describe, expect, it } from 'vitest';
import { SluiceError } from './errors.js';

describe('SluiceError', () => {
  it('round-trips through its plain form with code and culprit', () => {
    const e = new SluiceError('CHECKPOINT_CORRUPT', 'torn file', { file: '/x/offsets/3' });
    const back = SluiceError.fromJSON(structuredClone(e.toJSON()));
    expect(back).toBeInstanceOf(SluiceError);
    expect(back.code).toBe('CHECKPOINT_CORRUPT');
    expect(back.file).toBe('/x/offsets/3');
    expect(back.message).toBe('torn file');
  });

  it('keeps its cause across the worker boundary, as name, message and stack', () => {
    const user = new TypeError('bad input');
    const e = new SluiceError('UDF_FAILED', "udf 'f' threw: bad input", { file: 'file:///u.mjs', cause: user });
    const back = SluiceError.fromJSON(structuredClone(e.toJSON()));
    expect(back.cause).toBeInstanceOf(Error);
    expect(back.cause).toMatchObject({ name: 'TypeError', message: 'bad input', stack: user.stack });
    expect(SluiceError.fromJSON(structuredClone(new SluiceError('UDF_FAILED', 'x', { cause: 'a string' }).toJSON())).cause).toMatchObject({
      message: 'a string',
    });
  });
});
