/** The CSV reader: one record per line, RFC 4180 quoting inside the line, optional header. */
import { SluiceError } from '@sluice/state';
import type { ReadOptions } from '../task/messages.js';
import { dataTypeToDDL } from '../schema/schema.js';
import type { Row, Schema } from '../schema/types.js';
import { type Malformed, malformedHandler, preview } from './malformed.js';
import { corruptName } from './options.js';
import type { Reader } from './readers.js';
import { BAD, compileTokenBuilder, csvConv, type Flag, type TextFormats } from './rowBuilders.js';
import { forEachLine, isBlank } from './sourceLines.js';

/** Tokens past the end read as undefined: a column absent from the header points here. */
const kMissing = 0x3fffffff;

export function compileCsvReader(schema: Schema, options: ReadOptions): Reader {
  const corrupt = corruptName(options);
  const inSchema = schema.some((f) => f.name === corrupt) ? corrupt : null;
  const dataFields = schema.filter((f) => f.name !== corrupt);
  const malformed = malformedHandler('csv', options.mode, inSchema);

  const sep = options.sep;
  const flag: Flag = { bad: false };
  const bindBuilder = compileTokenBuilder(schema, inSchema, flag, options);
  const positional = new Int32Array(schema.length).fill(kMissing);
  dataFields.forEach((f, pos) => {
    positional[schema.indexOf(f)] = pos;
  });
  return (text, file) => {
    const rows: Row[] = [];
    let map: Int32Array = positional;
    let build = options.header ? null : bindBuilder(map);
    let expected = dataFields.length;
    forEachLine(text, (line, lineNo) => {
      if (isBlank(line)) return;
      const t = splitCsvLine(line, sep);
      if (build === null) {
        if (t === null) {
          throw new SluiceError('MALFORMED_RECORD', `malformed CSV header in ${file} at line ${lineNo}: unbalanced quotes`, {
            file,
            line: lineNo,
          });
        }
        map = headerMap(schema, corrupt, t);
        build = bindBuilder(map);
        expected = t.length;
        return;
      }
      if (t === null) {
        return malformed(rows, build([]), line, lineNo, file, () => ({ message: 'unbalanced quotes' }));
      }
      const row = build(t);
      if (flag.bad || t.length !== expected) {
        const n = t.length;
        return malformed(rows, row, line, lineNo, file, () =>
          n !== expected ? { message: `expected ${expected} fields, found ${n}` } : diagnoseCsv(schema, corrupt, map, t, options),
        );
      }
      rows.push(row);
    });
    return rows;
  };
}

/** Header names map to schema columns exactly, else case-insensitively; first match wins. */
function headerMap(schema: Schema, corrupt: string, header: Array<string | null>): Int32Array {
  const names = header.map((h) => h ?? '');
  const lower = names.map((h) => h.toLowerCase());
  const m = new Int32Array(schema.length).fill(kMissing);
  schema.forEach((f, i) => {
    if (f.name === corrupt) return;
    let k = names.indexOf(f.name);
    if (k < 0) k = lower.indexOf(f.name.toLowerCase());
    if (k >= 0) m[i] = k;
  });
  return m;
}

function diagnoseCsv(schema: Schema, corrupt: string, m: Int32Array, t: Array<string | null>, formats: TextFormats): Malformed {
  for (let i = 0; i < schema.length; i++) {
    const f = schema[i]!;
    const v = t[m[i]!];
    if (f.name === corrupt || f.type === 'string' || v == null || v === '') continue;
    if (csvConv(f.type, formats)(v) === BAD) {
      return { message: `column '${f.name}': cannot read ${preview(v)} as ${dataTypeToDDL(f.type)}`, column: f.name };
    }
  }
  return { message: 'a value does not match the schema' };
}

/**
 * One CSV line to fields: null for an empty unquoted field, '' for `""`. Returns null for an
 * unterminated quote or text after a closing quote. A quote inside an unquoted field is literal.
 */
export function splitCsvLine(line: string, sep: string): Array<string | null> | null {
  if (line.indexOf('"') === -1) {
    const parts: Array<string | null> = line.split(sep);
    for (let i = 0; i < parts.length; i++) if (parts[i] === '') parts[i] = null;
    return parts;
  }
  const out: Array<string | null> = [];
  const n = line.length;
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34) {
      let j = i + 1;
      let val = '';
      for (;;) {
        const q = line.indexOf('"', j);
        if (q === -1) return null;
        if (line.charCodeAt(q + 1) === 34) {
          val += line.slice(j, q + 1);
          j = q + 2;
          continue;
        }
        val += line.slice(j, q);
        i = q + 1;
        break;
      }
      out.push(val);
      if (i === n) return out;
      if (!line.startsWith(sep, i)) return null;
      i += sep.length;
    } else {
      const k = line.indexOf(sep, i);
      const tok = line.slice(i, k === -1 ? n : k);
      out.push(tok === '' ? null : tok);
      if (k === -1) return out;
      i = k + sep.length;
    }
  }
}
