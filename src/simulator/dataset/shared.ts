import type { Rng } from '../random.js';
import { METADATA_KEYS, METADATA_WORDS } from './vocabulary.js';

/** Generated times fall in [2019-01-01T00:00:00Z, +6 years), epoch milliseconds. */
export const TIME_BASE_MS = Date.UTC(2019, 0, 1);
export const TIME_SPAN_MS = 6 * 365 * 86_400_000;

/** 0 to 6 distinct keys with varied values: unicode, escapes, empty strings, number-like text. */
export function generateMetadata(rng: Rng): Record<string, string> {
  const metadata: Record<string, string> = {};
  const keys = rng.int(7);
  for (let k = 0; k < keys; k++) {
    const key = rng.pick(METADATA_KEYS);
    const shape = rng.int(4);
    metadata[key] =
      shape === 0
        ? String(rng.int(100_000))
        : shape === 1
          ? `${rng.pick(METADATA_WORDS)} ${rng.int(1000)}`
          : rng.pick(METADATA_WORDS);
  }
  return metadata;
}

/** The platform's metadata filter (POST /list and /aggregate only): every pair must be in the item's metadata. */
export interface MetadataFilter {
  metadata?: Record<string, string>;
}

/** Whether `metadata` holds every pair of `wanted`; no filter matches all. */
export function holdsMetadata(
  metadata: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, string>> | undefined,
): boolean {
  if (wanted === undefined) return true;
  return Object.entries(wanted).every(([key, value]) => metadata?.[key] === value);
}
