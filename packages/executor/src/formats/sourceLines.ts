/** Source files read as text and walked line by line. */
import { readFileSync } from 'node:fs';
import { SluiceError } from '@sluice/state';

export function readSourceFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new SluiceError('SOURCE_FILE_UNREADABLE', `cannot read source file ${path}: ${(e as Error).message}`, {
      file: path,
      cause: e,
    });
  }
}

/** Calls `fn` per line (1-based numbers), without '\r\n' endings or the empty tail after a final '\n'. */
export function forEachLine(text: string, fn: (line: string, lineNo: number) => void): void {
  forEachLineRange(text, (start, end, lineNo) => fn(text.slice(start, end), lineNo));
}

/** The same lines as forEachLine, as ranges text[start, end) (a BOM first is skipped). */
export function forEachLineRange(text: string, fn: (start: number, end: number, lineNo: number) => void): void {
  const len = text.length;
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let lineNo = 0;
  while (start < len) {
    let end = text.indexOf('\n', start);
    const next = end === -1 ? len : end + 1;
    if (end === -1) end = len;
    if (end > start && text.charCodeAt(end - 1) === 13) end--;
    fn(start, end, ++lineNo);
    start = next;
  }
}

export function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '');
}
