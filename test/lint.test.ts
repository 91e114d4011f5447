/**
 * The lint and format check (`pnpm lint`): Biome's `ci` over the repository, with the rules and
 * the files of biome.json. A lint finding or a file that `pnpm format` would change fails here,
 * with Biome's report of what and where.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runChild } from './helpers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIOME = join(REPO, 'node_modules', '.bin', 'biome');
/** Hard limit of one Biome run; it takes a few seconds. */
const BIOME_TIMEOUT_MS = 120_000;

/** Runs `biome ci .` from the repository root, without colours; killed past the time limit. */
const biomeCi = () => runChild(BIOME, ['ci', '.', '--colors=off'], { cwd: REPO, timeoutMs: BIOME_TIMEOUT_MS });

describe('the code (pnpm lint)', () => {
  it('has no lint finding and is formatted as `pnpm format` leaves it', { timeout: BIOME_TIMEOUT_MS + 30_000 }, async () => {
    const run = await biomeCi();
    expect(run, `biome ci . failed (fix what it reports, or run \`pnpm format\`):\n${run.stdout}${run.stderr}`).toMatchObject({ code: 0, signal: null });
  });
});
