import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/state';
import {
  parseBoolean,
  parseBytes,
  parseDuration,
  parseEnum,
  parseJsonObject,
  parseNonNegativeNumber,
  parsePositiveInt,
  parsePositiveIntOrAuto,
} from './parsers.js';

function thrown(fn: () => unknown): SluiceError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SluiceError);
    return e as SluiceError;
  }
  throw new Error('expected a SluiceError');
}

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('parseDuration', () => {
  it.each([
    ['10 minutes', 10 * MIN],
    ['1 second', SEC],
    ['50 milliseconds', 50],
    ['2 hours', 2 * HOUR],
    ['1 day', DAY],
    ['7 days', 7 * DAY],
    ['interval 5 minutes', 5 * MIN],
    ['INTERVAL 5 MINUTES', 5 * MIN],
    ['1 minute 30 seconds', 90 * SEC],
    ['1 hour 1 minute 1 second 1 millisecond', HOUR + MIN + SEC + 1],
    ['50ms', 50],
    ['10 s', 10 * SEC],
    ['3 sec', 3 * SEC],
    ['3 secs', 3 * SEC],
    ['5min', 5 * MIN],
    ['5 mins', 5 * MIN],
    ['2h', 2 * HOUR],
    ['1 hour', HOUR],
    ['3d', 3 * DAY],
    ['1 week', 7 * DAY],
    ['1.5 seconds', 1500],
    ['0 seconds', 0],
    ['  10 minutes  ', 10 * MIN],
    ['250', 250],
  ])('%s', (input, ms) => {
    expect(parseDuration(input, 'maxFileAge')).toBe(ms);
  });

  it('takes a number as milliseconds', () => {
    expect(parseDuration(1500, 'maxFileAge')).toBe(1500);
    expect(parseDuration(0, 'maxFileAge')).toBe(0);
  });

  it('rejects garbage with INVALID_OPTION naming the option', () => {
    const e = thrown(() => parseDuration('abc', 'maxFileAge'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.option).toBe('maxFileAge');
    expect(e.message).toBe("options.maxFileAge must be a duration such as '10 minutes' (got 'abc')");
  });

  it.each(['', 'interval', '10 minutes 5', '10 fortnights', '1 month', '-5 minutes', 'minutes', '5 minutes and'])('rejects %j', (input) => {
    const e = thrown(() => parseDuration(input, 'trigger'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.option).toBe('trigger');
  });

  it('rejects negative and non-finite numbers', () => {
    for (const n of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const e = thrown(() => parseDuration(n, 'maxFileAge'));
      expect(e.code).toBe('INVALID_OPTION');
      expect(e.message).toContain(`(got ${String(n)})`);
    }
  });

  it('shows a dotted name as given', () => {
    const e = thrown(() => parseDuration('soon', 'Trigger.ProcessingTime'));
    expect(e.message).toMatch(/^Trigger\.ProcessingTime must be a duration/);
  });
});

describe('parseBytes', () => {
  it.each([
    ['10g', 10 * 1024 ** 3],
    ['10gb', 10 * 1024 ** 3],
    ['10G', 10 * 1024 ** 3],
    ['512m', 512 * 1024 ** 2],
    ['512mb', 512 * 1024 ** 2],
    ['1k', 1024],
    ['1kb', 1024],
    ['3b', 3],
    ['1t', 1024 ** 4],
    ['1.5g', 1.5 * 1024 ** 3],
    ['1.5k', 1536],
    ['2048', 2048],
    [' 10 g ', 10 * 1024 ** 3],
  ])('%s', (input, bytes) => {
    expect(parseBytes(input, 'maxBytesPerTrigger')).toBe(bytes);
  });

  it('takes a number as bytes', () => {
    expect(parseBytes(4096, 'maxBytesPerTrigger')).toBe(4096);
  });

  it.each<string | number>(['abc', '', '10x', '10 gigs', '-1g', '0', '0g', 0, -5, Number.NaN, '0.1b'])('rejects %j', (input) => {
    const e = thrown(() => parseBytes(input, 'maxBytesPerTrigger'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.option).toBe('maxBytesPerTrigger');
    expect(e.message).toMatch(/^options\.maxBytesPerTrigger must be a positive size/);
  });
});

describe('parsePositiveInt', () => {
  it('accepts positive integers as numbers or strings', () => {
    expect(parsePositiveInt(10, 'maxFilesPerTrigger')).toBe(10);
    expect(parsePositiveInt('10', 'maxFilesPerTrigger')).toBe(10);
    expect(parsePositiveInt(1, 'maxFilesPerTrigger')).toBe(1);
  });

  it.each<unknown>([0, -1, 1.5, '1.5', 'ten', '', Number.NaN, null, undefined, true, '1e3'])('rejects %j', (input) => {
    const e = thrown(() => parsePositiveInt(input, 'maxFilesPerTrigger'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.option).toBe('maxFilesPerTrigger');
    expect(e.message).toMatch(/^options\.maxFilesPerTrigger must be a positive integer \(got /);
  });
});

describe('parseBoolean', () => {
  it('accepts booleans and their strings', () => {
    expect(parseBoolean(true, 'latestFirst')).toBe(true);
    expect(parseBoolean(false, 'latestFirst')).toBe(false);
    expect(parseBoolean('true', 'latestFirst')).toBe(true);
    expect(parseBoolean('false', 'latestFirst')).toBe(false);
    expect(parseBoolean('TRUE', 'latestFirst')).toBe(true);
  });

  it.each<unknown>(['yes', 1, 0, '', null])('rejects %j', (input) => {
    const e = thrown(() => parseBoolean(input, 'latestFirst'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.option).toBe('latestFirst');
    expect(e.message).toMatch(/^options\.latestFirst must be true or false/);
  });
});

describe('parseEnum', () => {
  const modes = ['PERMISSIVE', 'DROPMALFORMED', 'FAILFAST'] as const;

  it('matches case-insensitively and returns the canonical spelling', () => {
    expect(parseEnum('failfast', modes, 'mode')).toBe('FAILFAST');
    expect(parseEnum('DropMalformed', modes, 'mode')).toBe('DROPMALFORMED');
    expect(parseEnum('archive', ['off', 'archive', 'delete'], 'cleanSource')).toBe('archive');
    expect(parseEnum('ARCHIVE', ['off', 'archive', 'delete'], 'cleanSource')).toBe('archive');
  });

  it('rejects other values, listing the allowed ones', () => {
    const e = thrown(() => parseEnum('lenient', modes, 'mode'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.option).toBe('mode');
    expect(e.message).toBe("options.mode must be one of PERMISSIVE, DROPMALFORMED, FAILFAST (got 'lenient')");
    expect(thrown(() => parseEnum(1, modes, 'mode')).code).toBe('INVALID_OPTION');
  });
});

describe('months and years (withWatermark)', () => {
  const MONTH = 31 * DAY;
  it.each([
    ['1 month', MONTH],
    ['1 year', 12 * MONTH],
    ['2 years 5 months', 29 * MONTH],
    ['interval 1 month', MONTH],
    ['INTERVAL 1 YEAR 2 DAYS', 12 * MONTH + 2 * DAY],
    ['3 mons', 3 * MONTH],
  ])('%s is accepted with months, a month being 31 days as in Spark', (input, ms) => {
    expect(parseDuration(input, 'delayThreshold', { months: true })).toBe(ms);
  });

  it('are refused elsewhere, saying why', () => {
    const e = thrown(() => parseDuration('1 month', 'windowDuration'));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.message).toBe("options.windowDuration must be a duration without months or years, which have no fixed length (got '1 month')");
  });
});

describe('one set of parsers for options and conf', () => {
  it('gives INVALID_CONF naming the key for a conf value, INVALID_OPTION for an option', () => {
    const conf = thrown(() => parsePositiveInt('1e3', 'sluice.task.maxFailures', 'conf'));
    expect(conf.code).toBe('INVALID_CONF');
    expect(conf.option).toBe('sluice.task.maxFailures');
    expect(conf.message).toBe("conf sluice.task.maxFailures must be a positive integer (got '1e3')");
    expect(thrown(() => parsePositiveInt('1e3', 'numRows')).code).toBe('INVALID_OPTION');
  });

  it('parses the remaining kinds alike', () => {
    expect(parseNonNegativeNumber('1.5', 'x')).toBe(1.5);
    expect(thrown(() => parseNonNegativeNumber(' ', 'x')).code).toBe('INVALID_OPTION');
    expect(parsePositiveIntOrAuto(' AUTO ', 'k', 'conf')).toBe('auto');
    expect(parsePositiveIntOrAuto('8', 'k', 'conf')).toBe(8);
    expect(thrown(() => parsePositiveIntOrAuto('0', 'k', 'conf')).message).toBe("conf k must be a positive integer or 'auto' (got '0')");
    expect(parseJsonObject('{"a":{"weight":2}}', 'k', 'conf')).toEqual({ a: { weight: 2 } });
    expect(thrown(() => parseJsonObject('[1,2]', 'k', 'conf')).message).toBe("conf k must be a JSON object (got '[1,2]')");
    expect(thrown(() => parseJsonObject('{', 'k', 'conf')).code).toBe('INVALID_CONF');
  });
});
