import { parseAggregateBody } from './aggregate-query.js';
import { type Countable, countMatching } from './count.js';
import type { Dataset, ListFilter, ResourceName } from './dataset/dataset.js';
import { type Exchange, readResourceBody, sendError, sendJson } from './respond.js';
import type { RequestNotes } from './stats.js';

/**
 * `POST {base}/{resource}/aggregate` (every collection but relationships) for an authenticated principal:
 * `{"aggregate":"count","filter":{...}}` answered `{"items":[{"count":N}]}`, N approximate as
 * `countMatching` says. No fault, latency or cap applies: fault rates are shares of list requests.
 */
export async function handleAggregate(
  dataset: Dataset,
  ex: Exchange,
  resource: ResourceName,
  notes: RequestNotes,
): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseAggregateBody(resource, body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const set: Countable<ListFilter> = dataset[resource];
  return sendJson(ex, 200, { items: [{ count: countMatching(set, parsed.query.filter) }] });
}
