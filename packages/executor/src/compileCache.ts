/**
 * Generated code kept once per worker: a worker runs the same few (schema, plan) shapes task after
 * task, so each compiles once. Bounded: past 256 keys the cache starts over, which only costs a
 * recompile.
 */
export class CompileCache<V> {
  private readonly entries = new Map<string, V>();

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** The value under `key`, made (and kept) on the first call. */
  of(key: string, make: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = make();
      if (this.entries.size >= 256) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
