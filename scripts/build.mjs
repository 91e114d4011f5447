#!/usr/bin/env node
// Builds the three packages as they ship: TypeScript checks the sources and writes their
// declarations (dist/types), and esbuild bundles each package's JavaScript into a few ES module
// files with source maps. Importing @sluice/driver then opens a handful of files instead of two
// hundred, which is what makes a new session quick and keeps a low file-handle limit out of the
// module loader's way.
//
// Each package bundles its own code, and the small pure-JavaScript libraries it uses (INLINE: they
// are devDependencies of the package, and their licences travel in the bundle's comments). The
// other Sluice packages and every other dependency stay imports, so one process holds one copy of
// each (an error class of @sluice/state is the same class everywhere), and native or WebAssembly
// packages load from where they were installed. Entries of one package share their common code
// through chunks (splitting).
// The worker entry is CommonJS on purpose (see packages/executor/src/task/entry.cts) and only
// import()s the worker bundle beside it.
//
//   node scripts/build.mjs            the root `pnpm build` runs this
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The package entries: the name under dist/ (without .js) and the source file under src/. */
export const ENTRIES = {
  state: { index: 'index.ts', testing: 'testing.ts' },
  executor: { index: 'index.ts', 'task/worker': 'task/worker.ts' },
  driver: { index: 'index.ts', 'cli/sluice': 'cli/sluice.ts' },
};

/** Libraries bundled into the packages that use them: ES modules of plain JavaScript, with no files of their own to load. */
export const INLINE = ['hyparquet', 'hyparquet-writer', 'hyparquet-compressors', 'fzstd', 'hysnappy', 'p-queue', 'p-timeout', 'eventemitter3'];

const packageOf = (spec) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

/** Every bare import stays an import, except those of INLINE. */
const externals = {
  name: 'externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (INLINE.includes(packageOf(args.path)) ? undefined : { path: args.path, external: true }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  plugins: [externals],
  sourcemap: true,
  sourcesContent: true,
  logLevel: 'warning',
};

// Bundles are written anew (a chunk's name carries its hash); dist/types is tsc's, kept up to date by -b.
for (const pkg of Object.keys(ENTRIES)) {
  const dist = join(root, 'packages', pkg, 'dist');
  for (const name of existsSync(dist) ? readdirSync(dist) : []) if (name !== 'types') rmSync(join(dist, name), { recursive: true, force: true });
}
// Declarations first: tsc -b also type-checks every package, so a type error stops the build.
execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-b', ...Object.keys(ENTRIES).map((p) => `packages/${p}`)], { cwd: root, stdio: 'inherit' });

/** dist/THIRD-PARTY-LICENSES.txt: the licence of each library a bundle of the package holds. */
function writeNotices(dir, metafile) {
  const libs = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (m) libs.set(m[2], join(root, m[1]));
  }
  const notices = [...libs].sort().map(([name, path]) => {
    const file = readdirSync(path).find((f) => /^licen[cs]e/i.test(f));
    if (file === undefined) throw new Error(`build: ${name} is bundled but ships no licence file`);
    const { version, license } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'));
    return `${name} ${version} (${license})\n\n${readFileSync(join(path, file), 'utf8').trim()}\n`;
  });
  if (notices.length > 0)
    writeFileSync(
      join(dir, 'dist', 'THIRD-PARTY-LICENSES.txt'),
      `Libraries bundled into this package's dist/, with their licences.\n\n${notices.join('\n---\n\n')}`,
    );
}

await Promise.all(
  Object.entries(ENTRIES).map(async ([pkg, entries]) => {
    const dir = join(root, 'packages', pkg);
    const { metafile } = await build({
      ...common,
      format: 'esm',
      splitting: true,
      metafile: true,
      entryPoints: Object.fromEntries(Object.entries(entries).map(([out, src]) => [out, join(dir, 'src', src)])),
      outdir: join(dir, 'dist'),
      chunkNames: 'chunks/[name]-[hash]',
    });
    writeNotices(dir, metafile);
  }),
);
await build({
  ...common,
  format: 'cjs',
  bundle: false,
  entryPoints: [join(root, 'packages/executor/src/task/entry.cts')],
  outfile: join(root, 'packages/executor/dist/task/entry.cjs'),
});
console.log('build: state, executor and driver bundled into packages/*/dist');
