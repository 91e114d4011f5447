/**
 * Loading the executors' worker entry never aborts the process. Node 20's require() of an ES
 * module (which piscina tries first) aborted with a native assertion when a worker was terminated
 * while it loaded; the entry is CommonJS so that require() never takes that path.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CYCLES = fileURLToPath(new URL('./fixtures/session-cycles.mjs', import.meta.url));

describe('the worker entry', () => {
  it('is CommonJS: require() loads it without loading an ES module through require()', () => {
    const entry = createRequire(import.meta.url).resolve('@sluice/executor/worker');
    expect(entry).toMatch(/\.cjs$/);
    const r = spawnSync(
      process.execPath,
      ['--no-experimental-require-module', '-e', `const f = require(${JSON.stringify(entry)}); if (typeof f !== 'function') process.exit(3);`],
      {
        cwd: REPO,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('survives a loop of session create/close cycles in one process', () => {
    const r = spawnSync(process.execPath, [CYCLES, '150'], { cwd: REPO, encoding: 'utf8', timeout: 90_000 });
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toBe('done 150');
    expect(r.status).toBe(0);
  }, 100_000);
});
