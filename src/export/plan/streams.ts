import type { FilterValue, Format, StreamConfig } from '../../config/job-schema.js';
import { ConfigError } from '../../errors.js';
import { filterKeys } from '../../resources/index.js';
import type { StreamPlan } from '../state/index.js';

export function streamName(stream: StreamConfig): string {
  return stream.name ?? stream.resource;
}

/**
 * The streams of a job (or only `only`), with their request parameters and formats. Filters are
 * sent in the order the collection lists them (resources/), so equal configs give equal requests.
 */
export function planStreams(
  streams: readonly StreamConfig[],
  defaultFormats: readonly Format[],
  only?: string,
): StreamPlan[] {
  const selected = only === undefined ? streams : streams.filter((s) => streamName(s) === only);
  if (selected.length === 0) {
    throw new ConfigError(
      only === undefined
        ? 'streams: the job has no streams; add at least one (for example: streams: [{ resource: events }]).'
        : `--stream ${only}: no such stream; the job has ${streams.map(streamName).join(', ')}.`,
    );
  }
  return selected.map((stream) => {
    const filter: Readonly<Record<string, FilterValue | undefined>> = stream.filter;
    const params: [string, string][] = [['limit', String(stream.limit)]];
    for (const key of filterKeys(stream.resource)) {
      const value = filter[key];
      if (value !== undefined) params.push([key, paramText(value)]);
    }
    return {
      name: streamName(stream),
      resource: stream.resource,
      params,
      partitions: stream.partitions,
      formats: [...new Set(stream.formats ?? defaultFormats)],
      mode: stream.mode,
      safetyLagMs: stream.safetyLag,
      keep: stream.keep,
      metadataColumns: stream.metadataColumns,
      updatedBetween: { min: stream.filter.minLastUpdatedTime, max: stream.filter.maxLastUpdatedTime },
    };
  });
}

/**
 * A filter's value as a chain's parameter: numbers and booleans as text, lists as JSON arrays (the
 * form GET takes), a map as JSON with its keys sorted (the same pairs give the same parameter).
 */
function paramText(value: FilterValue): string {
  if (Array.isArray(value)) return JSON.stringify(value);
  return typeof value === 'object' ? canonicalJson(value) : String(value);
}

function canonicalJson(map: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
