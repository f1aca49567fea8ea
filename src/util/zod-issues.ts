import type { z } from 'zod';

/** Key names whose values are never echoed back in an error. */
const SECRET_KEY = /secret|password|api-?keys?|token|cookie/i;

/**
 * Renders zod issues as one line each naming the key path, what was expected and what was got,
 * e.g. `faults.rate429: Too big: expected number to be <=1 (got 2)`. Values under secret-looking
 * keys are shown as `[redacted]`.
 */
export function formatZodIssues(error: z.ZodError, input?: unknown): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.');
      const got = input === undefined ? undefined : valueAt(input, issue.path);
      const shown = issue.path.some((key) => SECRET_KEY.test(String(key)))
        ? '[redacted]'
        : JSON.stringify(got);
      return `${path}: ${issue.message}${got === undefined ? '' : ` (got ${shown})`}`;
    })
    .join('; ');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
