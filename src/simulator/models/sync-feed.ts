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
}

/**
 * One page of a result set: up to `limit` instances, and fewer only when the result set has
 * nothing more to read right now, as the platform's answers (a reader knows it has caught up from
 * a short page). The backfill walks the instances in the simulator's stable order as they are
 * when read (soft-deleted ones left out, unless `skipAlreadyDeleted: false` and not yet purged);
 * when it ends, the same page goes on with the changes after the sequence the sync started at.
 * The change phase shows each instance changed (created, updated, soft-deleted) after the cursor
 * once, as it is now, in the order of the latest changes; a deleted one with `deletedTime`,
 * unless purged (more than 3 days ago: a reader that waited that long missed it). No scan budget
 * cuts a page: a filter that matches few instances is walked to its end, or to `limit`.
 */
export function syncPage(
  store: InstanceStore,
  set: SyncSet,
  kinds: readonly InstanceKind[],
  from: SyncPosition,
  limit: number,
  nowMs: number,
): SyncPage {
  const wanted = (instance: Instance) => set.filter === undefined || matches(instance, set.filter);
  let seq: number;
  let instances: Instance[] = [];
  if (from.phase === 'backfill') {
    const page = scan(store, kinds, from.at, limit, Infinity, (kind, index) => {
      const deleted = store.isDeleted(kind, index);
      if (deleted && set.skipAlreadyDeleted) return undefined;
      const instance = store.instance(kind, index);
      return !purged(instance, nowMs) && wanted(instance) ? instance : undefined;
    });
    if (page.next !== undefined) {
      return { instances: page.instances, next: { phase: 'backfill', at: page.next, startSeq: from.startSeq } };
    }
    instances = page.instances;
    seq = from.startSeq;
  } else {
    seq = from.seq;
  }
  for (const [entrySeq, key] of store.log.after(seq)) {
    if (instances.length >= limit) break;
    seq = entrySeq;
    const { kind, index } = kindAt(key);
    if (!kinds.includes(kind)) continue;
    const instance = store.instance(kind, index);
    if (!purged(instance, nowMs) && wanted(instance)) instances.push(instance);
  }
  return { instances, next: { phase: 'changes', seq } };
}
