import type { DatapointsStreamConfig } from '../../../config/job-schema.js';
import { ConfigError } from '../../../errors.js';
import { refusedAccess } from '../../../http/access-refused.js';
import { subscriptionBody } from '../../../http/subscription-feed.js';
import { drainPages, namedFormats, type StreamKind } from '../../partition/index.js';
import type { StreamPlan, SubscriptionStreamPlan } from '../../state/index.js';
import { ownedPartitions, readSubscription } from './read-subscription.js';
import { subscriptionCursorRefused } from './subscription-cursor-refused.js';
import { subscriptionPages } from './subscription-pages.js';

const DATA_PATH = '/timeseries/subscriptions/data/list';

/**
 * A datapoints stream that follows a datapoint subscription (`subscription:` in the job file):
 * each run reads every partition of the subscription from where the run before left it until the
 * platform has nothing more, and writes the points written and the ranges deleted as change rows
 * (resources/subscription-changes.ts). Partition m of the stream reads the subscription's
 * partitions m-1, m-1+n, ... one after another (ownedPartitions).
 */
export const subscription: StreamKind<DatapointsStreamConfig, SubscriptionStreamPlan> = {
  plan: (stream, defaultFormats) => {
    const externalId = stream.subscription ?? '';
    const plan = {
      externalId,
      initializeCursors: stream.initializeCursors,
      includeStatus: stream.includeStatus ?? false,
      // A point corrected to Bad must reach the reader as a change: bad points are read unless the job says not.
      ignoreBadDataPoints: stream.ignoreBadDataPoints ?? false,
      treatUncertainAsBad: stream.treatUncertainAsBad ?? true,
      // Points per answer, approximate: the platform sends the points of one ingestion request together.
      limit: stream.limit,
    };
    // initializeCursors is left out: it places only a partition without a cursor, so changing it later is no drift.
    const params: [string, string][] = [
      ['subscription', externalId],
      ['limit', String(plan.limit)],
      ['includeStatus', String(plan.includeStatus)],
      ['ignoreBadDataPoints', String(plan.ignoreBadDataPoints)],
      ['treatUncertainAsBad', String(plan.treatUncertainAsBad)],
    ];
    return {
      ...namedFormats(stream, defaultFormats),
      resource: 'datapoint-subscription',
      params,
      partitions: stream.partitions,
      mode: 'incremental',
      safetyLagMs: 0,
      updatedBetween: { min: undefined, max: undefined },
      subscription: plan,
      changes: { includeStatus: plan.includeStatus },
    };
  },
  chainParams: (stream) => [...stream.params],
  partitionParam: 'partition',
  count: async (client, stream, _state, logger) => {
    const { partitionCount } = await readSubscription(client, stream);
    stream.subscription.partitionCount = partitionCount;
    logger.info(
      { stream: stream.name, subscription: stream.subscription.externalId, partitionCount },
      `${stream.name}: subscription ${stream.subscription.externalId} has ${partitionCount} partition(s)` +
      (partitionCount > stream.partitions ? `, read by ${stream.partitions} partitions of the stream` : ''),
    );
    return {};
  },
  start: ({ stream }) => ({
    drain: async (ctx, plan, log) => {
      stream.subscription.partitionCount ??= (await readSubscription(ctx.client, stream, ctx.signal)).partitionCount;
      const owned = ownedPartitions(stream.subscription.partitionCount, plan.m, plan.n);
      return drainPages(ctx, plan, log, subscriptionPages(ctx, plan, owned));
    },
  }),
  // After the first run the cursors hold the changes since the last run: reading again from the start would not.
  cursorRefused: (cause, plan, state) =>
    state !== undefined && state.watermark !== null ? subscriptionCursorRefused(cause, plan, state) : undefined,
  listedCollection: () => undefined,
  firstRequest: (stream) => ({
    method: 'POST',
    path: DATA_PATH,
    body: subscriptionBody({ ...stream.subscription, partition: 0 }, undefined),
  }),
  dryRun: async (client, { plan, written, since, action }) => {
    const { externalId, initializeCursors } = plan.subscription;
    let found: { partitionCount: number } | ConfigError;
    try {
      found = await readSubscription(client, plan);
    } catch (error) {
      const refusal = error instanceof ConfigError ? error : refusedAccess(error);
      if (refusal === undefined) throw error;
      return { lines: [`stream ${plan.name}: the changes of datapoint subscription ${externalId} -> ${written}`], refusal };
    }
    const readers = Math.min(found.partitionCount, plan.partitions);
    const from = since !== null
      ? `the changes since the run that started ${new Date(since).toISOString()}, from the cursors it saved`
      : initializeCursors === undefined
        ? "the changes from the subscription's start (its creation, at most 7 days back)"
        : `the changes from ${initializeCursors}`;
    return {
      lines: [
        `stream ${plan.name}: the changes of datapoint subscription ${externalId} (${found.partitionCount} partition(s), ` +
        `read by ${readers} partition(s) of the stream) as change rows -> ${written}`,
        `  reads ${from}, deletes included`,
        `  ${action(since === null ? undefined : 'the cursors the last run ended with')}`,
      ],
    };
  },
  // No change since the last run is what a quiet subscription holds.
  emptyRun: () => Promise.resolve(undefined),
};

/** A stream's plan as a subscription stream's, or undefined. */
export function isSubscriptionPlan(stream: StreamPlan): stream is SubscriptionStreamPlan {
  return stream.subscription !== undefined;
}
