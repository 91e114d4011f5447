/**
 * The lint and format check (`pnpm lint`): Biome's `ci` over the repository, with the rules and
 * the files of biome.json. A lint finding or a file that `pnpm format` would change fails here,
 * with Biome's report of what and where.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIOME = join(REPO, 'node_modules', '.bin', 'biome');
/** Hard limit of one Biome run; it takes a few seconds. */
const BIOME_TIMEOUT_MS = 120_000;

/** Runs `biome ci .` from the repository root, without colours; killed past the time limit. */
function biomeCi(): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIOME, ['ci', '.', '--colors=off'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), BIOME_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

describe('the code (pnpm lint)', () => {
  it('has no lint finding and is formatted as `pnpm format` leaves it', { timeout: BIOME_TIMEOUT_MS + 30_000 }, async () => {
    const run = await biomeCi();
    expect(run, `biome ci . failed (fix what it reports, or run \`pnpm format\`):\n${run.output}`).toMatchObject({ code: 0, signal: null });
  });
});
