import type { z } from 'zod';

/** Key names whose values are never echoed back in an error. */
const SECRET_KEY = /secret|password|api-?keys?|token|cookie/i;

/** One zod issue, ready to show: the key path it is at and what is wrong there. */
export interface IssueLine {
  path: readonly PropertyKey[];
  message: string;
}

/** What an issue's message gains in parentheses, or undefined for nothing. */
export interface IssueHints {
  /** For an unknown key at `path`: the key meant, or where the key belongs (`did you mean "limit"?`). */
  unknownKey?: (path: readonly PropertyKey[], key: string) => string | undefined;
  /** For a text that is none of the values `allowed` there (an enum, a union's discriminator): the one meant. */
  unknownValue?: (value: string, allowed: readonly string[]) => string | undefined;
}

/** `streams.0.partitions`; `(root)` for the top. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

/**
 * Describes zod issues one line each, naming what was expected and what was got, e.g.
 * `{ path: ['faults', 'rate429'], message: 'Too big: expected number to be <=1 (got 2)' }`. An issue
 * about several unknown keys becomes one line per key, with the `unknownKey` hint if there is one:
 * `Unrecognized key: "partitons" (did you mean "partitions"?)`; a text that is none of the values
 * allowed gets the `unknownValue` hint after what was got: `(got "timeSeries"; did you mean "timeseries"?)`.
 *
 * Only a scalar found at the issue's own key is echoed, and never under a secret-looking key: an
 * object is described by its type alone, an unknown key by its name alone (so a credential under a
 * misspelled key, `apikey:` or `client_secret:`, cannot reach the message), and a URL without the
 * user and password it may hold.
 */
export function describeZodIssues(error: z.ZodError, input?: unknown, hints: IssueHints = {}): IssueLine[] {
  return error.issues.flatMap((issue): IssueLine[] => {
    if (issue.code !== 'unrecognized_keys') {
      const meant = valueHint(issue, input, hints);
      const shown = got(input, issue.path);
      const detail = meant === undefined ? shown : shown === '' ? ` (${meant})` : `${shown.slice(0, -1)}; ${meant})`;
      return [{ path: issue.path, message: `${issue.message}${detail}` }];
    }
    return issue.keys.map((key) => {
      const proposal = hints.unknownKey?.(issue.path, key);
      const hint = proposal === undefined ? '' : ` (${proposal})`;
      return { path: issue.path, message: `Unrecognized key: ${JSON.stringify(key)}${hint}` };
    });
  });
}

/** The unknownValue hint of an issue whose value is none of a list of texts (an enum, a discriminator). */
function valueHint(issue: z.core.$ZodIssue, input: unknown, hints: IssueHints): string | undefined {
  if (hints.unknownValue === undefined || input === undefined) return undefined;
  const value = valueAt(input, issue.path);
  if (typeof value !== 'string' || issue.path.some((key) => SECRET_KEY.test(String(key)))) return undefined;
  const allowed = issue.code === 'invalid_value' ? issue.values : issue.code === 'invalid_union' ? optionsOf(issue) : [];
  const texts = allowed.filter((option): option is string => typeof option === 'string');
  return texts.length === 0 ? undefined : hints.unknownValue(value, texts);
}

/** A discriminated union's options, which zod gives its "no matching discriminator" issue. */
function optionsOf(issue: z.core.$ZodIssueInvalidUnion): readonly unknown[] {
  const { options } = issue as { options?: unknown };
  return Array.isArray(options) ? options : [];
}

/** The issues on one line, `path: message; path: message`. */
export function formatZodIssues(error: z.ZodError, input?: unknown): string {
  return describeZodIssues(error, input)
    .map((line) => `${formatPath(line.path)}: ${line.message}`)
    .join('; ');
}

function got(input: unknown, path: readonly PropertyKey[]): string {
  if (input === undefined) return '';
  const value = valueAt(input, path);
  if (value === undefined) return '';
  if (path.some((key) => SECRET_KEY.test(String(key)))) return ' (got [redacted])';
  if (typeof value === 'string') return ` (got ${JSON.stringify(withoutUserInfo(value))})`;
  if (value === null || typeof value !== 'object') return ` (got ${JSON.stringify(value)})`;
  return ` (got ${Array.isArray(value) ? 'a list' : 'a mapping'})`;
}

/** `https://user:password@host/` shows as `https://[redacted]@host/`. */
function withoutUserInfo(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1[redacted]@');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
