import type { Rng } from '../random.js';
import { LABELS, METADATA_KEYS, METADATA_WORDS } from './vocabulary.js';

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

/** A GeoJSON Feature, as the platform's `geoLocation`: a point on land or sea, or a small box around one. */
export interface GeoLocation {
  type: 'Feature';
  geometry: { type: 'Point'; coordinates: [number, number] } | { type: 'Polygon'; coordinates: [number, number][][] };
  properties?: Record<string, string>;
}

/** A point (most) or a box of about a kilometre, longitude and latitude rounded to 6 decimals. */
/**
 * A second label on about 30% of the items that have one (so that `containsAll` of two labels
 * selects fewer items than `containsAny`). It is an item's last draw: its other fields keep their
 * values for a seed.
 */
export function addSecondLabel(rng: Rng, labels: { externalId: string }[] | undefined): void {
  if (labels === undefined || !rng.chance(0.3)) return;
  const others = LABELS.filter((label) => labels.every((held) => held.externalId !== label));
  labels.push({ externalId: rng.pick(others) });
}

export function generateGeoLocation(rng: Rng): GeoLocation {
  const round = (value: number) => Math.round(value * 1e6) / 1e6;
  const lon = round(rng.next() * 40 - 10);
  const lat = round(rng.next() * 25 + 50);
  if (rng.chance(0.8)) return { type: 'Feature', geometry: { type: 'Point', coordinates: [lon, lat] } };
  const [east, north] = [round(lon + 0.015), round(lat + 0.009)];
  return {
    type: 'Feature',
    geometry: { type: 'Polygon', coordinates: [[[lon, lat], [east, lat], [east, north], [lon, north], [lon, lat]]] },
    properties: { site: 'area' },
  };
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
