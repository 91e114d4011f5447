/**
 * An open-addressing hash table from key bytes to a row of number cells, with no JS object per
 * key: keys sit in one byte arena, cells in one Float64Array, null flags in one Uint8Array, and
 * the few values that are not numbers (aggCells.ts's object buffers) in one array. It holds a
 * shard's decoded aggregation state between batches (aggregate/task.ts), at about 60 bytes a
 * key for the seed query against ~300 for a Map of arrays, and merges a state task's partials.
 *
 * Entry numbers stay valid until `compact` (growth keeps them); removed entries leave tombstones
 * that `compact` clears.
 */

export class KeyTable {
  /** Live entries. */
  size = 0;
  /** Entries allocated, removed ones included; entry numbers are below this. */
  count = 0;
  cells: Float64Array;
  nulls: Uint8Array;
  /** `objWidth` slots per entry. */
  objects: unknown[];
  private arena: Uint8Array;
  private used = 0;
  private keyOff: Int32Array;
  private keyLen: Int32Array;
  private hashes: Int32Array;
  private live: Uint8Array;
  /** 0 empty, -1 removed, else entry + 1. */
  private slots: Int32Array;
  private mask: number;

  constructor(
    readonly width: number,
    readonly nullWidth: number,
    asked = 1024,
    readonly objWidth = 0,
  ) {
    const capacity = powerOfTwo(asked);
    this.cells = new Float64Array(capacity * width);
    this.nulls = new Uint8Array(capacity * nullWidth);
    this.objects = [];
    this.arena = new Uint8Array(capacity * 24);
    this.keyOff = new Int32Array(capacity);
    this.keyLen = new Int32Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.live = new Uint8Array(capacity);
    this.slots = new Int32Array(capacity * 2);
    this.mask = this.slots.length - 1;
  }

  /** FNV-1a over bytes[off, off + len), mixed; callers hash once and pass it to find and insert. */
  static hash(bytes: Uint8Array, off: number, len: number): number {
    let h = 0x811c9dc5;
    for (let i = off; i < off + len; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    return h ^ (h >>> 13);
  }

  /** The entry of the key, or -1. */
  find(bytes: Uint8Array, off: number, len: number, h: number): number {
    let s = h & this.mask;
    for (;;) {
      const e = this.slots[s]!;
      if (e === 0) return -1;
      if (e > 0) {
        const g = e - 1;
        if (this.hashes[g] === h && this.keyLen[g] === len && this.sameKey(g, bytes, off, len)) return g;
      }
      s = (s + 1) & this.mask;
    }
  }

  private sameKey(g: number, bytes: Uint8Array, off: number, len: number): boolean {
    const a = this.arena;
    const o = this.keyOff[g]!;
    for (let i = 0; i < len; i++) if (a[o + i] !== bytes[off + i]) return false;
    return true;
  }

  /** Adds a key known to be absent; its cells and null flags start at 0. */
  insert(bytes: Uint8Array, off: number, len: number, h: number): number {
    if (this.count === this.keyOff.length) this.grow(this.count * 2);
    if (this.used + len > this.arena.length) {
      const next = new Uint8Array(Math.max(this.used + len, this.arena.length * 2));
      next.set(this.arena.subarray(0, this.used));
      this.arena = next;
    }
    const g = this.count++;
    const arena = this.arena;
    for (let i = 0; i < len; i++) arena[this.used + i] = bytes[off + i]!;
    this.keyOff[g] = this.used;
    this.keyLen[g] = len;
    this.used += len;
    this.hashes[g] = h;
    this.live[g] = 1;
    this.cells.fill(0, g * this.width, (g + 1) * this.width);
    this.nulls.fill(0, g * this.nullWidth, (g + 1) * this.nullWidth);
    for (let o = 0; o < this.objWidth; o++) this.objects[g * this.objWidth + o] = null;
    this.place(g, h);
    this.size++;
    return g;
  }

  /**
   * Adds an entry without a key, which `find` never gives and `compact` drops: cells for values
   * held elsewhere (a session window's sessions, sessionWindow/task.ts). Its cells start at 0.
   */
  append(): number {
    if (this.count === this.keyOff.length) this.grow(this.count * 2);
    const g = this.count++;
    this.keyOff[g] = this.used;
    this.keyLen[g] = 0;
    this.live[g] = 0;
    this.cells.fill(0, g * this.width, (g + 1) * this.width);
    this.nulls.fill(0, g * this.nullWidth, (g + 1) * this.nullWidth);
    for (let o = 0; o < this.objWidth; o++) this.objects[g * this.objWidth + o] = null;
    return g;
  }

  /** Entry g of `other` (a table with the same hash), found here: -1 if absent. */
  findFrom(other: KeyTable, g: number): number {
    return this.find(other.arena, other.keyOff[g]!, other.keyLen[g]!, other.hashes[g]!);
  }

  /** Entry p of `from` (a table of the same widths) as the cells, null flags and objects of entry g. */
  copyValues(g: number, from: KeyTable, p: number): void {
    this.cells.set(from.cells.subarray(p * from.width, (p + 1) * from.width), g * this.width);
    this.nulls.set(from.nulls.subarray(p * from.nullWidth, (p + 1) * from.nullWidth), g * this.nullWidth);
    for (let o = 0; o < this.objWidth; o++) this.objects[g * this.objWidth + o] = from.objects[p * from.objWidth + o];
  }

  /** Entry g of `other`, known to be absent, added here. */
  insertFrom(other: KeyTable, g: number): number {
    return this.insert(other.arena, other.keyOff[g]!, other.keyLen[g]!, other.hashes[g]!);
  }

  remove(g: number): void {
    if (this.live[g] === 0) return;
    const h = this.hashes[g]!;
    let s = h & this.mask;
    while (this.slots[s] !== g + 1) s = (s + 1) & this.mask;
    this.slots[s] = -1;
    this.live[g] = 0;
    this.size--;
  }

  isLive(g: number): boolean {
    return this.live[g] === 1;
  }

  /** The key of entry g, as a view: valid until the next insert. */
  keyView(g: number): Uint8Array {
    return this.arena.subarray(this.keyOff[g]!, this.keyOff[g]! + this.keyLen[g]!);
  }

  /** A copy of the key of entry g. */
  key(g: number): Uint8Array {
    return this.arena.slice(this.keyOff[g]!, this.keyOff[g]! + this.keyLen[g]!);
  }

  /** Renumbers the live entries densely, dropping tombstones and dead key bytes. */
  compact(): void {
    if (this.size === this.count && this.used === this.liveBytes()) return;
    const fresh = new KeyTable(this.width, this.nullWidth, Math.max(1024, this.size * 2), this.objWidth);
    for (let g = 0; g < this.count; g++) if (this.live[g] === 1) fresh.copyValues(fresh.insertFrom(this, g), this, g);
    Object.assign(this, fresh);
  }

  private liveBytes(): number {
    let b = 0;
    for (let g = 0; g < this.count; g++) if (this.live[g] === 1) b += this.keyLen[g]!;
    return b;
  }

  clear(): void {
    Object.assign(this, new KeyTable(this.width, this.nullWidth, undefined, this.objWidth));
  }

  /** Empties the table but keeps its arrays, for reuse at the same size. */
  reset(): void {
    this.slots.fill(0);
    this.size = 0;
    this.count = 0;
    this.used = 0;
    this.objects.length = 0;
  }

  /** Bytes of the arrays behind the table (an object slot: 8, and a string its UTF-16 units). */
  get memoryUsedBytes(): number {
    let objects = this.objects.length * 8;
    for (const v of this.objects) if (typeof v === 'string') objects += 2 * v.length;
    return (
      this.arena.byteLength +
      this.cells.byteLength +
      this.nulls.byteLength +
      this.keyOff.byteLength * 3 +
      this.live.byteLength +
      this.slots.byteLength +
      objects
    );
  }

  private place(g: number, h: number): void {
    let s = h & this.mask;
    while (this.slots[s]! > 0) s = (s + 1) & this.mask;
    this.slots[s] = g + 1;
  }

  private grow(asked: number): void {
    const capacity = powerOfTwo(asked);
    const widen = <T extends Int32Array | Uint8Array | Float64Array>(a: T, n: number): T => {
      const next = new (a.constructor as new (n: number) => T)(n);
      next.set(a);
      return next;
    };
    this.keyOff = widen(this.keyOff, capacity);
    this.keyLen = widen(this.keyLen, capacity);
    this.hashes = widen(this.hashes, capacity);
    this.live = widen(this.live, capacity);
    this.cells = widen(this.cells, capacity * this.width);
    this.nulls = widen(this.nulls, capacity * this.nullWidth);
    // Load factor at most 1/2; tombstones go.
    this.slots = new Int32Array(capacity * 2);
    this.mask = this.slots.length - 1;
    for (let g = 0; g < this.count; g++) if (this.live[g] === 1) this.place(g, this.hashes[g]!);
  }
}

/**
 * The least power of two at or above n: the slots are probed `(s + 1) & mask`, which visits every
 * slot only when their count is a power of two (with another count, a compaction's 2 × live
 * entries say, the probe cycles through a part of them and an insert into a full part never ends).
 */
function powerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
