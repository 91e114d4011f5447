#!/usr/bin/env node
// The import rules of the packages, checked over their modules as they run and as they are typed:
// each source file (src/**/*.ts, tests aside) as esbuild compiles it, which erases type-only
// imports exactly as the bundle does, and each declaration under dist/types:
//   1. no runtime import cycle inside a package (type-only imports never count);
//   2. in @sluice/driver, nothing outside api/ (and the package entry) imports api/, at runtime
//      or for types: execution/, plan/ and the rest sit below the API facade;
//   3. packages import only the packages below them: state <- executor <- driver;
//   4. nothing that @sluice/executor's package entry (src/index.ts, the engine library the driver
//      imports) reaches at runtime is worker-only (WORKER_ONLY below): what runs only in a worker
//      thread is reached from the worker entry (task/entry.cts) alone.
// `pnpm test` runs it after the build. Exit status 1 lists every violation.
//
//   node scripts/check-imports.mjs [repoRoot]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

/** Packages in layer order: each may import those before it. */
export const PACKAGE_LAYERS = ['state', 'executor', 'driver'];

/**
 * Modules of @sluice/executor that run only in a worker thread, as paths under src/ (`*`: any one
 * folder name): the task runner, the state task and what a batch runs on, each stateful kind's
 * task part (`operators/<kind>/task.ts`, with the batches it runs), the map sides, and the
 * stream-static join's index and compile (operators/join.ts; the driver's part is broadcast.ts).
 */
export const WORKER_ONLY = [
  'task/entry.cts',
  'task/worker.ts',
  'task/readInput.ts',
  'task/stages.ts',
  'task/taskOutput.ts',
  'operators/tasks.ts',
  'operators/stateTask.ts',
  'operators/stateContext.ts',
  'operators/stateWriter.ts',
  'operators/stateCache.ts',
  'operators/*/task.ts',
  'operators/join/batch.ts',
  'operators/join/cache.ts',
  'operators/processor/batch.ts',
  'operators/processor/handle.ts',
  'operators/processor/calls.ts',
  'operators/mapSide.ts',
  'operators/join.ts',
  'shuffle/ShuffleWriter.ts',
  'columns/columnStages.ts',
  'columns/columnMapSide.ts',
  'columns/columnAggregate.ts',
];

const SPECIFIER = /(?:^|[;\s])(?:import|export)\s*(?:type\s+)?(?:[\w*${},\s]+?\s+from\s*)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function filesUnder(dir, suffix) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p, suffix));
    else if (e.name.endsWith(suffix)) out.push(p);
  }
  return out;
}

/** Import specifiers of a module's text, comments removed. */
export function specifiers(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out = [];
  for (const m of code.matchAll(SPECIFIER)) out.push(m[1] ?? m[2]);
  return out;
}

/** Strongly connected components of more than one module, or a module importing itself. */
function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** Whether module `id` (a path under src/ without its extension) matches a WORKER_ONLY entry. */
const workerOnly = (() => {
  const patterns = WORKER_ONLY.map((p) => new RegExp(`^${p.replace(/\.c?ts$/, '').replace(/\*/g, '[^/]+')}$`));
  return (id) => patterns.some((re) => re.test(id));
})();

/**
 * The worker-only modules `entry` reaches at runtime, each by the shortest import path to it
 * (the walk stops at a worker-only module: only the first on each path is reported).
 */
function workerOnlyReached(graph, entry) {
  const via = new Map([[entry, null]]);
  const queue = [entry];
  const found = [];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v !== entry && workerOnly(v)) {
      const path = [];
      for (let w = v; w !== null; w = via.get(w)) path.unshift(w);
      found.push(path);
      continue;
    }
    for (const w of graph.get(v) ?? []) {
      if (via.has(w)) continue;
      via.set(w, v);
      queue.push(w);
    }
  }
  return found;
}

/** A module's imports as it runs: TypeScript compiled as the bundle compiles it (type-only imports gone). */
const runtimeText = (file) => transformSync(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm' }).code;

/**
 * Violations of the rules over `packagesDir/<name>/src` (runtime) and `packagesDir/<name>/dist/types`
 * (declarations). Each is one line naming the files.
 */
export function checkImports(packagesDir) {
  const problems = [];
  for (const [layer, name] of PACKAGE_LAYERS.entries()) {
    const src = join(packagesDir, name, 'src');
    const types = join(packagesDir, name, 'dist', 'types');
    const ts = [...filesUnder(src, '.ts'), ...filesUnder(src, '.cts')].filter(
      (f) => !f.endsWith('.test.ts') && !f.endsWith('.d.ts') && !/TestKit\.ts$/.test(f),
    );
    if (ts.length === 0) {
      problems.push(`${name}: no TypeScript source under ${src}`);
      continue;
    }
    const declarations = filesUnder(types, '.d.ts');
    if (declarations.length === 0) {
      problems.push(`${name}: no declarations under ${types} (run pnpm build)`);
      continue;
    }
    const modules = [...ts.map((file) => ({ file, dir: src, runtime: true })), ...declarations.map((file) => ({ file, dir: types, runtime: false }))];
    const graph = new Map();
    for (const { file, dir, runtime } of modules) {
      const rel = (p) => relative(dir, p).split(sep).join('/');
      const from = rel(file);
      const edges = [];
      for (const spec of specifiers(runtime ? runtimeText(file) : readFileSync(file, 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = rel(resolve(dirname(file), spec)).replace(/\.d\.ts$|\.c?js$/, '');
          edges.push(target);
          const source = from.replace(/\.d\.ts$|\.c?ts$/, '');
          if (name === 'driver' && target.startsWith('api/') && !source.startsWith('api/') && source !== 'index') {
            problems.push(`driver: ${source} imports ${target}${runtime ? '' : ' (types)'}: only api/ and the package entry may use the API`);
          }
        } else if (spec.startsWith('@sluice/')) {
          const other = spec.slice('@sluice/'.length).split('/')[0];
          const at = PACKAGE_LAYERS.indexOf(other);
          if (at < 0 || at >= layer) {
            const below = PACKAGE_LAYERS.slice(0, layer);
            problems.push(`${name}: ${from} imports ${spec}: ${name} may import ${below.length ? `only ${below.join(', ')}` : 'no other Sluice package'}`);
          }
        }
      }
      if (runtime) graph.set(from.replace(/\.c?ts$/, ''), edges);
    }
    for (const comp of cycles(graph)) problems.push(`${name}: runtime import cycle: ${comp.join(' -> ')}`);
    if (name === 'executor') {
      for (const path of workerOnlyReached(graph, 'index')) {
        problems.push(
          `executor: the package entry reaches worker-only ${path.at(-1)} at runtime (${path.join(' -> ')}): ` +
            'the engine library must not load what runs only in a worker thread (WORKER_ONLY in scripts/check-imports.mjs)',
        );
      }
    }
  }
  return [...new Set(problems)];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  const problems = checkImports(join(root, 'packages'));
  if (problems.length > 0) {
    console.error(`import check: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log('import check: no runtime cycles, layers respected, the engine entry reaches no worker-only module');
}
