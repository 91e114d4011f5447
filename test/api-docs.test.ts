/**
 * The API reference (docs/reference/api/) is TypeDoc's output over @sluice/driver's entry
 * (typedoc.json), committed so that it reads on GitHub. This test regenerates it into a temporary
 * folder and requires the committed pages to be exactly that, so the reference never goes stale:
 * after changing an export or a doc comment, run `pnpm docs:api` and commit what it writes.
 * TypeDoc runs with treatWarningsAsErrors, so an export without a doc comment fails here too.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runChild } from './helpers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const COMMITTED = join(REPO, 'docs', 'reference', 'api');
/** Hard limit of one TypeDoc run; it takes about 10 s on two cores. */
const TYPEDOC_TIMEOUT_MS = 120_000;

const tmp = mkdtempSync(join(tmpdir(), 'sluice-api-docs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Every file under `dir`, by its path relative to `dir` (with /). */
function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.set(relative(dir, p).split('\\').join('/'), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

/** Runs TypeDoc as `pnpm docs:api` does, writing into `out`; killed past the time limit. */
const typedoc = (out: string) =>
  runChild(process.execPath, [join(REPO, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out], { cwd: REPO, timeoutMs: TYPEDOC_TIMEOUT_MS });

describe('the API reference (docs/reference/api)', () => {
  it('is what `pnpm docs:api` generates from the code now', { timeout: TYPEDOC_TIMEOUT_MS + 30_000 }, async () => {
    const out = join(tmp, 'api');
    const run = await typedoc(out);
    // TypeDoc treats warnings (an undocumented export, a broken {@link}) as errors: its output says which.
    expect(run, run.stdout + run.stderr).toMatchObject({ code: 0, signal: null });

    const generated = tree(out);
    const committed = tree(COMMITTED);
    expect(generated.has('README.md'), 'TypeDoc writes README.md as the index').toBe(true);
    const missing = [...generated.keys()].filter((f) => !committed.has(f));
    const stale = [...committed.keys()].filter((f) => !generated.has(f));
    const changed = [...generated.keys()].filter((f) => committed.has(f) && committed.get(f) !== generated.get(f));
    const hint = 'docs/reference/api is out of date: run `pnpm docs:api` and commit the result';
    expect({ missing, stale, changed }, hint).toEqual({ missing: [], stale: [], changed: [] });
  });
});
