/**
 * Spark's hash (Murmur3, seed 42, bit for bit), format_string (Java's String.format: flags, width,
 * precision and the conversions s d f e x o c b %), and unbase64 and unhex. Sluice has no BINARY
 * type, so the bytes unbase64 and unhex decode come back as UTF-8 text (Spark's decode(x, 'UTF-8')
 * of its binary result).
 */
import { SluiceError } from '@sluice/state';
import type { DataType } from '../schema/types.js';
import { createCast, isAtomicType, typeName } from '../schema/values.js';
import type { ScalarFunction } from './mathFunctions.js';
import { murmur3Value } from './sparkHashes.js';

export type MiscFunctionName = 'hash' | 'format_string' | 'unbase64' | 'unhex' | 'typeof';

/** Spark's simpleString of a type, as typeof prints it: int, bigint, array<int>, struct<a:int,b:string>. */
function simpleString(t: DataType): string {
  if (typeof t === 'object') {
    if ('array' in t) return `array<${simpleString(t.array)}>`;
    if ('map' in t) return `map<${simpleString(t.map.key)},${simpleString(t.map.value)}>`;
    return `struct<${t.struct.map((f) => `${f.name}:${simpleString(f.type)}`).join(',')}>`;
  }
  return t === 'long' ? 'bigint' : t === 'null' ? 'void' : t;
}

const FORMAT_RE = /%(\d+\$)?([-#+ 0,(]*)(\d+)?(?:\.(\d+))?([sSdfeExXocbBn%])/g;

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Java's String.format over values of `types` (a conversion that does not fit its value is an error, as in Java). */
function formatString(fmt: string, args: unknown[], types: DataType[]): string {
  let next = 0;
  return fmt.replace(FORMAT_RE, (whole, index: string | undefined, flags: string, width: string | undefined, precision: string | undefined, conv: string) => {
    if (conv === '%') return '%';
    if (conv === 'n') return '\n';
    const at = index === undefined ? next++ : Number(index.slice(0, -1)) - 1;
    const v = args[at];
    const t = types[at] ?? 'null';
    let s: string;
    const num = (): number => {
      if (typeof v !== 'number') throw new SluiceError('INVALID_EXPRESSION', `format_string: ${whole} needs a number, not ${typeName(t)}`);
      return v;
    };
    switch (conv.toLowerCase()) {
      case 's':
        s = v == null ? 'null' : String(createCast(t, 'string')?.(v) ?? v);
        if (precision !== undefined) s = s.slice(0, Number(precision));
        break;
      case 'b':
        s = v == null ? 'false' : typeof v === 'boolean' ? String(v) : 'true';
        break;
      case 'c':
        s = v == null ? 'null' : typeof v === 'number' ? String.fromCodePoint(v) : (String(v)[0] ?? '');
        break;
      case 'd': {
        if (v == null) {
          s = 'null';
          break;
        }
        const n = Math.trunc(num());
        const digits = String(Math.abs(n));
        s = (n < 0 ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '') + (flags.includes(',') ? groupThousands(digits) : digits);
        break;
      }
      case 'f':
      case 'e': {
        if (v == null) {
          s = 'null';
          break;
        }
        const x = num();
        const p = precision === undefined ? 6 : Number(precision);
        let body =
          conv.toLowerCase() === 'f'
            ? Math.abs(x).toFixed(p)
            : Math.abs(x)
                .toExponential(p)
                .replace(/e([+-])(\d)$/, 'e$10$2');
        if (flags.includes(',') && conv.toLowerCase() === 'f') body = body.replace(/^\d+/, (d) => groupThousands(d));
        s = (x < 0 ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '') + body;
        break;
      }
      case 'x':
      case 'o': {
        if (v == null) {
          s = 'null';
          break;
        }
        const n = BigInt.asUintN(t === 'int' ? 32 : 64, BigInt(Math.trunc(num())));
        s = (flags.includes('#') ? (conv.toLowerCase() === 'x' ? '0x' : '0') : '') + n.toString(conv.toLowerCase() === 'x' ? 16 : 8);
        break;
      }
      default:
        s = whole;
    }
    if (conv === conv.toUpperCase() && conv !== conv.toLowerCase()) s = s.toUpperCase();
    const w = width === undefined ? 0 : Number(width);
    if (s.length < w) {
      if (flags.includes('-')) s = s.padEnd(w);
      else if (flags.includes('0') && /^[+\- ]?[0-9.,a-fA-F]/.test(s)) {
        const sign = /^[+\- ]/.test(s) ? s.charAt(0) : '';
        s = sign + s.slice(sign.length).padStart(w - sign.length, '0');
      } else s = s.padStart(w);
    }
    return s;
  });
}

const textOnly = (args: DataType[]): boolean => args.every(isAtomicType);

export const MISC_FUNCTIONS: Record<MiscFunctionName, ScalarFunction> = {
  /** hash(x...): Spark's Murmur3 hash of the values (an INT); nulls are skipped. */
  hash: {
    arity: [1, Infinity],
    types: (args) => ({ args, result: 'int' }),
    nulls: true,
    bind:
      (types) =>
      (...xs) =>
        xs.reduce<number>((h, x, i) => murmur3Value(x, types[i] as DataType, h), 42),
  },
  /** format_string(fmt, x...), also printf: Java's String.format. */
  format_string: {
    arity: [1, Infinity],
    types: (args) =>
      isAtomicType(args[0] ?? 'null')
        ? { args: ['string', ...args.slice(1)], result: 'string' }
        : `needs a format string, not ${typeName(args[0] as DataType)}`,
    nulls: true,
    bind:
      (types) =>
      (fmt, ...xs) =>
        fmt == null ? null : formatString(fmt as string, xs, types.slice(1)),
  },
  /** typeof(x): the name of x's type. */
  typeof: {
    arity: [1, 1],
    types: (args) => ({ args, result: 'string' }),
    nulls: true,
    bind:
      ([t]) =>
      () =>
        simpleString(t as DataType),
  },
  unbase64: {
    arity: [1, 1],
    types: (args) => (textOnly(args) ? { args: ['string'], result: 'string' } : `needs text, not ${typeName(args[0] as DataType)}`),
    value: (s) => Buffer.from(s as string, 'base64').toString('utf8'),
  },
  /** unhex(s): the bytes of the hex digits (an odd count gets a leading 0); null for a non-hex digit. */
  unhex: {
    arity: [1, 1],
    types: (args) => (textOnly(args) ? { args: ['string'], result: 'string' } : `needs text, not ${typeName(args[0] as DataType)}`),
    value: (s) => {
      const hex = (s as string).length % 2 === 1 ? `0${s as string}` : (s as string);
      return /^[0-9a-fA-F]*$/.test(hex) ? Buffer.from(hex, 'hex').toString('utf8') : null;
    },
  },
};
