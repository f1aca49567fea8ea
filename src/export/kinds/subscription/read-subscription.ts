import { ConfigError } from '../../../errors.js';
import type { PlatformClient } from '../../../http/platform-client.js';
import type { SubscriptionStreamPlan } from '../../state/index.js';

/** The most partitions a subscription has (the platform's bound). */
const MAX_PARTITIONS = 100;

/**
 * The subscription a stream follows, as the platform has it now: its partition count (fixed when
 * it was created). A subscription the platform does not have is a ConfigError naming the stream
 * and its `subscription` key; a refused credential or access is thrown as the client threw it.
 */
export async function readSubscription(
  client: Pick<PlatformClient, 'post'>,
  stream: SubscriptionStreamPlan,
  signal?: AbortSignal,
): Promise<{ partitionCount: number }> {
  const { externalId } = stream.subscription;
  const path = '/timeseries/subscriptions/byids';
  const response = await client.post(path, { items: [{ externalId }], ignoreUnknownIds: true }, signal);
  const items = (response.body as { items?: unknown } | null)?.items;
  const found = Array.isArray(items) ? (items as unknown[]).find((item) => isNamed(item, externalId)) : undefined;
  if (found === undefined) {
    throw new ConfigError(
      `streams (${stream.name}), subscription: the platform has no datapoint subscription '${externalId}'. ` +
      'Create it first (docs/datapoints.md, "Following a subscription"), or correct the externalId.',
    );
  }
  const count = (found as { partitionCount?: unknown }).partitionCount;
  if (!Number.isSafeInteger(count) || (count as number) < 1 || (count as number) > MAX_PARTITIONS) {
    throw new ConfigError(
      `streams (${stream.name}): the platform's subscription '${externalId}' has no partitionCount of 1..${MAX_PARTITIONS} ` +
      `(got ${JSON.stringify(count)}): not the platform's answer`,
    );
  }
  return { partitionCount: count as number };
}

function isNamed(item: unknown, externalId: string): boolean {
  return typeof item === 'object' && item !== null && (item as { externalId?: unknown }).externalId === externalId;
}

/**
 * The subscription's partitions that partition m of n reads, one after another: those whose index
 * is m - 1 modulo n. A stream with more partitions than the subscription leaves the rest idle.
 */
export function ownedPartitions(partitionCount: number, m: number, n: number): number[] {
  const owned: number[] = [];
  for (let index = m - 1; index < partitionCount; index += n) owned.push(index);
  return owned;
}
