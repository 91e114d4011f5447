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
});
