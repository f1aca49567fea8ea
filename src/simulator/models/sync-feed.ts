import type { CursorState } from '../cursor.js';
import { matches } from './filter-match.js';
import { scan } from './instance-scan.js';
import { type Instance, type InstanceStore, kindAt } from './instance-store.js';
import type { InstanceKind } from './node-links.js';
import type { SyncSet } from './sync-request.js';

/** Sync cursors expire after 3 days, when the platform purges soft-deleted instances. */
export const SYNC_RETENTION_MS = 3 * 86_400_000;

/**
 * Where a sync result set stands: still backfilling (the instances that exist, from position `at`;
 * the changes after `startSeq` follow), or reading the changes after `seq`.
 */
export type SyncPosition = { phase: 'backfill'; at: number; startSeq: number } | { phase: 'changes'; seq: number };

/** A position as a cursor carries it: `position` -1 marks the change phase, `mark` the sequence. */
export function cursorStateOf(position: SyncPosition, issuedAtMs: number): CursorState {
  return position.phase === 'backfill'
    ? { position: position.at, issuedAtMs, mark: position.startSeq }
    : { position: -1, issuedAtMs, mark: position.seq };
}

export function syncPositionOf(state: CursorState): SyncPosition {
  const seq = state.mark ?? 0;
  return state.position < 0 ? { phase: 'changes', seq } : { phase: 'backfill', at: state.position, startSeq: seq };
}

/** Where a sync without a cursor starts: a backfill from the first instance, or (noBackfill) the changes from now. */
export function firstPosition(set: SyncSet, lastSeq: number): SyncPosition {
  return set.mode === 'noBackfill' ? { phase: 'changes', seq: lastSeq } : { phase: 'backfill', at: 0, startSeq: lastSeq };
}

/** Whether a soft-deleted instance has been purged by `nowMs` (so the feed no longer shows it). */
function purged(instance: Instance, nowMs: number): boolean {
  return instance.deletedTime !== undefined && nowMs - instance.deletedTime > SYNC_RETENTION_MS;
}

export interface SyncPage {
  instances: Instance[];
  next: SyncPosition;
  /**
   * Whether the result set has more to read right now: its backfill goes on, or the change log
   * holds entries after `next`'s sequence (matching the filter or not, so a page that would skip
   * them still has to be read). A page cut short (a short-page fault, the scan budget) says so too.
   */
  more: boolean;
}

/** Whether a result set at `next` has more to read: a backfill not finished, or changes after its sequence. */
function moreAfter(next: SyncPosition, lastSeq: number): boolean {
  return next.phase === 'backfill' || lastSeq > next.seq;
}

/**
 * One page of a result set. The backfill walks the instances in the simulator's stable order as
 * they are when read (soft-deleted ones left out, unless `skipAlreadyDeleted: false` and not yet
 * purged); when it ends, the feed goes on with the changes after the sequence the sync started at.
 * The change phase shows each instance changed (created, updated, soft-deleted) after the
 * cursor once, as it is now, in the order of the latest changes; a deleted one with `deletedTime`,
 * unless purged (more than 3 days ago: a reader that waited that long missed it). A page ends at
 * `limit` items or `budget` positions examined, whichever comes first; `more` says whether to go on.
 */
export function syncPage(
  store: InstanceStore,
  set: SyncSet,
  kinds: readonly InstanceKind[],
  from: SyncPosition,
  limit: number,
  budget: number,
  nowMs: number,
): SyncPage {
  const wanted = (instance: Instance) => set.filter === undefined || matches(instance, set.filter);
  if (from.phase === 'backfill') {
    const page = scan(store, kinds, from.at, limit, budget, (kind, index) => {
      const deleted = store.isDeleted(kind, index);
      if (deleted && set.skipAlreadyDeleted) return undefined;
      const instance = store.instance(kind, index);
      return !purged(instance, nowMs) && wanted(instance) ? instance : undefined;
    });
    const next: SyncPosition = page.next === undefined
      ? { phase: 'changes', seq: from.startSeq }
      : { phase: 'backfill', at: page.next, startSeq: from.startSeq };
    return { instances: page.instances, next, more: moreAfter(next, store.log.lastSeq) };
  }
  const instances: Instance[] = [];
  let seq = from.seq;
  let examined = 0;
  for (const [entrySeq, key] of store.log.after(from.seq)) {
    if (instances.length >= limit || examined >= budget) break;
    examined++;
    seq = entrySeq;
    const { kind, index } = kindAt(key);
    if (!kinds.includes(kind)) continue;
    const instance = store.instance(kind, index);
    if (!purged(instance, nowMs) && wanted(instance)) instances.push(instance);
  }
  const next: SyncPosition = { phase: 'changes', seq };
  return { instances, next, more: moreAfter(next, store.log.lastSeq) };
}
