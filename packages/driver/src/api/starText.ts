// Star items in expression text (`'*'`, `'s.*'`, `` '`a.b`.c.*' ``), which select expands: selectExpr and expr read them.
/** A name in expression text: plain, or in backticks (a doubled backtick inside stands for one). */
const NAME_PART = '(?:`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*)';
const STAR_TEXT = new RegExp(`^\\s*((?:${NAME_PART}\\s*\\.\\s*)*)\\*\\s*$`);

/** `'*'` or `'a.b.*'` as expression text, as the name select expands; undefined for any other text. */
export function starTarget(text: string): string | undefined {
  const m = STAR_TEXT.exec(text);
  if (m === null) return undefined;
  const parts = [...m[1]!.matchAll(new RegExp(NAME_PART, 'g'))].map(([p]) => (p.startsWith('`') ? p.slice(1, -1).replace(/``/g, '`') : p));
  return [...parts, '*'].join('.');
}
