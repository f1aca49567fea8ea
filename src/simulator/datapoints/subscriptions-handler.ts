import { capReached, countInFlight, isStatusFault, sendStatusFault } from '../fault-response.js';
import type { TimeseriesSet } from '../dataset/timeseries.js';
import { type Exchange, readResourceBody, sendError, sendJson, sendText } from '../respond.js';
import type { ServeContext } from '../serve-context.js';
import { increment, type RequestNotes } from '../stats.js';
import type { DatapointSet } from './datapoint-set.js';
import type { Datapoint } from './generated-points.js';
import { isVisible } from './point-reading.js';
import { qualityOfStatus } from './point-values.js';
import type { DeletedRange } from './series-changes.js';
import { feedEnd, type FeedEvent, type FeedPosition, readFeed } from './subscription-feed.js';
import { parseByIdsBody, parseCreateBody, parseDataBody, type SubscriptionDataQuery } from './subscription-request.js';
import type { Subscription, SubscriptionStore } from './subscriptions.js';

/** What the subscription routes read: what every data route reads, the series, their points and the subscriptions. */
export interface SubscriptionsContext extends ServeContext {
  dataset: { readonly timeseries: TimeseriesSet; readonly datapoints: DatapointSet };
  subscriptions: SubscriptionStore;
}

/**
 * How long the platform keeps a subscription's changes: "updates written since the creation of
 * the subscription, up to 7 days ago". A cursor pointing before that has expired. The simulator's
 * `faults.cursorTtlMs`, when set, shortens it, for tests.
 */
export const SUBSCRIPTION_RETENTION_MS = 7 * 86_400_000;

/** A short page is drawn as a share of this; the answer's limit then gets that share. */
const SHORT_SCALE = 1000;

/** `POST {base}/timeseries/subscriptions`: creates one subscription now; answers it as `{items: [...]}`. */
export async function handleCreateSubscription(
  ctx: SubscriptionsContext,
  ex: Exchange,
  notes: RequestNotes,
): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseCreateBody(body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const created = ctx.subscriptions.create(parsed.value, ctx.clock.now());
  if (typeof created === 'string') return sendError(ex, 400, created);
  return sendJson(ex, 201, { items: [subscriptionJson(created)] });
}

/** `GET {base}/timeseries/subscriptions`: every subscription, in one page (a simulator holds few). */
export function handleListSubscriptions(ctx: SubscriptionsContext, ex: Exchange): Promise<void> {
  return sendJson(ex, 200, { items: ctx.subscriptions.list().map(subscriptionJson) });
}

/** `POST {base}/timeseries/subscriptions/byids`: the subscriptions named; 400 naming those not found. */
export async function handleSubscriptionsByIds(
  ctx: SubscriptionsContext,
  ex: Exchange,
  notes: RequestNotes,
): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseByIdsBody(body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const found: Subscription[] = [];
  const missing: { externalId: string }[] = [];
  for (const externalId of parsed.value.externalIds) {
    const subscription = ctx.subscriptions.get(externalId);
    if (subscription === undefined) missing.push({ externalId });
    else found.push(subscription);
  }
  if (missing.length > 0 && !parsed.value.ignoreUnknownIds) {
    return sendJson(ex, 400, { error: { code: 400, message: 'Subscriptions not found', missing } });
  }
  return sendJson(ex, 200, { items: found.map(subscriptionJson) });
}

/**
 * `POST {base}/timeseries/subscriptions/data/list`: for each partition asked, a page of its feed
 * (subscription-feed.ts) from its cursor, `initializeCursors`, or the subscription's start (its
 * creation, or 7 days ago if later), up to the clock's now. The answer never waits: the simulator
 * answers at once whatever `pollTimeoutSeconds` says. A cursor is bound to the subscription and
 * the partition; one pointing before what the platform keeps gets 400 "Cursor has expired".
 */
export async function handleSubscriptionData(
  ctx: SubscriptionsContext,
  ex: Exchange,
  notes: RequestNotes,
): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseDataBody(body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const query = parsed.value;
  const subscription = ctx.subscriptions.get(query.externalId);
  if (subscription === undefined) {
    return sendJson(ex, 400, {
      error: { code: 400, message: `No subscription with externalId '${query.externalId}'.`, missing: [{ externalId: query.externalId }] },
    });
  }
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);
  const positions = startPositions(ctx, subscription, query);
  if (typeof positions === 'string') return sendError(ex, 400, positions);

  countInFlight(ex, () => ctx.stats);
  const plan = ctx.planner.plan(JSON.stringify(body.value), 0, SHORT_SCALE);
  if (plan.delayMs > 0) await ctx.clock.sleep(plan.delayMs);
  if (plan.fault !== undefined) increment(ctx.stats.faults, plan.fault);
  if (isStatusFault(plan.fault)) return sendStatusFault(ex, plan.fault, ctx.config.faults);
  if (plan.shortLimit !== undefined) increment(ctx.stats.faults, 'short-page');

  const horizon = ctx.clock.now();
  let budget = plan.shortLimit === undefined ? query.limit : Math.floor((query.limit * plan.shortLimit) / SHORT_SCALE);
  const events: FeedEvent[] = [];
  const partitions: { index: number; nextCursor: string }[] = [];
  let hasNext = false;
  query.partitions.forEach(({ index }, at) => {
    const members = ctx.subscriptions.partitionMembers(subscription, index);
    const start = positions[at] ?? 'end';
    const from = start === 'end' ? feedEnd(ctx.dataset.datapoints, members, horizon) : start;
    const page = readFeed(ctx.dataset.datapoints, members, from, horizon, budget);
    for (const event of page.events) {
      events.push(event);
      budget -= 'upserts' in event ? event.upserts.length : 1;
    }
    budget = Math.max(0, budget);
    const state = { position: page.next.time, issuedAtMs: horizon, mark: page.next.rank };
    partitions.push({ index, nextCursor: ctx.cursors.encode(bindingOf(subscription, index), state) });
    hasNext ||= page.more;
  });
  const updates = updatesJson(ctx.subscriptions, events, query);
  if (plan.fault === undefined) {
    ctx.stats.pages++;
    ctx.stats.datapoints += updates.points;
  }
  const answer = { updates: updates.items, subscriptionChanges: { added: [], removed: [] }, partitions, hasNext };
  return sendText(ex, 200, JSON.stringify(answer), 'application/json; charset=utf-8', {}, plan.fault);
}

/** What a partition's cursors are bound to: the subscription (as created) and the partition. */
function bindingOf(subscription: Subscription, index: number): string {
  return JSON.stringify(['subscription', subscription.externalId, subscription.createdTime, index]);
}

/**
 * Where each partition asked starts (`end`: the end of its feed when the answer is made, for
 * `initializeCursors: now`); a string says why the request is refused.
 */
function startPositions(
  ctx: SubscriptionsContext,
  subscription: Subscription,
  query: SubscriptionDataQuery,
): (FeedPosition | 'end')[] | string {
  const now = ctx.clock.now();
  const retention = Math.min(SUBSCRIPTION_RETENTION_MS, ctx.config.faults.cursorTtlMs ?? Infinity);
  const kept = Math.max(subscription.createdTime, now - retention);
  const positions: (FeedPosition | 'end')[] = [];
  for (const [at, { index, cursor }] of query.partitions.entries()) {
    if (index >= subscription.partitionCount) {
      return (
        `Invalid property 'partitions[${at}].index': subscription '${subscription.externalId}' has ` +
        `${subscription.partitionCount} partitions (0..${subscription.partitionCount - 1}), got ${index}.`
      );
    }
    if (cursor === undefined) {
      const start = query.initializeCursors;
      if (start !== undefined && 'now' in start) positions.push('end');
      else positions.push({ time: start === undefined ? kept : Math.max(kept, now - start.agoMs), rank: 0 });
      continue;
    }
    const decoded = ctx.cursors.decode(cursor, bindingOf(subscription, index), now, undefined);
    if (!decoded.ok) return `Invalid property 'partitions[${at}].cursor': ${decoded.message}`;
    const position = { time: decoded.state.position, rank: decoded.state.mark ?? 0 };
    if (position.time < kept) {
      increment(ctx.stats.faults, 'cursor-expired');
      const hours = ((now - position.time) / 3_600_000).toFixed(1);
      return (
        `Cursor has expired: partitions[${at}].cursor (partition ${index}) points to changes of ${hours} hours ago, and ` +
        `a subscription keeps its changes for ${retention / 3_600_000} hours. Start the partition over without a cursor, ` +
        'or with initializeCursors, and accept that changes since then are missed.'
      );
    }
    positions.push(position);
  }
  return positions;
}

/**
 * The answer's `updates`: per series (series commute; the changes of one series keep their
 * order), one update for each run of written points and one for each deleted range. Points a
 * query does not see (bad ones, by `ignoreBadDataPoints`) are left out, as the datapoints route does.
 */
function updatesJson(
  store: SubscriptionStore,
  events: readonly FeedEvent[],
  query: SubscriptionDataQuery,
): { items: unknown[]; points: number } {
  const bySeries = new Map<number, ({ upserts: unknown[] } | { deletes: DeletedRange[] })[]>();
  let points = 0;
  for (const event of events) {
    const updates = bySeries.get(event.series) ?? [];
    bySeries.set(event.series, updates);
    if ('delete' in event) {
      updates.push({ deletes: [event.delete] });
      continue;
    }
    const seen = event.upserts.filter((point) => isVisible(qualityOfStatus(point.status), query));
    if (seen.length === 0) continue;
    points += seen.length;
    const written = seen.map((point) => pointJson(point, query.includeStatus));
    const last = updates.at(-1);
    if (last !== undefined && 'upserts' in last) last.upserts.push(...written);
    else updates.push({ upserts: written });
  }
  const items: unknown[] = [];
  for (const [series, updates] of bySeries) {
    const timeSeries = timeSeriesJson(store, series);
    for (const update of updates) {
      items.push({ timeSeries, upserts: 'upserts' in update ? update.upserts : [], deletes: 'deletes' in update ? update.deletes : [] });
    }
  }
  return { items, points };
}

function pointJson(point: Datapoint, includeStatus: boolean): Datapoint {
  const json: Datapoint = { timestamp: point.timestamp };
  if (point.value !== undefined) json.value = point.value;
  if (includeStatus && point.status !== undefined) json.status = point.status;
  return json;
}

/** `timeSeries` of an update: `{id, externalId?, instanceId?, isString, type}`. */
function timeSeriesJson(store: SubscriptionStore, index: number): Record<string, unknown> {
  const { id, externalId, instanceId, isString, type } = store.series(index);
  return {
    id,
    ...(externalId === undefined ? {} : { externalId }),
    ...(instanceId === undefined ? {} : { instanceId }),
    isString,
    type,
  };
}

function subscriptionJson(subscription: Subscription): Record<string, unknown> {
  const { externalId, name, partitionCount, createdTime, selection, members } = subscription;
  return {
    externalId,
    name,
    partitionCount,
    ...('filter' in selection && selection.filter !== undefined ? { filter: selection.filter } : {}),
    timeSeriesCount: members.length,
    createdTime,
    lastUpdatedTime: createdTime,
  };
}
