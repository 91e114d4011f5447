import { describe, expect, it } from 'vitest';
import { checkTail } from './recovery.js';

describe('checkTail', () => {
  it('takes an empty checkpoint, a committed last batch, and one uncommitted batch', () => {
    expect(() => checkTail(undefined, undefined, '/c/offsets')).not.toThrow();
    expect(() => checkTail(3, 3, '/c/offsets')).not.toThrow();
    expect(() => checkTail(4, 3, '/c/offsets')).not.toThrow();
    expect(() => checkTail(0, undefined, '/c/offsets')).not.toThrow();
  });

  it('refuses a commit log ahead of the offset log, or with entries the offset log lacks', () => {
    expect(() => checkTail(1, 2, '/c/offsets')).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets' }));
    expect(() => checkTail(undefined, 0, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', message: expect.stringContaining('offset log is empty') }),
    );
  });

  it('refuses a commit log more than one batch behind the offset log', () => {
    expect(() => checkTail(5, 3, '/c/offsets')).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_CORRUPT', file: '/c/offsets', message: expect.stringContaining('2 batches behind') }),
    );
    expect(() => checkTail(2, undefined, '/c/offsets')).toThrow(expect.objectContaining({ code: 'CHECKPOINT_CORRUPT' }));
  });
});
