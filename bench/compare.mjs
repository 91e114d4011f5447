// Runs benchmarks alternately in another checkout (a baseline: an earlier commit, built) and in
// this one, round after round, and prints each result's figure and ratio per side with the
// medians: "before and after" measured in the same runs, on the same machine and hour.
//
//   node bench/compare.mjs <baselineCheckout> <rounds> <bench>...   (bench: a file name part, as bench/run.mjs takes)
//
// Each run is `node bench/<file>.bench.mjs` in that checkout, with this process's SLUICE_BENCH_*
// variables; the figures are read back from its bench/results/<name>.json. The table is printed
// and written to bench/results/compare-<baseline commit>.md.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BENCH_DIR, ROOT_DIR, RESULTS_DIR, median, round } from './lib.mjs';

const [baselineArg, roundsArg, ...filters] = process.argv.slice(2);
if (!baselineArg || !roundsArg || filters.length === 0) {
  console.error('usage: node bench/compare.mjs <baselineCheckout> <rounds> <bench>...');
  process.exit(2);
}
const sides = [
  { name: 'before', dir: resolve(baselineArg) },
  { name: 'after', dir: ROOT_DIR },
];
const commitOf = (dir) => spawnSync('git', ['-C', dir, 'rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
const files = readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith('.bench.mjs') && filters.some((w) => f.includes(w)))
  .sort();
const figures = new Map(); // name -> side -> [{ value, ratio, unit }]

for (let pass = 1; pass <= Number(roundsArg); pass++) {
  for (const file of files) {
    for (const side of sides) {
      const script = join(side.dir, 'bench', file);
      if (!existsSync(script)) continue;
      const started = Date.now();
      console.error(`round ${pass}: ${file} (${side.name})`);
      const r = spawnSync(process.execPath, [script], { cwd: side.dir, encoding: 'utf8', stdio: ['ignore', 'ignore', 'inherit'], timeout: 20 * 60_000 });
      if (r.status !== 0) console.error(`  exited ${r.status ?? r.signal}`);
      const results = join(side.dir, 'bench', 'results');
      for (const f of readdirSync(results).filter((f) => f.endsWith('.json'))) {
        if (statSync(join(results, f)).mtimeMs < started) continue;
        const { name, value, ratio, unit } = JSON.parse(readFileSync(join(results, f), 'utf8'));
        if (!figures.has(name)) figures.set(name, { before: [], after: [] });
        figures.get(name)[side.name].push({ value, ratio, unit });
      }
    }
  }
}

const fmt = (xs, k) => (xs.length === 0 ? '' : `${round(median(xs.map((x) => x[k])))} (${xs.map((x) => x[k]).join(', ')})`);
const lines = [
  `# Before and after: ${commitOf(sides[0].dir)} against ${commitOf(ROOT_DIR)}`,
  '',
  `\`node bench/compare.mjs ${baselineArg} ${roundsArg} ${filters.join(' ')}\`: the runs alternate between the two checkouts; medians, then every run.`,
  '',
  '| result | unit | value before | value after | ratio before | ratio after |',
  '|---|---|---|---|---|---|',
  ...[...figures]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, f]) => {
      const unit = (f.after[0] ?? f.before[0]).unit;
      return `| ${name} | ${unit} | ${fmt(f.before, 'value')} | ${fmt(f.after, 'value')} | ${fmt(f.before, 'ratio')} | ${fmt(f.after, 'ratio')} |`;
    }),
  '',
];
const out = join(RESULTS_DIR, `compare-${commitOf(sides[0].dir)}.md`);
const previous = existsSync(out) ? `${readFileSync(out, 'utf8')}\n` : '';
writeFileSync(out, previous + lines.join('\n'));
console.log(lines.join('\n'));
