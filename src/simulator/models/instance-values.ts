import { hash3, type Rng } from '../random.js';
import { LABELS, METADATA_WORDS } from '../dataset/vocabulary.js';

/**
 * What the instance generators share: the instance spaces, identifiers, the platform's text forms
 * of timestamps and dates, and the value helpers. Everything is a pure function of its inputs.
 */

/** The instance spaces every generated instance lies in. */
export const SITES = ['sim_site_a', 'sim_site_b', 'sim_site_c'] as const;

/** A direct relation's value, a node's type, an edge's start and end: `{space, externalId}`. */
export interface NodeRef {
  space: string;
  externalId: string;
}

/** Generated instances' times fall in [2019-01-01, 2024-01-01) (+ up to a year of edits), epoch ms. */
const TIME_BASE_MS = Date.UTC(2019, 0, 1);
const TIME_SPAN_MS = 5 * 365 * 86_400_000;
const DAY_MS = 86_400_000;

/** `PREFIX-00000A`: the index in base 36, upper case, at least six digits, so text order is index order. */
export function externalIdAt(prefix: string, index: number): string {
  return `${prefix}-${index.toString(36).toUpperCase().padStart(6, '0')}`;
}

/** The index an externalId of `prefix` names, or undefined when it names none. */
export function indexOfExternalId(prefix: string, externalId: string): number | undefined {
  const digits = externalId.startsWith(`${prefix}-`) ? externalId.slice(prefix.length + 1) : '';
  if (!/^[0-9A-Z]{6,}$/.test(digits)) return undefined;
  const index = Number.parseInt(digits, 36);
  return Number.isSafeInteger(index) && externalIdAt(prefix, index) === externalId ? index : undefined;
}

/** The site a thing lies in, drawn from (seed, salt, index). */
export function siteOf(seed: number, salt: number, index: number): string {
  return SITES[hash3(seed, index, salt) % SITES.length] ?? SITES[0];
}

/** The platform's timestamp text: `2024-01-31T12:00:00.000+00:00`. */
export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00');
}

/** The platform's date text: `2024-01-31`. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** createdTime, lastUpdatedTime after it, and the version edits since creation give. */
export function generatedTimes(rng: Rng): { createdTime: number; lastUpdatedTime: number; version: number } {
  const createdTime = TIME_BASE_MS + rng.int(TIME_SPAN_MS);
  const edited = rng.next();
  if (edited < 0.3) return { createdTime, lastUpdatedTime: createdTime, version: 1 };
  return { createdTime, lastUpdatedTime: createdTime + 1 + Math.floor(edited * 365 * DAY_MS), version: 2 + rng.int(4) };
}

/** With probability `p`, `make()`; else null (a nullable property without a value). */
export function maybe<T>(rng: Rng, p: number, make: () => T): T | null {
  return rng.chance(p) ? make() : null;
}

/** 0 to `most` words: tags and aliases; an empty list now and then. */
export function words(rng: Rng, most: number): string[] {
  const count = rng.int(most + 1);
  return Array.from({ length: count }, () => (rng.chance(0.7) ? rng.pick(LABELS) : rng.pick(METADATA_WORDS)));
}

/** A timestamp within `spanDays` after `fromMs`. */
export function timeAfter(rng: Rng, fromMs: number, spanDays: number): number {
  return fromMs + rng.int(spanDays * DAY_MS);
}

/** A float32 value with a short exact decimal form: a multiple of 1/4 below `most`. */
export function quarters(rng: Rng, most: number): number {
  return rng.int(most * 4) / 4;
}

/** A float64 value with up to three decimals; sometimes negative, sometimes zero. */
export function decimal(rng: Rng, most: number): number {
  const value = Math.round(rng.next() * most * 1000) / 1000;
  return rng.chance(0.1) ? -value : value;
}
