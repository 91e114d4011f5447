/**
 * Sluice as an outside program gets it: the three packages packed as tarballs (scripts/pack.mjs),
 * installed into a new app with plain npm (no pnpm, no workspace, no symlink), a program of that
 * app running a stateful query and a Parquet write and read, the integrations it did not install
 * failing with OPTIONAL_DEPENDENCY_MISSING, and a TypeScript file of the app type-checked with
 * tsc --strict against the installed types. docs/getting-started.md shows the same commands.
 */
import { copyFileSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, runChild, tempDir } from './helpers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const APP = fileURLToPath(new URL('./fixtures/app/', import.meta.url));

afterAll(removeTempDirs);

// What the app's processes see: no NODE_PATH, which pnpm sets for the tests and which would let the
// app find the repository's packages (its optional integrations among them).
const { NODE_PATH: _, ...APP_ENV } = process.env;

/** Runs a command to its end within `timeoutMs` (then it is killed): its output, failing the test on a non-zero exit. */
async function run(cmd: string, args: string[], options: { cwd: string; timeoutMs: number }): Promise<string> {
  const r = await runChild(cmd, args, { ...options, env: APP_ENV });
  const out = `${r.stdout}${r.stderr}`;
  expect(r, `${cmd} ${args.join(' ')}: ${out}`).toMatchObject({ code: 0, timedOut: false });
  return r.stdout;
}

const tar = (tgz: string, file: string): Promise<string> => run('tar', ['-xzOf', tgz, `package/${file}`], { cwd: REPO, timeoutMs: 30_000 });

describe('an app installs Sluice from its tarballs with npm', () => {
  it('runs a stateful query and a Parquet read, refuses integrations it lacks by code, and type-checks with tsc --strict', async () => {
    const root = tempDir('sluice-install-');
    const packDir = join(root, 'pack');
    await run(process.execPath, [join(REPO, 'scripts', 'pack.mjs'), packDir], { cwd: REPO, timeoutMs: 120_000 });
    const tarballs = readdirSync(packDir).sort();
    expect(tarballs).toEqual(['sluice-driver-0.1.0.tgz', 'sluice-executor-0.1.0.tgz', 'sluice-state-0.1.0.tgz']);
    for (const t of tarballs) {
      const manifest = await tar(join(packDir, t), 'package.json');
      expect(manifest, t).not.toContain('workspace:');
      expect(JSON.parse(manifest)).toMatchObject({ license: 'Apache-2.0', type: 'module' });
      expect(await tar(join(packDir, t), 'LICENSE')).toContain('Apache License');
      expect(await tar(join(packDir, t), 'README.md')).toContain('# @sluice/');
    }
    expect(JSON.parse(await tar(join(packDir, 'sluice-driver-0.1.0.tgz'), 'package.json')).peerDependenciesMeta).toEqual({
      'better-sqlite3': { optional: true },
      ioredis: { optional: true },
      'prom-client': { optional: true },
      uplot: { optional: true },
    });

    const app = join(root, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'sluice-app', private: true, type: 'module' }));
    for (const f of ['app.mjs', 'app.ts']) copyFileSync(join(APP, f), join(app, f));
    // The order the docs give; npm finds each @sluice dependency among the tarballs it installs.
    const install = ['state', 'executor', 'driver'].map((p) => join(packDir, `sluice-${p}-0.1.0.tgz`));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...install], { cwd: app, timeoutMs: 300_000 });
    for (const p of ['state', 'executor', 'driver']) {
      expect(lstatSync(join(app, 'node_modules', '@sluice', p)).isSymbolicLink(), `@sluice/${p} is a copy, not a link`).toBe(false);
    }
    // Optional integrations are not installed with the package.
    for (const p of ['better-sqlite3', 'ioredis', 'prom-client', 'uplot']) expect(readdirSync(join(app, 'node_modules'))).not.toContain(p);

    const work = join(root, 'work');
    mkdirSync(work);
    const out = await run(process.execPath, ['app.mjs', work], { cwd: app, timeoutMs: 120_000 });
    expect(JSON.parse(out.trim().split('\n').at(-1) as string)).toEqual({
      // 12:00-12:10 closes once the watermark (max 12:30 less 5 minutes) passes its end; so does 12:10-12:20.
      windows: ['2024-06-01T12:00:00.000Z cart 1', '2024-06-01T12:00:00.000Z home 2', '2024-06-01T12:10:00.000Z home 1'],
      parquet: [
        '2024-06-01T12:01:00.000Z home',
        '2024-06-01T12:02:00.000Z home',
        '2024-06-01T12:03:00.000Z cart',
        '2024-06-01T12:12:00.000Z home',
        '2024-06-01T12:30:00.000Z home',
      ],
      sqlite: "OPTIONAL_DEPENDENCY_MISSING: format('sqlite') needs the package better-sqlite3, which is not installed: npm install better-sqlite3@^12.11.1",
      redis: "OPTIONAL_DEPENDENCY_MISSING: format('redis') needs the package ioredis, which is not installed: npm install ioredis@^5.9.3",
      metrics: 'OPTIONAL_DEPENDENCY_MISSING: the Prometheus registry needs the package prom-client, which is not installed: npm install prom-client@^15.1.3',
      ui: 'OPTIONAL_DEPENDENCY_MISSING: the dashboard needs the package uplot, which is not installed: npm install uplot@^1.6.32',
    });

    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
          // Node's types come from the repository: the app installs nothing but Sluice.
          typeRoots: [join(REPO, 'node_modules', '@types')],
        },
        files: ['app.ts'],
      }),
    );
    expect(await run(join(REPO, 'node_modules', '.bin', 'tsc'), ['-p', app], { cwd: app, timeoutMs: 120_000 })).toBe('');
  }, 600_000);
});
