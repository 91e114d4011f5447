/**
 * Fault points for crash tests. With SLUICE_FAULT=<point>[:<n>] in the environment, the process
 * kills itself with SIGKILL the n-th time (default 1) it reaches <point>. Without the variable
 * `fault()` is one comparison against a constant. The points are the `fault('...')` calls in the
 * source, each listed in docs/reference/fault-points.md (test/code-rules.test.ts checks both ways).
 */
const spec = process.env.SLUICE_FAULT;
const [faultPoint, nth] = spec ? parseSpec(spec) : [undefined, 0];
let hits = 0;

function parseSpec(s: string): [string, number] {
  const i = s.lastIndexOf(':');
  if (i < 0) return [s, 1];
  const n = Number(s.slice(i + 1));
  return [s.slice(0, i), Number.isInteger(n) && n > 0 ? n : 1];
}

export function fault(point: string): void {
  if (faultPoint !== point) return;
  hits += 1;
  // SIGKILL ends the whole process, also when called from a worker thread.
  if (hits === nth) process.kill(process.pid, 'SIGKILL');
}
