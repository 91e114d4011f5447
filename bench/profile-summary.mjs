// Sums the CPU profiles that `node --cpu-prof --cpu-prof-dir=<dir>` wrote (one per thread: the
// main thread's and each worker's) and prints where the time went, per function: self time and
// time with callees, as seconds and as a share of the threads' busy time (idle and a worker's wait
// for its next task left out). Garbage collection is its own line.
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/stream-join.bench.mjs
//   node bench/profile-summary.mjs /tmp/prof [--workers] [--top 40]
//
// --workers: only the worker threads' profiles (those that ran the engine's worker bundle).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const dir = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
if (dir === undefined) {
  console.error('usage: node bench/profile-summary.mjs <profile dir> [--workers] [--top N]');
  process.exit(2);
}
const workersOnly = args.includes('--workers');
const top = Number(args[args.indexOf('--top') + 1]) || 40;
const WAITING = new Set(['(idle)', 'atomicsWaitLoop', '(program)']);

const self = new Map();
const withCallees = new Map();
let busy = 0;
let threads = 0;
const nameOf = (frame) => `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`.trim();
for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  if (workersOnly && !profile.nodes.some((n) => n.callFrame.url.includes('/task/worker.js'))) continue;
  threads++;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i] ?? 0;
    const node = byId.get(profile.samples[i]);
    if (WAITING.has(node.callFrame.functionName)) continue;
    busy += us;
    const name = nameOf(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + us);
    // Each function once per sample, however deep it recurses.
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const n = nameOf(byId.get(id).callFrame);
      if (seen.has(n)) continue;
      seen.add(n);
      withCallees.set(n, (withCallees.get(n) ?? 0) + us);
    }
  }
}
const s = (us) => (us / 1e6).toFixed(2).padStart(8);
const pct = (us) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
console.log(`${threads} thread profiles, ${(busy / 1e6).toFixed(1)} s busy`);
for (const [title, m] of [
  ['self time', self],
  ['with callees', withCallees],
]) {
  console.log(`\n${title}:`);
  const rows = [...m].filter(([n]) => !n.startsWith('(root)')).sort((a, b) => b[1] - a[1]);
  for (const [name, us] of rows.slice(0, top)) console.log(`${s(us)} ${pct(us)}  ${name}`);
}
