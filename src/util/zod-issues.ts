import type { z } from 'zod';

/** Key names whose values are never echoed back in an error. */
const SECRET_KEY = /secret|password|api-?keys?|token|cookie/i;

/**
 * Renders zod issues as one line each naming the key path, what was expected and what was got,
 * e.g. `faults.rate429: Too big: expected number to be <=1 (got 2)`.
 *
 * Only a scalar found at the issue's own key is echoed, and never under a secret-looking key: an
 * object is described by its type alone, and an unknown key by its name alone, so a credential
 * under a misspelled key (`apikey:`, `client_secret:`) cannot reach the message.
 */
export function formatZodIssues(error: z.ZodError, input?: unknown): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.');
      return `${path}: ${issue.message}${issue.code === 'unrecognized_keys' ? '' : got(input, issue.path)}`;
    })
    .join('; ');
}

function got(input: unknown, path: readonly PropertyKey[]): string {
  if (input === undefined) return '';
  const value = valueAt(input, path);
  if (value === undefined) return '';
  if (path.some((key) => SECRET_KEY.test(String(key)))) return ' (got [redacted])';
  if (value === null || typeof value !== 'object') return ` (got ${JSON.stringify(value)})`;
  return ` (got ${Array.isArray(value) ? 'a list' : 'a mapping'})`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
