/**
 * MurmurHash3 x86 32-bit (Austin Appleby's reference `MurmurHash3_x86_32`), the pinned hash of
 * state keys (`KEY_HASH` in layout.ts). Blocks are read little-endian, as on the reference x86.
 * Changing this function changes which partition owns every key of every existing checkpoint.
 */
export function murmur3_x86_32(bytes: Uint8Array, seed = 0, len = bytes.length): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const nblocks = len >>> 2;
  let h = seed >>> 0;

  for (let i = 0; i < nblocks; i++) {
    const o = i << 2;
    let k = (bytes[o] as number) | ((bytes[o + 1] as number) << 8) | ((bytes[o + 2] as number) << 16) | ((bytes[o + 3] as number) << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }

  const tail = nblocks << 2;
  let k1 = 0;
  // The tail's bytes, highest first, each case falling through to the next as in the reference implementation.
  switch (len & 3) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: falls through to the tail's second byte
    case 3:
      k1 ^= (bytes[tail + 2] as number) << 16;
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: falls through to the tail's first byte
    case 2:
      k1 ^= (bytes[tail + 1] as number) << 8;
    case 1:
      k1 ^= bytes[tail] as number;
      k1 = Math.imul(k1, c1);
      k1 = (k1 << 15) | (k1 >>> 17);
      k1 = Math.imul(k1, c2);
      h ^= k1;
  }

  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
