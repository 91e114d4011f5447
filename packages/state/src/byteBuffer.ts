/**
 * The one growable byte buffer of the packages: bytes appended at `pos`, the buffer doubled (and
 * its view remade) when a write needs more room. Writers call `ensure(n)` before writing `n`
 * bytes through `buf` and `view`; `bytes()` is a view of what was written, valid until the next
 * write past the end.
 */
export class ByteBuffer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;

  constructor(capacity = 1 << 12) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  /** Room for `n` more bytes at `pos`. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.pos + n, this.buf.length * 2));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  append(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** The bytes written, as a view (valid until the next write that grows the buffer). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}
