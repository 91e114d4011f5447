/**
 * Rules over the source and the reference docs that no type checker enforces: every error code,
 * warning code, conf key and fault point is documented in the tables of docs/reference/
 * (errors.md, conf.md, fault-points.md), and conf key strings are written in one module only
 * (@sluice/state's confKeys.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONF } from '@sluice/driver';
import { CONF_KEYS, ERROR_CODES, WARNING_CODES } from '@sluice/state';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const ERRORS_MD = 'docs/reference/errors.md';
const CONF_MD = 'docs/reference/conf.md';
const FAULT_POINTS_MD = 'docs/reference/fault-points.md';

/** The first column of the table under `## heading` in the docs page `file` (the text between backticks, if any). */
function tableColumn(file: string, heading: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, `${file} has a section "${heading}"`).not.toBe(-1);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  return section
    .split('\n')
    .filter((l) => /^\| *[`\w]/.test(l) && !/^\| *(code|key|point) *\|/.test(l))
    .flatMap((l) => (l.split('|')[1] as string).trim().split(/\s*\/\s*/))
    .map((cell) => cell.replace(/`/g, '').trim());
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.includes('TestKit')) out.push(p);
  }
  return out;
}

const SOURCES = ['state', 'executor', 'driver'].flatMap((p) => sourceFiles(join(REPO, 'packages', p, 'src')));

describe('the reference docs document', () => {
  it('every error code, and no code that does not exist', () => {
    const documented = tableColumn(ERRORS_MD, 'Error codes');
    expect([...ERROR_CODES].filter((c) => !documented.includes(c))).toEqual([]);
    expect(documented.filter((c) => !(ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it('every code thrown or compared in the source is a known one', () => {
    const known = new Set<string>([...ERROR_CODES, ...WARNING_CODES]);
    const unknown: string[] = [];
    for (const file of SOURCES) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/SluiceError\(\s*'([A-Z_]+)'|code: '([A-Z_]+)'|code === '([A-Z_]+)'/g)) {
        const code = (m[1] ?? m[2] ?? m[3]) as string;
        // Node's own error codes (errno, ERR_*, MODULE_NOT_FOUND, classic-level's) and SQLite's lock
        // result code (better-sqlite3's SQLITE_BUSY) are compared, never thrown as ours.
        if (/^(E[A-Z]+|ERR_[A-Z_]+|MODULE_NOT_FOUND|LEVEL_[A-Z_]+|SQLITE_BUSY)$/.test(code)) continue;
        if (!known.has(code)) unknown.push(`${file}: ${code}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('every warning code', () => {
    const documented = tableColumn(ERRORS_MD, 'Warnings');
    expect([...WARNING_CODES].filter((c) => !documented.includes(c))).toEqual([]);
    expect(documented.filter((c) => !(WARNING_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it('every conf key, as the conf table knows them', () => {
    const documented = tableColumn(CONF_MD, 'Keys');
    const keys = Object.values(CONF_KEYS) as string[];
    expect(Object.keys(CONF).sort()).toEqual([...keys].sort());
    expect(keys.filter((k) => !documented.includes(k))).toEqual([]);
    expect(documented.filter((k) => !keys.includes(k))).toEqual([]);
  });
});

describe('fault points', () => {
  it('are the fault() and workerFault() calls of the source, each in the fault-points table and nothing more', () => {
    const called = new Set<string>();
    for (const file of SOURCES) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\b(?:fault|workerFault)\('([a-z-]+)'\)/g)) called.add(m[1] as string);
    }
    const documented = tableColumn(FAULT_POINTS_MD, 'Fault points');
    expect([...called].sort()).toEqual([...documented].sort());
  });
});

describe('conf key strings', () => {
  it('are written only in confKeys.ts', () => {
    const offenders: string[] = [];
    for (const file of SOURCES) {
      if (file.endsWith(join('state', 'src', 'confKeys.ts'))) continue;
      const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const m of text.matchAll(/['"`](?:sluice|spark)\.[a-z][\w.]*/g)) offenders.push(`${file}: ${m[0]}`);
    }
    expect(offenders).toEqual([]);
  });
});
