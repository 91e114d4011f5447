/**
 * A processor's stored key state (state.ts): values round-trip with their expiries, a key
 * with nothing left is no value, rows count as Spark counts them, expiries drop one by one, and the
 * timer and expiry index ranges never see each other's entries.
 */
import { describe, expect, it } from 'vitest';
import { indexKey, valueHeader, ValueKind } from '@sluice/state';
import { plainPackr } from '../../task/packers.js';
import {
  allExpiries,
  allTimers,
  decodeKeyState,
  dropExpired,
  emptyKeyState,
  encodeKeyState,
  expiriesUpTo,
  leastExpiry,
  mapKeyText,
  stateRows,
  stateRowsIn,
  timersUpTo,
  TTL_BASE,
  ttlIndexKey,
  type KeyStateData,
} from './state.js';

function sample(): KeyStateData {
  const s = emptyKeyState();
  s.timers = [5, 60_000];
  s.vars.set('count', { kind: 'value', entry: [3, null] });
  s.vars.set('seen', {
    kind: 'list',
    items: [
      ['a', 100],
      ['b', 200],
    ],
  });
  s.vars.set('byKey', {
    kind: 'map',
    entries: new Map([
      [mapKeyText('x'), ['x', { n: 1 }, null]],
      [mapKeyText('y'), ['y', { n: 2 }, 150]],
    ]),
  });
  return s;
}

const inRange = (k: Uint8Array, [gte, lt]: [Uint8Array, Uint8Array]): boolean => Buffer.compare(k, gte) >= 0 && Buffer.compare(k, lt) < 0;

describe('processor key state', () => {
  it('round-trips every kind of variable with its expiries and the key timers', () => {
    const s = sample();
    const value = encodeKeyState(s, 4) as Uint8Array;
    expect(valueHeader(value)).toMatchObject({ kind: ValueKind.processor, version: 2, indexTime: undefined, rows: 4 });
    const back = decodeKeyState(value);
    expect(back.timers).toEqual([5, 60_000]);
    expect([...back.vars.entries()]).toEqual([...s.vars.entries()]);
  });

  it('reads a value written before the value header: [1, timers, ...variables]', () => {
    const s = sample();
    const header = valueHeader(encodeKeyState(s, 4) as Uint8Array) as { start: number };
    const payload = plainPackr.unpack((encodeKeyState(s, 4) as Uint8Array).subarray(header.start)) as unknown[];
    const back = decodeKeyState(plainPackr.pack([1, ...payload]));
    expect(back.timers).toEqual([5, 60_000]);
    expect([...back.vars.entries()]).toEqual([...s.vars.entries()]);
    expect(stateRowsIn(plainPackr.pack([1, ...payload]))).toBe(4);
  });

  it('is no value once it holds neither a variable nor a timer', () => {
    expect(encodeKeyState(emptyKeyState(), 0)).toBeNull();
    const timerOnly = emptyKeyState();
    timerOnly.timers = [1];
    expect(encodeKeyState(timerOnly, 0)).not.toBeNull();
  });

  it("counts Spark's rows: one per value and list variable, one per map entry; timers are none", () => {
    expect(stateRows(sample())).toBe(4);
  });

  it('drops expired values one by one and keeps the least expiry of the rest', () => {
    const s = sample();
    expect(leastExpiry(s)).toBe(100);
    const removed = dropExpired(s, (e) => e !== null && e <= 150);
    expect(removed).toBe(2); // list element a, map entry y
    expect(s.vars.get('seen')).toEqual({ kind: 'list', items: [['b', 200]] });
    expect([...(s.vars.get('byKey') as { entries: Map<string, unknown> }).entries.keys()]).toEqual([mapKeyText('x')]);
    expect(leastExpiry(s)).toBe(200);
    expect(dropExpired(s, (e) => e !== null && e <= 1000)).toBe(1);
    expect(s.vars.has('seen')).toBe(false);
  });

  it('refuses a value of another format as STATE_STORE_CORRUPT', () => {
    expect(() => decodeKeyState(new Uint8Array([0x92, 0x05, 0x90]))).toThrow(expect.objectContaining({ code: 'STATE_STORE_CORRUPT' }));
  });

  it('keeps timer entries and expiry entries in ranges of their own', () => {
    const key = new Uint8Array([7]);
    const timer = indexKey(TTL_BASE - 1, 3, key);
    const expiry = ttlIndexKey(0, 3, key);
    expect(inRange(timer, allTimers())).toBe(true);
    expect(inRange(expiry, allTimers())).toBe(false);
    expect(inRange(expiry, allExpiries())).toBe(true);
    expect(inRange(timer, allExpiries())).toBe(false);
    // Up to a time: timers at or before it; a timer range never reaches the expiries, whatever the bound.
    expect(inRange(indexKey(10, 3, key), timersUpTo(10))).toBe(true);
    expect(inRange(indexKey(11, 3, key), timersUpTo(10))).toBe(false);
    expect(inRange(expiry, timersUpTo(Number.MAX_SAFE_INTEGER))).toBe(false);
    expect(inRange(ttlIndexKey(500, 3, key), expiriesUpTo(500))).toBe(true);
    expect(inRange(ttlIndexKey(501, 3, key), expiriesUpTo(500))).toBe(false);
  });
});
