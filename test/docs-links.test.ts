/**
 * The documentation's links resolve: every relative link in README.md and docs/**\/*.md names a
 * file or folder that exists, and every `#anchor` matches a heading of its target page, as GitHub
 * makes a heading's anchor (its slug).
 *
 * One rule for generated pages: docs/reference/api/ is the API reference, generated from the
 * code's doc comments by its own tool, and may not exist in a checkout. Links into it are checked
 * only when that folder exists (then like any other link: the file must exist, and an anchor must
 * match one of its headings); while it does not exist, they are listed as skipped, never as
 * passing. Its own pages are the generator's output and are not scanned for links.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** The generated API reference, relative to the repository root. */
const GENERATED = join('docs', 'reference', 'api');

/** A heading's anchor as GitHub makes it: the text as rendered, lower-cased, punctuation dropped, spaces as hyphens. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/`([^`]*)`/g, '$1') // code spans: their content
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/\*\*?|~~/g, ''); // bold, italics, strike-through marks
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      const mark = m[1] as string;
      if (fence === undefined) fence = mark;
      else if (mark[0] === fence[0] && mark.length >= fence.length) fence = undefined;
      return;
    }
    if (fence === undefined) out.push([i + 1, line]);
  });
  return out;
}

/** The anchors of a page's headings, numbered as GitHub numbers repeated ones (`x`, `x-1`, ...). */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, line] of proseLines(readFileSync(file, 'utf8'))) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = githubSlug(m[1] as string);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The link targets of a page's prose (inline links, images and reference definitions; code spans left out). */
function linksOf(file: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  for (const [line, raw] of proseLines(readFileSync(file, 'utf8'))) {
    const text = raw.replace(/(`+)[\s\S]*?\1/g, ''); // code spans may hold brackets that are no links
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line, target: m[1] as string });
    const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(text);
    if (def) links.push({ line, target: def[1] as string });
  }
  return links;
}

function markdownFiles(dir: string, root: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (relative(root, p) !== GENERATED) out.push(...markdownFiles(p, root));
    } else if (e.name.endsWith('.md')) out.push(p);
  }
  return out;
}

interface LinkReport {
  broken: string[];
  skipped: string[];
  checked: number;
}

/** Checks the links of README.md and docs/**\/*.md under `root`. */
function checkDocLinks(root: string): LinkReport {
  const files = [join(root, 'README.md'), ...(existsSync(join(root, 'docs')) ? markdownFiles(join(root, 'docs'), root) : [])].filter((f) => existsSync(f));
  const generatedExists = existsSync(join(root, GENERATED));
  const anchorCache = new Map<string, Set<string>>();
  const report: LinkReport = { broken: [], skipped: [], checked: 0 };
  for (const file of files) {
    for (const { line, target } of linksOf(file)) {
      // Other sites (https:, mailto:, ...) are not this repository's to check.
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const where = `${relative(root, file)}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === '' ? file : resolve(dirname(file), pathPart);
      const rel = relative(root, dest);
      if (rel.startsWith('..')) {
        report.broken.push(`${where} (outside the repository)`);
        continue;
      }
      if ((rel === GENERATED || rel.startsWith(GENERATED + sep)) && !generatedExists) {
        report.skipped.push(where);
        continue;
      }
      report.checked += 1;
      if (!existsSync(dest)) {
        report.broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(dest).isDirectory() || !dest.endsWith('.md')) {
        report.broken.push(`${where} (an anchor into something that is not a Markdown page)`);
        continue;
      }
      let anchors = anchorCache.get(dest);
      if (!anchors) {
        anchors = anchorsOf(dest);
        anchorCache.set(dest, anchors);
      }
      if (!anchors.has(anchor)) report.broken.push(`${where} (no heading with that anchor in ${relative(root, dest)})`);
    }
  }
  return report;
}

// No import of the packages (nor of test/helpers.ts, which imports them): this test needs no build.
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe('the documentation', () => {
  it('has no broken relative link or anchor in README.md and docs/', () => {
    const report = checkDocLinks(REPO);
    expect(report.broken).toEqual([]);
    expect(report.checked).toBeGreaterThan(100);
    // Links into the API reference wait for it only while it does not exist.
    if (existsSync(join(REPO, GENERATED))) expect(report.skipped).toEqual([]);
    else expect(report.skipped.length).toBeGreaterThan(0);
  });
});

describe('the link check', () => {
  function tree(files: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'sluice-docs-links-'));
    temps.push(root);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }

  it('makes anchors as GitHub does', () => {
    expect(githubSlug('The `sluice` CLI')).toBe('the-sluice-cli');
    expect(githubSlug('Arbitrary state: transformWithState and flatMapGroupsWithState')).toBe('arbitrary-state-transformwithstate-and-flatmapgroupswithstate');
    expect(githubSlug('Which files a batch takes (admission)')).toBe('which-files-a-batch-takes-admission');
    expect(githubSlug('What differs from Spark, or is worth knowing')).toBe('what-differs-from-spark-or-is-worth-knowing');
    expect(githubSlug('[Link](x.md) and **bold** with_underscore')).toBe('link-and-bold-with_underscore');
  });

  it('reports a missing file, a missing anchor and a repeated heading numbered wrongly; passes good links', () => {
    const root = tree({
      'README.md': [
        '# Title',
        '[good](docs/a.md) [good anchor](docs/a.md#second-part) [self](#title) [web](https://example.com/x)',
        '[missing file](docs/nope.md)',
        '`[in code](docs/nope.md)`',
        '```',
        '[in a fence](docs/nope.md)',
        '```',
      ].join('\n'),
      'docs/a.md': '# A\n\n## Second part\n\n## Again\n\n## Again\n\n[ok](#again-1) [bad](#again-2) [missing anchor](../README.md#no-such-heading)\n',
    });
    const report = checkDocLinks(root);
    expect(report.broken).toEqual([
      'README.md:3: docs/nope.md (no such file)',
      'docs/a.md:9: #again-2 (no heading with that anchor in docs/a.md)',
      'docs/a.md:9: ../README.md#no-such-heading (no heading with that anchor in README.md)',
    ]);
    expect(report.checked).toBe(7);
  });

  it('checks links into docs/reference/api/ only once it exists', () => {
    const files = { 'README.md': '[api](docs/reference/api/README.md#session)\n', 'docs/README.md': '[api](reference/api/)\n' };
    const before = checkDocLinks(tree(files));
    expect(before.broken).toEqual([]);
    expect(before.skipped).toEqual(['README.md:1: docs/reference/api/README.md#session', 'docs/README.md:1: reference/api/']);

    const after = checkDocLinks(tree({ ...files, 'docs/reference/api/README.md': '# API\n\n## Other\n\n[generated, not scanned](nope.md)\n' }));
    expect(after.skipped).toEqual([]);
    expect(after.broken).toEqual(['README.md:1: docs/reference/api/README.md#session (no heading with that anchor in docs/reference/api/README.md)']);
  });
});
