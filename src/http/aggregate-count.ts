import { BadResponseError } from './errors.js';
import { type JsonResponse, requestOf } from './interpret-response.js';

/** The `filter` object of `POST /{resource}/list` and `/aggregate` (platform fields, e.g. `{ type: 'alarm' }`). */
export type AggregateFilter = Readonly<Record<string, unknown>>;

/**
 * The N of a count aggregate's answer `{"items":[{"count":N}]}`. The platform's count may be
 * approximate (it can lag recent writes): use it for progress, never for completeness.
 */
export function parseAggregateCount(response: JsonResponse): number {
  const items = (response.body as { items?: unknown } | null)?.items;
  const count = Array.isArray(items) ? (items[0] as { count?: unknown } | null | undefined)?.count : undefined;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
    const got = JSON.stringify(response.body) ?? String(response.body);
    throw new BadResponseError(
      `The count aggregate answer is not {"items":[{"count":N}]} with N an integer >= 0: got ${got.length > 80 ? `${got.slice(0, 80)}...` : got}`,
      requestOf('POST', response),
    );
  }
  return count;
}

/**
 * The N of the answer of `POST /models/instances/aggregate` with one count aggregate:
 * `{"items":[{"instanceType":"node","aggregates":[{"aggregate":"count","property":"externalId","value":N}]}]}`.
 * As approximate as the collections' counts.
 */
export function parseInstancesCount(response: JsonResponse): number {
  const items = (response.body as { items?: unknown } | null)?.items;
  const group = Array.isArray(items) && items.length === 1 ? (items[0] as { aggregates?: unknown } | null) : undefined;
  const aggregates = group?.aggregates;
  const count = Array.isArray(aggregates)
    ? (aggregates[0] as { aggregate?: unknown; value?: unknown } | null | undefined)
    : undefined;
  const value = count?.aggregate === 'count' ? count.value : undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    const got = JSON.stringify(response.body) ?? String(response.body);
    throw new BadResponseError(
      'The instances count answer is not {"items":[{"aggregates":[{"aggregate":"count","value":N}]}]} with N an integer >= 0: ' +
      `got ${got.length > 120 ? `${got.slice(0, 120)}...` : got}`,
      requestOf('POST', response),
    );
  }
  return value;
}
