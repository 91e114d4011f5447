/** The JSON lines reader: one JSON object per line. */
import type { ReadOptions } from '../task/messages.js';
import { dataTypeToDDL } from '../schema/schema.js';
import type { DataType, Field, Row, Schema } from '../schema/types.js';
import { type Malformed, malformedHandler, preview } from './malformed.js';
import { corruptName } from './options.js';
import type { Reader } from './readers.js';
import { BAD, type Conv, compileObjectBuilder, type Flag, jsonConv } from './rowBuilders.js';
import { forEachLine, isBlank } from './sourceLines.js';

/** One line of a JSON-lines file into `rows`: its row, or what its parse mode makes of it. */
export type JsonLineReader = (line: string, lineNo: number, file: string, rows: Row[]) => void;

export function compileJsonLineReader(schema: Schema, options: ReadOptions): JsonLineReader {
  const corrupt = corruptName(options);
  const inSchema = schema.some((f) => f.name === corrupt) ? corrupt : null;
  const dataFields = schema.filter((f) => f.name !== corrupt);
  const malformed = malformedHandler('json', options.mode, inSchema);

  const flag: Flag = { bad: false };
  const build = compileObjectBuilder(schema, inSchema, flag, options);
  return (line, lineNo, file, rows) => {
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch (e) {
      const message = `invalid JSON (${(e as Error).message})`;
      return malformed(rows, build({}), line, lineNo, file, () => ({ message }));
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) {
      return malformed(rows, build({}), line, lineNo, file, () => ({ message: 'a line must hold one JSON object' }));
    }
    const row = build(o as Record<string, unknown>);
    if (flag.bad) return malformed(rows, row, line, lineNo, file, () => diagnose(dataFields, o, (t) => jsonConv(t, options), ''));
    rows.push(row);
  };
}

export function compileJsonReader(schema: Schema, options: ReadOptions): Reader {
  const readLine = compileJsonLineReader(schema, options);
  return (text, file) => {
    const rows: Row[] = [];
    forEachLine(text, (line, lineNo) => {
      if (!isBlank(line)) readLine(line, lineNo, file, rows);
    });
    return rows;
  };
}

function diagnose(fields: Field[], o: unknown, conv: (t: DataType) => Conv, prefix: string): Malformed {
  for (const f of fields) {
    const v = Object.hasOwn(o as object, f.name) ? (o as Record<string, unknown>)[f.name] : undefined;
    if (v == null || conv(f.type)(v) !== BAD) continue;
    const column = prefix + f.name;
    if (typeof f.type === 'object' && 'struct' in f.type && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return diagnose(f.type.struct, v, conv, `${column}.`);
    }
    return { message: `column '${column}': cannot read ${preview(v)} as ${dataTypeToDDL(f.type)}`, column };
  }
  return { message: 'a value does not match the schema' };
}
