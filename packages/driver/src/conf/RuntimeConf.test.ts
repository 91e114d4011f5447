import { describe, expect, expectTypeOf, it } from 'vitest';
import { CONF_KEYS } from '@sluice/state';
import { RuntimeConf, type PoolConf } from './RuntimeConf.js';

describe('RuntimeConf', () => {
  it('has the documented defaults', () => {
    const c = new RuntimeConf();
    expect(c.get('sluice.sql.shuffle.partitions')).toBe(200);
    expect(c.get('sluice.sql.streaming.stateStore.partitions')).toBeUndefined();
    expect(c.get('sluice.sql.streaming.stateStore.keyGroups')).toBe(4096);
    expect(c.get('sluice.task.maxFailures')).toBe(4);
    expect(c.get('sluice.scheduler.listenerbus.eventqueue.capacity')).toBe(10_000);
    expect(c.get('sluice.sql.streaming.minBatchesToRetain')).toBe(100);
    expect(c.get('sluice.executor.cores')).toBeGreaterThanOrEqual(1);
  });

  it("types each key's value from the conf table (checked by pnpm typecheck)", () => {
    const c = new RuntimeConf({ 'sluice.sql.shuffle.partitions': 'auto', 'sluice.scheduler.pools': { p: { weight: 2 } } });
    expectTypeOf(c.get(CONF_KEYS.shufflePartitions)).toEqualTypeOf<number | 'auto'>();
    expectTypeOf(c.get(CONF_KEYS.stateStorePartitions)).toEqualTypeOf<number | undefined>();
    expectTypeOf(c.get(CONF_KEYS.multipleWatermarkPolicy)).toEqualTypeOf<'min' | 'max'>();
    expectTypeOf(c.get(CONF_KEYS.stateStoreChangelog)).toEqualTypeOf<boolean>();
    expectTypeOf(c.get(CONF_KEYS.schedulerPools)).toEqualTypeOf<Record<string, PoolConf>>();
    // A spark.* alias is a plain string: its value is unknown until checked.
    expectTypeOf(c.get('spark.sql.shuffle.partitions')).toEqualTypeOf<unknown>();
    expect(c.get(CONF_KEYS.shufflePartitions)).toBe('auto');
    expect(c.get(CONF_KEYS.schedulerPools)).toEqual({ p: { schedulingMode: 'FIFO', weight: 2, minShare: 0 } });
  });

  it('accepts spark.* aliases and string values, as a Spark snippet passes them', () => {
    const c = new RuntimeConf({ 'spark.sql.shuffle.partitions': '100' });
    c.set('spark.sql.streaming.stateStore.partitions', '50');
    expect(c.get('sluice.sql.shuffle.partitions')).toBe(100);
    expect(c.get('spark.sql.streaming.stateStore.partitions')).toBe(50);
    c.set('sluice.sql.shuffle.partitions', 'auto');
    expect(c.get('sluice.sql.shuffle.partitions')).toBe('auto');
    c.set('spark.sql.streaming.noDataMicroBatches.enabled', 'false');
    expect(c.get('sluice.sql.streaming.noDataMicroBatches.enabled')).toBe(false);
  });

  it('rejects unknown keys and bad values with INVALID_CONF naming the key', () => {
    const c = new RuntimeConf();
    expect(() => c.set('sluice.sql.shuffle.partition', 3)).toThrow(expect.objectContaining({ code: 'INVALID_CONF', option: 'sluice.sql.shuffle.partition' }));
    expect(() => c.set('spark.task.maxFailures', 0)).toThrow(expect.objectContaining({ code: 'INVALID_CONF', option: 'spark.task.maxFailures' }));
    expect(() => c.set('sluice.scheduler.mode', 'RANDOM')).toThrow(expect.objectContaining({ code: 'INVALID_CONF' }));
    expect(() => new RuntimeConf({ 'sluice.executor.cores': 'many' })).toThrow(expect.objectContaining({ code: 'INVALID_CONF' }));
  });

  it('parses values with the same parsers as options', () => {
    const c = new RuntimeConf();
    // '1e3' is no integer for an option, so it is none for a conf key either.
    expect(() => c.set('sluice.task.maxFailures', '1e3')).toThrow(
      expect.objectContaining({ code: 'INVALID_CONF', message: "conf sluice.task.maxFailures must be a positive integer (got '1e3')" }),
    );
    c.set('spark.sql.shuffle.partitions', 'AUTO ');
    expect(c.get('sluice.sql.shuffle.partitions')).toBe('auto');
    expect(() => c.set('sluice.sql.shuffle.partitions', 'many')).toThrow(expect.objectContaining({ message: expect.stringContaining("'auto'") }));
    c.set('spark.sql.streaming.pollingDelay', '50ms');
    expect(c.get('sluice.sql.streaming.pollingDelay')).toBe(50);
    c.set('sluice.sql.streaming.noDataProgressEventInterval', '10s');
    expect(c.get('sluice.sql.streaming.noDataProgressEventInterval')).toBe(10_000);
    c.set('sluice.sql.adaptive.advisoryPartitionSizeInBytes', '64m');
    expect(c.get('sluice.sql.adaptive.advisoryPartitionSizeInBytes')).toBe(64 * 1024 * 1024);
    c.set('sluice.sql.streaming.noDataMicroBatches.enabled', 'FALSE');
    expect(c.get('sluice.sql.streaming.noDataMicroBatches.enabled')).toBe(false);
    expect(() => c.set('sluice.scheduler.pools', '[1,2]')).toThrow(expect.objectContaining({ code: 'INVALID_CONF' }));
  });

  it('knows no key from the object prototype', () => {
    expect(() => new RuntimeConf().set('constructor', 1)).toThrow(expect.objectContaining({ code: 'INVALID_CONF', option: 'constructor' }));
    expect(() => new RuntimeConf().get('toString')).toThrow(expect.objectContaining({ code: 'INVALID_CONF' }));
  });

  it('a snapshot does not see later changes', () => {
    const c = new RuntimeConf();
    c.set('sluice.task.maxFailures', 2);
    const snap = c.snapshot();
    c.set('sluice.task.maxFailures', 7);
    expect(snap.get('sluice.task.maxFailures')).toBe(2);
    expect(c.get('sluice.task.maxFailures')).toBe(7);
  });
});
