/**
 * Rows cross the thread boundary as msgpack with records: a row's field names are written once
 * per message, not once per row, and decoding makes objects with a shared shape.
 */
import { Packr } from 'msgpackr';
import type { Row } from '../schema/types.js';

const packr = new Packr({ useRecords: true, moreTypes: false });

export function encodeRows(rows: Row[]): Uint8Array {
  return packr.pack(rows);
}

export function decodeRows(data: Uint8Array): Row[] {
  return data.byteLength === 0 ? [] : (packr.unpack(data) as Row[]);
}
