/**
 * Masks credentials in text bound for logs and the admin API: known secret values (fields
 * declared secret, the admin token) and, in any URL, the password of its user info. Hosts and
 * ports are never masked.
 */
import { MASK, maskUrlCredentials } from '../config/credentials.js';

/** Values shorter than this are left alone: masking every `1` would garble more than it protects. */
const SHORTEST = 4;

/** A growing set of secret values (a reload adds those of the new configuration), and the masking. */
export class SecretMask {
  /** Each secret as it is and as it appears inside a JSON string (a `"` or `\` in it is escaped). */
  readonly #forms = new Set<string>();

  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  /** Adds secret values; from now on they are masked. */
  add(values: Iterable<string>): void {
    for (const value of values) {
      if (value.length < SHORTEST) continue;
      this.#forms.add(value);
      this.#forms.add(JSON.stringify(value).slice(1, -1));
    }
  }

  /** `text` with every secret value and every URL password replaced by `***`. */
  mask(text: string): string {
    let result = text;
    for (const form of this.#forms) if (result.includes(form)) result = result.split(form).join(MASK);
    return maskUrlCredentials(result);
  }
}
