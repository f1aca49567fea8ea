import { refusedAccess } from '../../http/access-refused.js';
import { type AccessError, type AuthError, HttpStatusError } from '../../http/errors.js';
import type { PlatformClient } from '../../http/platform-client.js';
import { resourceSpec } from '../../resources/index.js';
import { streamKind } from '../kinds/index.js';
import type { StreamPlan } from '../state/index.js';

/**
 * The dry run's first contact with the platform, met as a run meets it (countStreams): one small
 * request per collection the streams read (a count, or a one-item page where the platform counts
 * nothing; the series of a datapoints stream), and the refusal a run would stop with before
 * writing anything (refusedAccess: a project that does not exist, a capability the credential
 * lacks, a 404), if any. Instances streams are not probed here: the dry run reads their view.
 * Other failures are left to the credential check.
 */
export async function probeAccess(
  client: Pick<PlatformClient, 'aggregateCount' | 'get'>,
  streams: readonly StreamPlan[],
): Promise<AccessError | AuthError | undefined> {
  const collections = new Set(streams.flatMap((s) => streamKind(s.resource).listedCollection(s) ?? []));
  for (const resource of collections) {
    const listed = () => client.get(`/${resource}`, [['limit', '1']]);
    try {
      if (!resourceSpec(resource).countable) await listed();
      // A 404 on the count alone is no refusal (countStreams): the list decides.
      else await client.aggregateCount(resource, {}).catch((error: unknown) => {
        if (!(error instanceof HttpStatusError) || error.status !== 404) throw error;
        return listed();
      });
    } catch (error) {
      const refusal = refusedAccess(error);
      if (refusal !== undefined) return refusal;
    }
  }
  return undefined;
}
