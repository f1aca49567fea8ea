import { QueryRefusedError } from '../../http/errors.js';
import type { PlatformClient } from '../../http/platform-client.js';
import { queryRefused } from '../../http/query-refused.js';
import { probeQuery } from '../kinds/index.js';
import type { StreamInspection } from './inspect-run.js';

/**
 * The dry run's question to each stream: the cheapest form of its first request (probeQuery). A
 * 400 is the refusal a run would stop with (E_QUERY_REFUSED, exit 2); other failures are left to
 * the other checks (the credential's, probeAccess).
 */
export async function probeQueries(
  client: Pick<PlatformClient, 'get' | 'post'>,
  streams: readonly Pick<StreamInspection, 'plan' | 'request' | 'pointWindow'>[],
): Promise<QueryRefusedError[]> {
  const refused: QueryRefusedError[] = [];
  for (const { plan, request, pointWindow } of streams) {
    try {
      await probeQuery(client, plan, request, pointWindow);
    } catch (error) {
      // The check of a datapoints stream's series says its own refusal, naming the series list.
      const fix = `Change the filter of stream ${plan.name} in the job file as the platform's message says`;
      const refusal = error instanceof QueryRefusedError ? error : queryRefused(error, plan.name, fix);
      if (refusal !== undefined) refused.push(refusal);
    }
  }
  return refused;
}
