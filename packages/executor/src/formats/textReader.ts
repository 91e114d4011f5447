/** The text format: one row per line, in the schema's single STRING column. */
import type { Row, Schema } from '../schema/types.js';
import type { Reader } from './readers.js';
import { litKey } from './rowBuilders.js';
import { forEachLine } from './sourceLines.js';

export function compileTextReader(schema: Schema): Reader {
  const name = schema[0]?.name ?? 'value';
  const make = new Function('l', `return {${litKey(name)}: l};`) as (l: string) => Row;
  return (text) => {
    const rows: Row[] = [];
    forEachLine(text, (line) => void rows.push(make(line)));
    return rows;
  };
}
