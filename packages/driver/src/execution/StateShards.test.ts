import { describe, expect, it } from 'vitest';
import { firstStateSlot } from './StateShards.js';

describe('firstStateSlot', () => {
  it('takes the slot holding the fewest of the other queries shards, the lowest on a tie', () => {
    expect(firstStateSlot([], 2)).toBe(0);
    expect(firstStateSlot([0], 2)).toBe(1);
    expect(firstStateSlot([0, 1], 2)).toBe(0);
    expect(firstStateSlot([0, 1, 0], 3)).toBe(2);
    expect(firstStateSlot([2, 2, 0, 1, 1], 3)).toBe(0);
  });
});
