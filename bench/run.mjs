// Runs every bench/*.bench.mjs in sequence, each as its own `node` child process, forwarding its
// output. Arguments filter by name: `node bench/run.mjs stateless` runs the benchmarks whose file
// name contains "stateless" (several arguments: any of them).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, ROOT_DIR } from './lib.mjs';

const filters = process.argv.slice(2).filter((a) => a !== '--');
const all = readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith('.bench.mjs'))
  .sort();
const selected = filters.length === 0 ? all : all.filter((f) => filters.some((w) => f.includes(w)));

if (selected.length === 0) {
  console.error(`no benchmark matches ${filters.join(', ')}; available: ${all.join(', ')}`);
  process.exit(1);
}

function runOne(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join('bench', file)], { cwd: ROOT_DIR, stdio: 'inherit' });
    const forward = (sig) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(signal ? 128 : (code ?? 1));
    });
    child.on('error', (e) => {
      console.error(e);
      resolve(1);
    });
  });
}

const failed = [];
for (const file of selected) {
  console.log(`\n=== ${file} ===`);
  const t0 = Date.now();
  const code = await runOne(file);
  console.log(`=== ${file}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s ===`);
  if (code !== 0) failed.push(file);
}
if (failed.length > 0) {
  console.error(`\n${failed.length} of ${selected.length} benchmarks failed: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`\n${selected.length} benchmark(s) done; results in bench/results/ and the summary bench/RESULTS.md`);
