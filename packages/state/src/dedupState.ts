/**
 * A deduplication's state value, one per key seen (the key itself is the data key: its canonical
 * bytes, so the value need not repeat it). Format version 1:
 *
 *   [0x01]                        a key that never expires (dropDuplicates without event time)
 *   [0x01][expiry f64 BE, ms]     a key that expires: dropDuplicates over an event-time column
 *                                 keeps it until that time, dropDuplicatesWithinWatermark until
 *                                 its first event time plus the delay (its index entry evicts it)
 *
 * Values written before this format are msgpack arrays [keyValues, expiry] (first byte 0x92):
 * they still mean "seen", with the expiry their index entry carries.
 */
import { SluiceError } from './errors.js';

export const DEDUP_VALUE_VERSION = 1;
const LEGACY_MSGPACK_PAIR = 0x92;

export function encodeDedupValue(expiryMs: number | null): Uint8Array {
  if (expiryMs === null) return Uint8Array.of(DEDUP_VALUE_VERSION);
  const out = new Uint8Array(9);
  out[0] = DEDUP_VALUE_VERSION;
  new DataView(out.buffer).setFloat64(1, expiryMs);
  return out;
}

/** The expiry a value records: null for none, undefined for a value of the format before this one. */
export function decodeDedupValue(value: Uint8Array): { expiryMs: number | null | undefined } {
  if (value[0] === DEDUP_VALUE_VERSION && value.length === 1) return { expiryMs: null };
  if (value[0] === DEDUP_VALUE_VERSION && value.length === 9) return { expiryMs: new DataView(value.buffer, value.byteOffset, 9).getFloat64(1) };
  if (value[0] === LEGACY_MSGPACK_PAIR) return { expiryMs: undefined };
  throw new SluiceError(
    'STATE_STORE_CORRUPT',
    `a deduplication state value has format ${String(value[0])} and ${value.length} bytes, which this Sluice does not know`,
  );
}
