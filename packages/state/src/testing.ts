/**
 * `@sluice/state/testing`: what tests of the packages use and users never need: the in-memory
 * shard store (it runs the same conformance suite as the LevelDB one, shardStoreConformance.ts),
 * its volume, a store wrapper that counts what a batch read and wrote, and a disk filler.
 */
export { MemoryShardStore, MemoryVolume, InstrumentedShardStore, openMemoryShard } from './MemoryShardStore.js';
export type { MemoryShardStats } from './MemoryShardStore.js';
export { fillDisk } from './fillDisk.js';
