import { createHash } from 'node:crypto';

/**
 * The digest a state file carries of its own content, so that a reader can tell the file as
 * bulk-extract wrote it from one edited by hand or damaged since: `digest: "sha256:<hex>"`, the
 * SHA-256 of the file's value without `digest` in canonical JSON (canonicalJson). Canonical, so
 * that the digest depends on the content only: neither the order of an object's keys nor
 * whitespace count, and a file reformatted by a JSON tool still matches. The checkpoint is written
 * after every commit, so this is measured (bench/RESULTS.md, "Checkpoint digest").
 */

export const DIGEST_FIELD = 'digest';
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * JSON with every object's keys in one order whatever order they were written in, and no
 * whitespace: each object copied with its keys added sorted (by UTF-16 code units), so that
 * JavaScript lists them integer-like keys first (ascending), then the others in that order. Values
 * as JSON.stringify writes them; members whose value is undefined are left out, as it leaves them.
 * Copying and letting JSON.stringify write costs a third of writing it out key by key.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedCopy(value)) ?? 'null';
}

function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(sortedCopy);
  const object = value as Record<string, unknown>;
  // No prototype: a key `__proto__` (JSON.parse makes it an own key) stays a key of the copy.
  const copy = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(object).sort()) copy[key] = sortedCopy(object[key]);
  return copy;
}

/** The digest of a state file's value: of everything in it but its own `digest`. */
export function digestOf(value: object): string {
  const { [DIGEST_FIELD]: _, ...content } = value as Record<string, unknown>;
  return `sha256:${createHash('sha256').update(canonicalJson(content)).digest('hex')}`;
}

/** `value` with its digest, last: what the one writer of a digested state file writes. */
export function withDigest<T extends object>(value: T): T & { digest: string } {
  return { ...value, [DIGEST_FIELD]: digestOf(value) };
}

/** What is wrong with a parsed state file's digest (`required`: its version always carries one), or undefined. */
export function digestProblem(value: Record<string, unknown>, required: boolean): 'missing' | 'mismatch' | undefined {
  const digest = value[DIGEST_FIELD];
  if (digest === undefined) return required ? 'missing' : undefined;
  return typeof digest === 'string' && DIGEST.test(digest) && digest === digestOf(value) ? undefined : 'mismatch';
}

/** A parsed state file's value without its digest, for its schema. */
export function withoutDigest(value: Record<string, unknown>): Record<string, unknown> {
  const { [DIGEST_FIELD]: _, ...content } = value;
  return content;
}
