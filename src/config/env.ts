/**
 * `${ENV_VAR}` references in configuration strings. Configuration problems never echo their
 * values (`redact`); what the logs mask is decided by the fields' `secret` flag instead
 * (`secret-values.ts`), so a broker address from the environment stays readable there.
 */

/** The result of substituting the references in one string. */
export interface Substitution {
  /** The string with every reference replaced (`$${` stays a literal `${`). */
  readonly value: string;
  /** Whether the string was exactly one reference, so it may stand for a number or boolean too. */
  readonly whole: boolean;
  /** Whether any reference was replaced. */
  readonly substituted: boolean;
  /** What went wrong: an unset variable, a bad name, an unterminated reference. */
  readonly errors: readonly string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REFERENCE = /\$\$\{|\$\{([^}]*)(\}|$)/g;

/** Whether `text` holds a reference or an escaped `$${`. */
export function hasReference(text: string): boolean {
  return text.includes('${');
}

/** Replaces each `${NAME}` in `text` with `env[NAME]`. */
export function substituteEnv(text: string, env: Readonly<Record<string, string | undefined>>): Substitution {
  const errors: string[] = [];
  let substituted = false;
  const value = text.replace(REFERENCE, (match, name: string | undefined, close: string | undefined) => {
    if (match === '$${') return '${';
    if (close !== '}') {
      errors.push("unterminated '${' reference: write ${NAME}, or $${ for a literal '${'");
      return match;
    }
    if (!NAME.test(name ?? '')) {
      errors.push(
        `'${name ?? ''}' is not an environment variable name (expected letters, digits and '_', not starting with a digit)`,
      );
      return match;
    }
    const found = env[name!];
    if (found === undefined) {
      errors.push(`environment variable '${name!}' is not set: export it before starting the gateway`);
      return match;
    }
    substituted = true;
    return found;
  });
  const whole = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(text);
  return { value, whole, substituted, errors };
}

/**
 * Replaces every occurrence of a secret in `text` with `***`. Very short values are left alone:
 * masking every `1` would garble messages more than it protects.
 */
export function redact(text: string, secrets: Iterable<string>): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join('***');
  return result;
}
