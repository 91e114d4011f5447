/**
 * Every (format, schema, options) compiles once into generated row builders or writers, so the
 * per-row loop does no schema lookups. A task reads many files with one schema; a worker runs
 * many tasks.
 */
import { CompileCache } from '../compileCache.js';
import type { Schema } from '../schema/types.js';

const cache = new CompileCache<(...a: never[]) => unknown>();

export function compiled<F extends (...a: never[]) => unknown>(key: string, schema: Schema, make: () => F): F {
  return cache.of(`${key}\0${JSON.stringify(schema)}`, make) as F;
}
