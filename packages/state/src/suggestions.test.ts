import { describe, expect, it } from 'vitest';
import { SluiceError } from './errors.js';
import { didYouMean, levenshtein, quoteId, suggest } from './suggestions.js';

describe('suggestions', () => {
  it('measures the edit distance', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(levenshtein('url', 'url')).toBe(0);
  });

  it('orders candidates by distance, ties in their order, at most five, ignoring case', () => {
    expect(suggest('ulr', ['id', 'url', 'uri', 'value'])).toEqual(['url', 'uri', 'id', 'value']);
    expect(suggest('ID2', ['v', 'id', 'n'])).toEqual(['id', 'v', 'n']);
    expect(suggest('x', ['a', 'b', 'c', 'd', 'e', 'f', 'x1'])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(suggest('maxFilePerTrigger', ['path', 'maxFilesPerTrigger', 'maxBytesPerTrigger'], 2)).toEqual(['maxFilesPerTrigger', 'maxBytesPerTrigger']);
    expect(suggest('a', [])).toEqual([]);
  });

  it("words them as Spark's UNRESOLVED_COLUMN.WITH_SUGGESTION, names quoted part by part", () => {
    expect(didYouMean(['url', 'window.start'])).toBe(' Did you mean one of the following? [`url`, `window`.`start`].');
    expect(didYouMean([])).toBe('');
    expect(quoteId('a`b')).toBe('`a``b`');
  });

  it('travel with a SluiceError across the worker boundary', () => {
    const e = new SluiceError('UNRESOLVED_COLUMN', 'x', { column: 'ulr', suggestions: ['url', 'uri'] });
    expect(SluiceError.fromJSON(structuredClone(e.toJSON())).suggestions).toEqual(['url', 'uri']);
  });
});
