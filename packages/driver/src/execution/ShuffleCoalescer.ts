/**
 * Adaptive coalescing of a stateless shuffle's partitions (Spark's CoalesceShufflePartitions):
 * adjacent small partitions go to one reduce task, up to `targetBytes`. A partition of a
 * round-robin repartition over that size is split at its blocks (its rows need not stay together;
 * rows hashed by key do).
 */
export function coalescePartitions(partitions: readonly Uint8Array[][], targetBytes: number, splittable: boolean): Uint8Array[][] {
  const groups: Uint8Array[][] = [];
  let current: Uint8Array[] = [];
  let bytes = 0;
  const close = (): void => {
    groups.push(current);
    current = [];
    bytes = 0;
  };
  for (const p of partitions) {
    const size = p.reduce((s, b) => s + b.byteLength, 0);
    if (current.length > 0 && bytes + size > targetBytes) close();
    if (splittable && size > targetBytes) {
      for (const b of p) {
        if (current.length > 0 && bytes + b.byteLength > targetBytes) close();
        current.push(b);
        bytes += b.byteLength;
      }
      continue;
    }
    current.push(...p);
    bytes += size;
  }
  groups.push(current);
  return groups;
}
