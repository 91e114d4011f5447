/**
 * Where a state task's changes go: in pieces to the shard's commit (begun on the first change, so a
 * task that changes nothing commits nothing and leaves the marker where it was), each with the undo
 * prior the writer finds itself. No operator gives a prior, so none can give a wrong one:
 *
 * - a key read through `read` has the value the read returned as its prior;
 * - a key whose value the shard's decoded cache holds has what `cached` recorded when the operator
 *   took it from the cache (the cache holds exactly what the shard holds);
 * - any other key's prior is read from the shard when the task finishes, in one getMany: the shard
 *   holds the state before the batch until the commit, so that read is always right.
 *
 * Keys are known by the Uint8Array an operator read or cached them with (no string per key); a key
 * written under another array is read again at the end, which costs a read and is still exact.
 * Index entries (empty values beside the data, one per time a key expires or fires) take their
 * priors from their rule: an entry added is new, an entry removed existed.
 */
import type { CommitBuilder, CommitResult, ShardStore } from '@sluice/state';

const EMPTY = new Uint8Array(0);
/** How far past the last key found `readPrior` looks before it indexes the keys read. */
const LOOK_AHEAD = 8;

export class StateWriter {
  private builder: CommitBuilder | undefined;
  /**
   * Keys read through `read` and their values (null: absent), in the order read. A kind changes
   * the keys it read mostly in that order, so `next` finds a key's prior by looking a few places
   * ahead; the first change out of order indexes them all in `priors`, by key array.
   */
  private readKeys: Uint8Array[] = [];
  private readValues: Array<Uint8Array | null> = [];
  private next = 0;
  private priors: Map<Uint8Array, Uint8Array | null> | undefined;
  /** The key `cached` recorded last, and its prior: a kind records a cached key just before it changes it. */
  private cachedKey: Uint8Array | undefined;
  private cachedPrior: Uint8Array | null = null;
  /** Changes not yet given to the commit, in order: keys, values, and priors (undefined: read at the flush). */
  private keys: Uint8Array[] = [];
  private values: Array<Uint8Array | null> = [];
  private known: Array<Uint8Array | null | undefined> = [];

  constructor(
    private readonly store: ShardStore,
    private readonly batchId: number,
  ) {}

  /** The shard's values of `keys`, as getMany gives them; each becomes its key's prior. */
  async read(keys: Uint8Array[]): Promise<Array<Uint8Array | undefined>> {
    if (keys.length === 0) return [];
    const values = await this.store.getMany(keys);
    const { priors, readKeys, readValues } = this;
    for (let i = 0; i < keys.length; i++) {
      if (priors !== undefined) priors.set(keys[i]!, values[i] ?? null);
      else {
        readKeys.push(keys[i]!);
        readValues.push(values[i] ?? null);
      }
    }
    return values;
  }

  /** The prior `read` found for `key`, or undefined when it was not read. */
  private readPrior(key: Uint8Array): Uint8Array | null | undefined {
    if (this.priors === undefined) {
      const { readKeys, readValues } = this;
      const end = Math.min(readKeys.length, this.next + LOOK_AHEAD);
      for (let i = this.next; i < end; i++) {
        if (readKeys[i] !== key) continue;
        this.next = i + 1;
        return readValues[i];
      }
      if (readKeys.length === 0) return undefined;
      this.priors = new Map();
      for (let i = 0; i < readKeys.length; i++) this.priors.set(readKeys[i]!, readValues[i]!);
      this.readKeys = [];
      this.readValues = [];
    }
    return this.priors.get(key);
  }

  /** A key's value as the decoded cache holds it (null: absent), recorded before the kind changes the decoded form; the key's next change takes it. */
  cached(key: Uint8Array, value: Uint8Array | null): void {
    this.cachedKey = key;
    this.cachedPrior = value;
  }

  put(key: Uint8Array, value: Uint8Array): void {
    this.change(key, value);
  }

  delete(key: Uint8Array): void {
    this.change(key, null);
  }

  /** A new index entry. */
  addIndex(key: Uint8Array): void {
    this.push(key, EMPTY, null);
  }

  /** An index entry the shard holds. */
  removeIndex(key: Uint8Array): void {
    this.push(key, null, EMPTY);
  }

  /**
   * Begins the shard's commit before the first change, for a kind that is about to change keys
   * whose priors it knows (read or cached): each then goes to the commit at once, not through a
   * list kept until the flush.
   */
  async begin(): Promise<void> {
    this.builder ??= await this.store.beginCommit(this.batchId);
  }

  /**
   * Gives the changes so far to the shard's commit (begun on the first), reading the priors not
   * yet known in one getMany. A kind calls it between its groups of keys, so that it never holds
   * all of its changes at once; `finish` calls it last. Once the commit has begun, a change whose
   * prior is known goes to it at once.
   */
  async flush(): Promise<void> {
    if (this.keys.length === 0) return;
    const { keys, values, known } = this;
    this.keys = [];
    this.values = [];
    this.known = [];
    const unknown: number[] = [];
    for (let i = 0; i < known.length; i++) if (known[i] === undefined) unknown.push(i);
    const read = unknown.length === 0 ? [] : await this.store.getMany(unknown.map((i) => keys[i]!));
    unknown.forEach((i, n) => {
      known[i] = read[n] ?? null;
    });
    this.builder ??= await this.store.beginCommit(this.batchId);
    for (let i = 0; i < keys.length; i++) this.builder.change(keys[i]!, values[i]!, known[i]!);
  }

  /** Commits what was changed; undefined when nothing was. */
  async finish(rowDelta: number, pruneUndoBelow: number): Promise<CommitResult | undefined> {
    await this.flush();
    return this.builder?.finish(rowDelta, pruneUndoBelow);
  }

  private change(key: Uint8Array, value: Uint8Array | null): void {
    let prior: Uint8Array | null | undefined;
    if (key === this.cachedKey) {
      prior = this.cachedPrior;
      this.cachedKey = undefined;
    } else prior = this.readPrior(key);
    // A later change of a key needs no prior of its own: a rollback restores the first (ShardStore.commit).
    this.push(key, value, prior);
  }

  private push(key: Uint8Array, value: Uint8Array | null, prior: Uint8Array | null | undefined): void {
    // The builder copies what it is given: a known change goes to it at once.
    if (this.builder !== undefined && prior !== undefined && this.keys.length === 0) {
      this.builder.change(key, value, prior);
      return;
    }
    this.keys.push(key);
    this.values.push(value);
    this.known.push(prior);
  }
}
