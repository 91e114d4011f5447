/**
 * A deduplication's state value, one per key seen (the key itself is the data key: its canonical
 * bytes, so the value need not repeat it): the state value header (stateValue.ts) of kind `dedup`
 * and no payload. Its index time is the key's expiry, when it has one: dropDuplicates over an
 * event-time column keeps a key until that time, dropDuplicatesWithinWatermark until its first
 * event time plus the delay (its index entry evicts it).
 *
 * Values of the formats before the header still read:
 *   [0x01]                        a key that never expires
 *   [0x01][expiry f64 BE, ms]     a key that expires
 *   msgpack [keyValues, expiry]   (first byte 0x92): "seen", with the expiry its index entry carries
 */
import { corruptStateValue, expectValueHeader, ValueKind, withValueHeader } from './stateValue.js';

export const DEDUP_VALUE_VERSION = 2;
const V1 = 1;
const LEGACY_MSGPACK_PAIR = 0x92;
const EMPTY = new Uint8Array(0);

export function encodeDedupValue(expiryMs: number | null): Uint8Array {
  return withValueHeader(ValueKind.dedup, DEDUP_VALUE_VERSION, expiryMs, 1, EMPTY);
}

/** The expiry a value records: null for none, undefined for a value that does not say (the oldest format). */
export function decodeDedupValue(value: Uint8Array): { expiryMs: number | null | undefined } {
  const h = expectValueHeader(value, ValueKind.dedup, DEDUP_VALUE_VERSION, 'deduplication state');
  if (h !== undefined) return { expiryMs: h.indexTime ?? null };
  if (value[0] === V1 && value.length === 1) return { expiryMs: null };
  if (value[0] === V1 && value.length === 9) return { expiryMs: new DataView(value.buffer, value.byteOffset, 9).getFloat64(1) };
  if (value[0] === LEGACY_MSGPACK_PAIR) return { expiryMs: undefined };
  throw corruptStateValue('deduplication state', `has format ${String(value[0])} and ${value.length} bytes, which this Sluice does not know`);
}
