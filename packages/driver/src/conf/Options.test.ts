import { describe, expect, it } from 'vitest';
import { Options } from './Options.js';

describe('Options.rejectUnknown', () => {
  it('passes when every option was read, whatever its case', () => {
    const o = new Options([['MaxFilesPerTrigger', 2]]);
    o.take('maxFilesPerTrigger');
    expect(() => o.rejectUnknown('json source')).not.toThrow();
  });

  it('suggests the options the format read, closest first, as the format spells them', () => {
    const o = new Options([['maxFilePerTrigger', 2]]);
    for (const k of ['path', 'maxFilesPerTrigger', 'maxBytesPerTrigger', 'latestFirst']) o.take(k);
    try {
      o.rejectUnknown('json source');
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({
        code: 'UNKNOWN_OPTION',
        option: 'maxFilePerTrigger',
        suggestions: ['maxFilesPerTrigger', 'maxBytesPerTrigger', 'latestFirst', 'path'],
      });
      expect((e as Error).message).toBe(
        'unknown option maxFilePerTrigger for json source. Did you mean one of the following? [`maxFilesPerTrigger`, `maxBytesPerTrigger`, `latestFirst`, `path`].',
      );
    }
  });

  it('suggests among the allowed options when it is given them', () => {
    const o = new Options([['tabel', 'x']]);
    expect(() => o.rejectUnknown('sqlite sink', ['path', 'table', 'mergeKeys'])).toThrow(
      expect.objectContaining({
        code: 'UNKNOWN_OPTION',
        suggestions: ['table', 'path', 'mergeKeys'],
        message: expect.stringContaining('Known options: path, table, mergeKeys.'),
      }),
    );
  });
});
