/**
 * "Did you mean" for a misspelled column or option, as Spark's UNRESOLVED_COLUMN.WITH_SUGGESTION
 * gives it: the candidates ordered by Levenshtein distance to the name (ties keep their order),
 * at most five. Names resolve ignoring case, so the distance ignores case too.
 */

/** Edit distance (insertions, deletions, substitutions) between two strings. */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

export const MAX_SUGGESTIONS = 5;

/** The candidates closest to `name`, closest first, each once, at most `limit`. */
export function suggest(name: string, candidates: Iterable<string>, limit = MAX_SUGGESTIONS): string[] {
  const lower = name.toLowerCase();
  const seen = new Set<string>();
  const scored: Array<{ c: string; d: number; i: number }> = [];
  for (const c of candidates) {
    if (seen.has(c)) continue;
    seen.add(c);
    scored.push({ c, d: levenshtein(lower, c.toLowerCase()), i: scored.length });
  }
  return scored
    .sort((x, y) => x.d - y.d || x.i - y.i)
    .slice(0, limit)
    .map((s) => s.c);
}

/** Spark's toSQLId: each part of a dotted name in backticks (`window`.`start`). */
export function quoteId(name: string): string {
  return name
    .split('.')
    .map((p) => `\`${p.replace(/`/g, '``')}\``)
    .join('.');
}

/** " Did you mean one of the following? [`a`, `b`]." ('' without suggestions). */
export function didYouMean(suggestions: readonly string[], quote: (name: string) => string = quoteId): string {
  return suggestions.length === 0 ? '' : ` Did you mean one of the following? [${suggestions.map(quote).join(', ')}].`;
}
