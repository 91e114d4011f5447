/**
 * Rows cross the thread boundary as msgpack with records: a row's field names are written once
 * per message, not once per row, and decoding makes objects with a shared shape.
 */
import type { Row } from '../schema/types.js';
import { recordPackr as packr } from './packers.js';

export function encodeRows(rows: Row[]): Uint8Array {
  return packr.pack(rows);
}

export function decodeRows(data: Uint8Array): Row[] {
  return data.byteLength === 0 ? [] : (packr.unpack(data) as Row[]);
}
