/**
 * Reader and writer options. Keys are case-insensitive as in Spark. Each format reads the options
 * it knows through `take`; `rejectUnknown` then turns any option nobody read into a coded error,
 * so a typo (`maxFilePerTrigger`) fails at `load()`/`start()` instead of being silently ignored.
 */
import { didYouMean, SluiceError, suggest } from '@sluice/state';

/** The value of a reader's or writer's option; each format parses it (`'10'` and `10` alike). */
export type OptionValue = string | number | boolean;

export class Options {
  private readonly entries = new Map<string, { key: string; value: OptionValue }>();
  /** Options a format read, by lower-case key, as the format spells them: the known ones. */
  private readonly taken = new Map<string, string>();

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
    if (!this.taken.has(k)) this.taken.set(k, key);
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

  /**
   * Throws UNKNOWN_OPTION for the first option no format read, with the known options closest to
   * it as a "did you mean" (the format's options are those it read through `take`).
   */
  rejectUnknown(what: string, allowedHint?: readonly string[]): void {
    for (const [k, { key }] of this.entries) {
      if (this.taken.has(k)) continue;
      const suggestions = suggest(key, allowedHint ?? this.taken.values());
      const hint = allowedHint ? ` Known options: ${allowedHint.join(', ')}.` : '';
      throw new SluiceError('UNKNOWN_OPTION', `unknown option ${key} for ${what}.${didYouMean(suggestions, (n) => `\`${n}\``)}${hint}`, {
        option: key,
        suggestions,
      });
    }
  }
}
