import type { PlatformClient } from '../../http/platform-client.js';
import type { ListRequest } from '../partition/index.js';
import type { StreamPlan } from '../state/index.js';
import { checkListedSeries } from './datapoints/index.js';

/**
 * The cheapest form of a stream's first question, for the dry run: its first request with `limit`
 * 1 (a page of the collection with its filter, a datapoints stream's series listing, the instances
 * query), then for a datapoints stream the check a run makes of its listed series before it writes
 * (checkListedSeries). A subscription's feed and a body without a top-level `limit` (an instances
 * sync feed) are not asked. What the platform answers is thrown as it comes.
 */
export async function probeQuery(
  client: Pick<PlatformClient, 'get' | 'post'>,
  plan: StreamPlan,
  request: ListRequest,
  pointWindow: { start: number; end: number } | undefined,
): Promise<void> {
  if (plan.resource === 'datapoint-subscription') return;
  const asked = onePage(request);
  if (asked?.method === 'GET') await client.get(asked.path, asked.params);
  else if (asked !== undefined) await client.post(asked.path, asked.body);
  if (plan.resource === 'datapoints' && pointWindow !== undefined) {
    await checkListedSeries(client, plan, { from: pointWindow.start, until: pointWindow.end });
  }
}

/** The request with a page size of 1; undefined for a body without a top-level `limit`. */
function onePage(request: ListRequest): ListRequest | undefined {
  if (request.method === 'GET') {
    const params = request.params.filter(([key]) => key !== 'limit');
    return { ...request, params: [...params, ['limit', '1']] };
  }
  return 'limit' in request.body ? { ...request, body: { ...request.body, limit: 1 } } : undefined;
}
