#!/usr/bin/env node
// `pnpm pack:all`: the three packages as npm tarballs in <repo>/pack/ (built first by the root
// script). pnpm writes each workspace dependency as the plain version it packs, so an app installs
// the tarballs with npm alone: npm install pack/sluice-state-*.tgz pack/sluice-executor-*.tgz pack/sluice-driver-*.tgz
//
//   node scripts/pack.mjs [destination]     prints each tarball's path and size
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dest = resolve(process.argv[2] ?? join(root, 'pack'));
mkdirSync(dest, { recursive: true });
for (const f of readdirSync(dest)) if (/^sluice-.*\.tgz$/.test(f)) rmSync(join(dest, f));
for (const pkg of ['state', 'executor', 'driver']) {
  execFileSync('pnpm', ['pack', '--pack-destination', dest], { cwd: join(root, 'packages', pkg), stdio: ['ignore', 'ignore', 'inherit'] });
}
for (const f of readdirSync(dest)
  .filter((f) => f.endsWith('.tgz'))
  .sort()) {
  console.log(`${join(dest, f)}  ${(statSync(join(dest, f)).size / 1024).toFixed(0)} KiB`);
}
