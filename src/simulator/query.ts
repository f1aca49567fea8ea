import { resourceSpec } from '../resources/index.js';
import type { FilterValue, ListFilter, ResourceName } from './dataset/dataset.js';
import { queryValue } from './filter-values.js';
import { MAX_PARTITIONS, type Partition } from './partition.js';

export const MAX_LIMIT = 1000;

/** A validated list request. `binding` names every parameter but `cursor`, with defaults applied. */
export interface ListQuery {
  resource: ResourceName;
  limit: number;
  cursor: string | undefined;
  partition: Partition | undefined;
  includeMetadata: boolean;
  filter: ListFilter;
  binding: string;
}

export type ParseResult = { ok: true; query: ListQuery } | { ok: false; message: string };

const COMMON = ['limit', 'cursor', 'partition', 'includeMetadata'];

const INTEGER = /^(0|[1-9][0-9]*)$/;
const PARTITION = /^([1-9][0-9]*)\/([1-9][0-9]*)$/;

/** Validates the query string of `GET /{resource}` the way the platform does: strictly. */
export function parseListQuery(resource: ResourceName, params: URLSearchParams): ParseResult {
  // The collection's filters are its file's in resources/, as the export's requests send them.
  const filters = resourceSpec(resource).filters.filter((spec) => spec.via !== 'body');
  const allowed = [...COMMON, ...filters.map((spec) => spec.key)];
  const seen = new Set<string>();
  for (const key of params.keys()) {
    if (!allowed.includes(key)) {
      return fail(`Unrecognized query parameter '${key}' for /${resource}. Allowed: ${allowed.join(', ')}.`);
    }
    if (seen.has(key)) return fail(`Query parameter '${key}' was given more than once.`);
    seen.add(key);
  }

  const limitText = params.get('limit');
  const limit = limitText === null ? resourceSpec(resource).defaultLimit : Number(limitText);
  if (limitText !== null && (!INTEGER.test(limitText) || limit < 1 || limit > MAX_LIMIT)) {
    return fail(
      `Invalid query parameter 'limit': expected an integer in 1..${MAX_LIMIT}, got '${limitText}'.`,
    );
  }

  const partitionText = params.get('partition');
  const partition = partitionText === null ? undefined : parsePartition(partitionText);
  if (partition === null) {
    return fail(`Invalid query parameter 'partition': ${PARTITION_EXPECTED}, got '${partitionText}'.`);
  }

  const metadataText = params.get('includeMetadata');
  if (metadataText !== null && metadataText !== 'true' && metadataText !== 'false') {
    return fail(
      `Invalid query parameter 'includeMetadata': expected 'true' or 'false', got '${metadataText}'.`,
    );
  }

  const filter: Record<string, FilterValue> = {};
  for (const spec of filters) {
    const text = params.get(spec.key);
    if (text === null) continue;
    const parsed = queryValue(spec, text);
    if (!parsed.ok) return fail(`Invalid query parameter '${spec.key}': expected ${parsed.expected}, got '${shownText(text)}'.`);
    filter[spec.key] = parsed.value;
  }

  const includeMetadata = metadataText !== 'false';
  const binding = JSON.stringify([
    resource,
    limit,
    partitionText,
    includeMetadata,
    Object.entries(filter).sort(),
  ]);
  const cursor = params.get('cursor') ?? undefined;
  if (cursor === '') return fail("Invalid query parameter 'cursor': must not be empty.");
  return { ok: true, query: { resource, limit, cursor, partition, includeMetadata, filter, binding } };
}

export const PARTITION_EXPECTED = `expected 'm/n' with 1 <= m <= n <= ${MAX_PARTITIONS}`;

/** `m/n` as a partition, or null when it is not one. */
export function parsePartition(text: string): Partition | null {
  const match = PARTITION.exec(text);
  const m = Number(match?.[1]);
  const n = Number(match?.[2]);
  return !match || n > MAX_PARTITIONS || m > n ? null : { m, n };
}

/** A parameter's text in a message, cut short. */
function shownText(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function fail(message: string): ParseResult {
  return { ok: false, message };
}
