import { Pushgateway } from 'prom-client';
import { request } from 'undici';

/** The most bytes of the Pushgateway's list of groups read: every group's metrics, for a busy gateway. */
const GROUPS_LIMIT = 64 * 1024 * 1024;

/** Which groups of the Pushgateway a run owns under `job=<jobName>`, and which it pushes itself. */
export interface PushScope {
  jobName: string;
  /** This process as worker `index` of `count` of a split job; undefined for a whole run. */
  worker?: { index: number; count: number } | undefined;
  /** The job file's streams: a stream group of any other stream is left from an earlier job file. */
  streams: readonly string[];
}

/** A group's grouping labels besides `job` (the Pushgateway's `labels` of a group, `job` removed). */
export type Grouping = Record<string, string>;

/** The labels a group of bulk-extract's has besides `job`: a group with others is someone else's. */
const OURS = new Set(['shard', 'stream']);

/**
 * The groups under `job=<jobName>` that an earlier run left and this run must remove, so that the
 * gateway holds only the groups of the runs that are current, and no total of one run is summed
 * with another's:
 * - a whole run: every worker's group (`shard`), from any earlier split job;
 * - worker I of K: the whole runs' groups (no `shard`) and the groups of workers K and beyond;
 * - either: the group of a stream the job file no longer has.
 * Only groups whose labels are `job` and some of `shard` and `stream`, and that hold a
 * `bulk_extract_` metric, are bulk-extract's to remove.
 */
export function staleGroups(groups: readonly unknown[], scope: PushScope): Grouping[] {
  const stale: Grouping[] = [];
  for (const group of groups) {
    const labels = groupLabels(group);
    if (labels === undefined || labels.job !== scope.jobName) continue;
    const { job: _job, ...grouping } = labels;
    if (!Object.keys(grouping).every((name) => OURS.has(name))) continue;
    if (!Object.keys(group as object).some((key) => key.startsWith('bulk_extract_'))) continue;
    const { shard, stream } = grouping;
    const { worker } = scope;
    const beyond = (index: string) => !/^\d+$/.test(index) || Number(index) >= (worker?.count ?? 0);
    const otherRun = worker === undefined ? shard !== undefined : shard === undefined || beyond(shard);
    const goneStream = stream !== undefined && !scope.streams.includes(stream);
    if (otherRun || goneStream) stale.push(grouping);
  }
  return stale;
}

/** A group's `labels`, when they are all texts. */
function groupLabels(group: unknown): Record<string, string> | undefined {
  const labels = (group as { labels?: unknown } | null)?.labels;
  if (labels === null || typeof labels !== 'object') return undefined;
  const entries = Object.entries(labels);
  return entries.every(([, value]) => typeof value === 'string') ? Object.fromEntries(entries) : undefined;
}

/**
 * Removes the stale groups of `scope` (staleGroups) from the Pushgateway at `url`: lists its
 * groups (`GET /api/v1/metrics`, read within `timeoutMs` and GROUPS_LIMIT bytes), then deletes
 * each stale one. Answers the groupings it removed; throws what went wrong, for the caller to log.
 */
export async function removeStaleGroups(url: string, scope: PushScope, timeoutMs: number): Promise<Grouping[]> {
  const stale = staleGroups(await listGroups(url, timeoutMs), scope);
  const gateway = new Pushgateway(url, { timeout: timeoutMs });
  for (const groupings of stale) {
    const { jobName } = scope;
    await gateway.delete(Object.keys(groupings).length === 0 ? { jobName } : { jobName, groupings });
  }
  return stale;
}

/** The Pushgateway's groups, as `GET /api/v1/metrics` lists them. */
async function listGroups(url: string, timeoutMs: number): Promise<unknown[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const answer = await request(new URL('api/v1/metrics', url.endsWith('/') ? url : `${url}/`), { signal });
  if (answer.statusCode !== 200) {
    await answer.body.dump();
    throw new Error(`GET /api/v1/metrics answered HTTP ${answer.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer.body) {
    size += (chunk as Buffer).length;
    if (size > GROUPS_LIMIT) {
      answer.body.destroy();
      throw new Error(`GET /api/v1/metrics answered more than ${GROUPS_LIMIT} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status?: unknown; data?: unknown };
  if (body.status !== 'success' || !Array.isArray(body.data)) throw new Error('GET /api/v1/metrics did not list the groups');
  return body.data as unknown[];
}
