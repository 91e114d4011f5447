import { describe, expect, it } from 'vitest';
import { admitFiles, type AdmissionOptions, type FileEntry } from './FileAdmission.js';

const f = (name: string, mtimeMs: number, size = 1): FileEntry => ({
  path: `/in/${name}`,
  size,
  mtimeMs,
});

const base: AdmissionOptions = { latestFirst: false, maxFileAgeMs: 7 * 24 * 3600 * 1000 };

/**
 * Runs successive batches over a fixed listing the way the source does: admitted paths go to the
 * seen-file log, only the first batch is `firstBatch`, and it stops at the first empty batch.
 */
function batches(listed: FileEntry[], opts: AdmissionOptions, seen = new Set<string>(), firstBatch = true): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < 100; i++) {
    const batch = admitFiles(listed, seen, opts, firstBatch && i === 0);
    if (batch.length === 0) return out;
    out.push(batch.map((e) => e.path));
    for (const e of batch) seen.add(e.path);
  }
  throw new Error('admission did not converge');
}

const names = (...ns: string[]): string[] => ns.map((n) => `/in/${n}`);

describe('admitFiles', () => {
  // Names disagree with mtimes so that the order shown is mtime order.
  const five = [f('e', 1), f('d', 2), f('c', 3), f('b', 4), f('a', 5)];

  it('without limits takes every file in one batch, oldest first', () => {
    expect(batches(five, base)).toEqual([names('e', 'd', 'c', 'b', 'a')]);
  });

  it('maxFilesPerTrigger alone caps the count', () => {
    expect(batches(five, { ...base, maxFilesPerTrigger: 2 })).toEqual([names('e', 'd'), names('c', 'b'), names('a')]);
  });

  it('maxBytesPerTrigger alone is soft: 10 over files of 3 gives batches of 4 files', () => {
    const ten = Array.from({ length: 10 }, (_, i) => f(`f${i}`, i, 3));
    expect(batches(ten, { ...base, maxBytesPerTrigger: 10 })).toEqual([names('f0', 'f1', 'f2', 'f3'), names('f4', 'f5', 'f6', 'f7'), names('f8', 'f9')]);
  });

  it('maxBytesPerTrigger always takes at least one file, even one over the limit', () => {
    const listed = [f('big', 1, 25), f('small1', 2, 4), f('small2', 3, 4), f('small3', 4, 4)];
    expect(batches(listed, { ...base, maxBytesPerTrigger: 10 })).toEqual([names('big'), names('small1', 'small2', 'small3')]);
  });

  it('with both limits each batch stops at whichever is reached first', () => {
    // Batch 1: bytes win (3+3+3+3 = 12 ≥ 10 after 4 files < 5).
    // Batch 2: files win (5 files of 1 byte = 5 < 10).
    const listed = [...['a', 'b', 'c', 'd'].map((n, i) => f(n, i, 3)), ...['e', 'f', 'g', 'h', 'i', 'j'].map((n, i) => f(n, 10 + i, 1))];
    expect(batches(listed, { ...base, maxFilesPerTrigger: 5, maxBytesPerTrigger: 10 })).toEqual([
      names('a', 'b', 'c', 'd'),
      names('e', 'f', 'g', 'h', 'i'),
      names('j'),
    ]);
  });

  it('latestFirst takes the newest first', () => {
    expect(batches(five, { ...base, latestFirst: true, maxFilesPerTrigger: 2 })).toEqual([names('a', 'b'), names('c', 'd'), names('e')]);
    expect(batches(five, { ...base, latestFirst: true })).toEqual([names('a', 'b', 'c', 'd', 'e')]);
  });

  it('orders ties in mtime by name, in both directions', () => {
    const listed = [f('c', 5), f('a', 5), f('z', 1), f('b', 5), f('y', 9)];
    expect(batches(listed, { ...base, maxFilesPerTrigger: 2 })).toEqual([names('z', 'a'), names('b', 'c'), names('y')]);
    expect(batches(listed, { ...base, latestFirst: true, maxFilesPerTrigger: 2 })).toEqual([names('y', 'a'), names('b', 'c'), names('z')]);
  });

  it('drops files already seen', () => {
    const seen = new Set(names('d', 'b'));
    expect(admitFiles(five, seen, base, false).map((e) => e.path)).toEqual(names('e', 'c', 'a'));
  });

  describe('maxFileAge', () => {
    const opts = { ...base, maxFileAgeMs: 5 };

    it('counts every file in the first batch, then measures age from the newest file', () => {
      const seen = new Set<string>();
      const first = [f('a', 0), f('b', 10)];
      expect(batches(first, opts, seen, true)).toEqual([names('a', 'b')]);

      // Newest listed is 100, so the cut is 95: 'd' (50) is skipped, 'e' (95) sits on the cut.
      const later = [...first, f('c', 100), f('d', 50), f('e', 95)];
      expect(batches(later, opts, seen, false)).toEqual([names('e', 'c')]);
    });

    it('the same listing outside the first batch skips the old files', () => {
      expect(batches([f('a', 0), f('b', 10)], opts, new Set(), false)).toEqual([names('b')]);
    });

    it('measures from the newest listed file even when it was already seen', () => {
      const listed = [f('old', 30), f('seenNew', 100)];
      const seen = new Set(names('seenNew'));
      expect(admitFiles(listed, seen, { ...base, maxFileAgeMs: 50 }, false)).toEqual([]);
      expect(admitFiles(listed, seen, { ...base, maxFileAgeMs: 70 }, false)).toEqual([f('old', 30)]);
    });

    it('is not measured from the clock', () => {
      // Files a year old are all within 5 ms of the newest one.
      const listed = [f('x', 1_000), f('y', 1_003)];
      expect(batches(listed, opts, new Set(), false)).toEqual([names('x', 'y')]);
    });

    it('with limits in the first batch, files left over may age out later', () => {
      // Only the first batch is exempt; Spark behaves the same.
      const listed = [f('a', 0), f('b', 1), f('c', 100)];
      expect(batches(listed, { ...opts, maxFilesPerTrigger: 1 })).toEqual([names('a'), names('c')]);
    });

    it('is ignored when latestFirst and maxFilesPerTrigger are both set (as in Spark)', () => {
      const listed = [f('a', 0), f('b', 50), f('c', 100)];
      expect(batches(listed, { ...opts, latestFirst: true, maxFilesPerTrigger: 1 }, new Set(), false)).toEqual([names('c'), names('b'), names('a')]);
      // Either one alone keeps the age limit.
      expect(batches(listed, { ...opts, latestFirst: true }, new Set(), false)).toEqual([names('c')]);
      expect(batches(listed, { ...opts, maxFilesPerTrigger: 1 }, new Set(), false)).toEqual([names('c')]);
    });
    it('is ignored when latestFirst and maxBytesPerTrigger are both set (SPARK-46641)', () => {
      // Files of 1 byte, 1 byte a batch: newest first, and the old ones are still read, later.
      const listed = [f('a', 0), f('b', 50), f('c', 100)];
      expect(batches(listed, { ...opts, latestFirst: true, maxBytesPerTrigger: 1 }, new Set(), false)).toEqual([names('c'), names('b'), names('a')]);
      expect(batches(listed, { ...opts, maxBytesPerTrigger: 1 }, new Set(), false)).toEqual([names('c')]);
    });
  });

  describe('ignoreLimits (Trigger.Once)', () => {
    it('takes everything in one batch despite both limits', () => {
      const ten = Array.from({ length: 10 }, (_, i) => f(`f${i}`, i, 3));
      const opts = { ...base, maxFilesPerTrigger: 1, maxBytesPerTrigger: 1 };
      expect(admitFiles(ten, new Set(), opts, true, true).map((e) => e.path)).toEqual(ten.map((e) => e.path));
    });

    it('still drops seen files and applies maxFileAge', () => {
      const listed = [f('a', 0), f('b', 96), f('c', 98), f('d', 100)];
      const opts = { ...base, maxFileAgeMs: 5, maxFilesPerTrigger: 1 };
      expect(admitFiles(listed, new Set(names('c')), opts, false, true).map((e) => e.path)).toEqual(names('b', 'd'));
    });
  });

  it('returns nothing for an empty listing and leaves its inputs unchanged', () => {
    expect(admitFiles([], new Set(), { ...base, maxFilesPerTrigger: 3 }, true)).toEqual([]);
    const listed = [f('b', 2), f('a', 1)];
    const copy = structuredClone(listed);
    admitFiles(listed, new Set(), base, true);
    expect(listed).toEqual(copy);
  });
});
