/**
 * The JSON functions: from_json and to_json, JSONPath and JSON text's arrays and objects,
 * schema_of_json and json_tuple.
 */
import { parseSchema, schemaToDDL, type Expr, type Schema } from '@sluice/executor';
import { Column, toColumn } from '../Column.js';
import { jsonTuple } from '../sql/sqlFunctions.js';
import { call, text } from './args.js';

/** A schema argument: DDL text ('a INT, b ARRAY<STRING>'), or a schema object or field list as session.readStream.schema takes. */
const schemaText = (schema: string | Record<string, string | object> | Schema): Expr =>
  text(typeof schema === 'string' ? schema : schemaToDDL(parseSchema(schema, 'from_json schema')));
const optionsMap = (options: Record<string, string>): Expr[] =>
  Object.keys(options).length === 0
    ? []
    : [
        call(
          'map',
          Object.entries(options).flatMap(([k, v]) => [text(k), text(String(v))]),
        ).expr,
      ];

/** from_json(c, schema[, { mode }]): JSON text as a struct (or the ARRAY or MAP type given); PERMISSIVE (default) or FAILFAST. */
export const from_json = (c: Column | string, schema: string | Record<string, string | object> | Schema, options: Record<string, string> = {}): Column =>
  call('from_json', [toColumn(c).expr, schemaText(schema), ...optionsMap(options)]);
/** A struct, array or map as JSON text. */
export const to_json = (c: Column | string): Column => call('to_json', [toColumn(c).expr]);
/** get_json_object(c, path): the value at a JSONPath ('$.a.b[0]') as text. */
export const get_json_object = (c: Column | string, path: string): Column => call('get_json_object', [toColumn(c).expr, text(path)]);
/** The number of elements of a JSON array text (null if it is not one). */
export const json_array_length = (c: Column | string): Column => call('json_array_length', [toColumn(c).expr]);
/** The keys of a JSON object text, as an array (null if it is not one). */
export const json_object_keys = (c: Column | string): Column => call('json_object_keys', [toColumn(c).expr]);
/** schema_of_json(json): the DDL of the type Spark infers for a JSON text. */
export const schema_of_json = (json: string | Column): Column => call('schema_of_json', [text(json)]);
/** json_tuple(c, ...fields): a generator giving one row whose columns c0, c1, ... are the fields' values as text. */
export const json_tuple = (c: Column | string, ...fields: string[]): Column => new Column(jsonTuple(toColumn(c).expr, fields.map(text)));
