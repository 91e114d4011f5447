/**
 * Reader and writer options. Keys are case-insensitive as in Spark. Each format reads the options
 * it knows through `take`; `rejectUnknown` then turns any option nobody read into a coded error,
 * so a typo (`maxFilePerTrigger`) fails at `load()`/`start()` instead of being silently ignored.
 */
import { SluiceError } from '@sluice/state';

export type OptionValue = string | number | boolean;

export class Options {
  private readonly entries = new Map<string, { key: string; value: OptionValue }>();
  private readonly taken = new Set<string>();

  constructor(init: Iterable<[string, OptionValue]> = []) {
    for (const [k, v] of init) this.set(k, v);
  }

  set(key: string, value: OptionValue): void {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new SluiceError('INVALID_OPTION', `option ${key} must be a string, number or boolean`, { option: key });
    }
    this.entries.set(key.toLowerCase(), { key, value });
  }

  take(key: string): OptionValue | undefined {
    const k = key.toLowerCase();
    this.taken.add(k);
    return this.entries.get(k)?.value;
  }

  has(key: string): boolean {
    return this.entries.has(key.toLowerCase());
  }

  copy(): Options {
    const o = new Options();
    for (const { key, value } of this.entries.values()) o.set(key, value);
    return o;
  }

  rejectUnknown(what: string, allowedHint?: readonly string[]): void {
    for (const [k, { key }] of this.entries) {
      if (this.taken.has(k)) continue;
      const hint = allowedHint ? `; known options: ${allowedHint.join(', ')}` : '';
      throw new SluiceError('UNKNOWN_OPTION', `unknown option ${key} for ${what}${hint}`, { option: key });
    }
  }
}
