// Udfs of the benchmarks, loaded by the workers through `udf(<this module's URL>, name, type)`.

/** Holds the worker's slot `ms` milliseconds asleep (not spinning), and passes `value` through. */
export function nap(value, ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return value;
}
