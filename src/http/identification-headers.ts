import { VERSION } from '../version.js';

/** `x-cdp-app` when the job sets no `source.appName`. */
export const DEFAULT_APP_NAME = 'bulk-extract';

/** Longest `source.appName`, in characters. */
export const MAX_APP_NAME_LENGTH = 100;

/** `x-cdp-sdk`: the client and its version, `name:version` as the platform's SDKs send theirs. */
export const SDK_ID = `bulk-extract:${VERSION}`;

/**
 * The headers the platform's SDKs send to identify the application (`x-cdp-app`) and the client
 * library (`x-cdp-sdk`), so the platform's operators can tell whose traffic they see. They are for
 * the platform only: the identity provider is another party and gets neither.
 */
export function identificationHeaders(appName: string): Record<string, string> {
  return { 'x-cdp-app': appName, 'x-cdp-sdk': SDK_ID };
}

/** Printable ASCII, spaces inside but not at either end (a server would trim them off). */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * What makes `name` unusable as the `x-cdp-app` header value, or undefined when it is fine: it must
 * be 1 to 100 characters of printable ASCII, without control characters and without a space at
 * either end (RFC 9110 section 5.5 allows no more in a header value that every server reads alike).
 */
export function appNameProblem(name: string): string | undefined {
  const sentAs = 'it is sent as the x-cdp-app header';
  if (name === '') return `expected a non-empty name (${sentAs})`;
  if (name.length > MAX_APP_NAME_LENGTH) {
    return `expected at most ${MAX_APP_NAME_LENGTH} characters (${sentAs}), found ${name.length}`;
  }
  if (HEADER_VALUE.test(name)) return undefined;
  const bad = [...name].find((char) => !/^[\x20-\x7e]$/.test(char));
  const what = bad === undefined ? 'a space at the start or end' : codePoint(bad);
  return `expected printable ASCII without control characters or spaces at either end (${sentAs}), found ${what}`;
}

/** `U+00E6 'æ'`, or `U+000A` alone for a character that does not print. */
function codePoint(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0) ? hex : `${hex} '${char}'`;
}
