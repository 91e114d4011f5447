/**
 * Every (format, schema, options) compiles once into generated row builders or writers, so the
 * per-row loop does no schema lookups. A task reads many files with one schema; a worker runs
 * many tasks.
 */
import type { Schema } from '../schema/types.js';

const cache = new Map<string, (...a: never[]) => unknown>();

export function compiled<F extends (...a: never[]) => unknown>(key: string, schema: Schema, make: () => F): F {
  const full = key + '\0' + JSON.stringify(schema);
  let f = cache.get(full);
  if (f === undefined) {
    if (cache.size >= 256) cache.clear();
    f = make();
    cache.set(full, f);
  }
  return f as F;
}
