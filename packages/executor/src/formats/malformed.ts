/** What a reader does with a malformed record, by Spark parse mode. */
import { SluiceError } from '@sluice/state';
import type { ParseMode } from '../task/messages.js';
import type { Row } from '../schema/types.js';

export interface Malformed {
  message: string;
  column?: string;
}

/** Returns nothing; pushes the row Spark's mode asks for, or throws in FAILFAST. */
export type OnMalformed = (rows: Row[], row: Row, line: string, lineNo: number, file: string, why: () => Malformed) => void;

/** `inSchema`: the corrupt-record column when the schema declares it, which gets the raw line. */
export function malformedHandler(format: 'json' | 'csv', mode: ParseMode, inSchema: string | null): OnMalformed {
  return (rows, row, line, lineNo, file, why) => {
    if (mode === 'DROPMALFORMED') return;
    if (mode === 'FAILFAST') {
      const m = why();
      throw new SluiceError(
        'MALFORMED_RECORD',
        `malformed ${format.toUpperCase()} record in ${file} at line ${lineNo}: ${m.message} (mode FAILFAST; PERMISSIVE or DROPMALFORMED keep reading)`,
        { file, line: lineNo, ...(m.column !== undefined && { column: m.column }) },
      );
    }
    if (inSchema !== null) row[inSchema] = line;
    rows.push(row);
  };
}

export function preview(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
