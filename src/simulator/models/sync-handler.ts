import { capReached } from '../fault-response.js';
import { type Exchange, readResourceBody, sendError } from '../respond.js';
import { increment, type RequestNotes } from '../stats.js';
import { instanceJson } from './instance-json.js';
import { kindsListed } from './instances-list-handler.js';
import { type ModelsContext, serveFaulted } from './models-context.js';
import { cursorStateOf, firstPosition, SYNC_RETENTION_MS, type SyncPosition, syncPage, syncPositionOf } from './sync-feed.js';
import { parseSync, type SyncSet } from './sync-request.js';
import { type Typing, typingJson } from './view-json.js';

/**
 * `POST {base}/models/instances/sync`: for each selected result set, a page of its backfill or of
 * its changes since the cursor, and always a `nextCursor` to go on from. The answer is the
 * platform's: `{items: {name: [...]}, nextCursor: {name: cursor}, typing?}`, with no `moreData`:
 * a result set's page is shorter than its limit only when it has caught up (syncPage), which is
 * how a reader knows, so no short-page fault applies here. A cursor older than 3 days is refused
 * (400, "Cursor has expired...") unless `allowExpiredCursorsAndAcceptMissedDeletes: true`. Caps
 * and the other faults as on the lists.
 */
export async function handleSync(ctx: ModelsContext, ex: Exchange, notes: RequestNotes): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseSync(body.value);
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const query = parsed.value;
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);
  const now = ctx.clock.now();
  ctx.churn.catchUp(now);

  const positions: SyncPosition[] = [];
  for (const set of query.sets) {
    const position = positionOf(ctx, set, query.allowExpiredCursors, now);
    if (typeof position === 'string') return sendError(ex, 400, position);
    positions.push(position);
  }
  const store = ctx.instances;
  // Never shortened (shortPages: false), so the plan's limit is not used.
  return serveFaulted(ctx, ex, { binding: query.binding, position: 0, limit: 1, shortPages: false }, () => {
    const answerNow = ctx.clock.now();
    const items: Record<string, unknown[]> = {};
    const nextCursor: Record<string, string> = {};
    const typing: Record<string, Typing> = {};
    let count = 0;
    query.sets.forEach((set, i) => {
      const kinds = kindsListed(store, set.instanceType, [], set.filter);
      const from = positions[i] ?? firstPosition(set, store.log.lastSeq);
      const page = syncPage(store, set, kinds, from, set.limit, answerNow);
      items[set.name] = page.instances.map((instance) => instanceJson(instance, set.sources, true));
      nextCursor[set.name] = ctx.cursors.encode(set.binding, cursorStateOf(page.next, answerNow));
      if (query.includeTyping) typing[set.name] = typingJson(set.sources);
      count += page.instances.length;
    });
    return { body: { items, nextCursor, ...(query.includeTyping ? { typing } : {}) }, items: count };
  });
}

/** Where a result set starts: its cursor's position, or its first; a string says why the cursor is refused. */
function positionOf(ctx: ModelsContext, set: SyncSet, allowExpired: boolean, now: number): SyncPosition | string {
  if (set.cursor === undefined) return firstPosition(set, ctx.instances.log.lastSeq);
  const decoded = ctx.cursors.decode(set.cursor, set.binding, now, undefined);
  if (!decoded.ok) return `Invalid property 'cursors.${set.name}': ${decoded.message}`;
  const age = now - decoded.state.issuedAtMs;
  if (age > SYNC_RETENTION_MS && !allowExpired) {
    increment(ctx.stats.faults, 'cursor-expired');
    const days = (age / 86_400_000).toFixed(1);
    return (
      `Cursor has expired: cursors.${set.name} was issued ${days} days ago, and sync cursors expire after 3 days, ` +
      'when soft-deleted instances are purged. Start the sync over without cursors, or set ' +
      'allowExpiredCursorsAndAcceptMissedDeletes to true and accept that deletes since then may be missed.'
    );
  }
  return syncPositionOf(decoded.state);
}
