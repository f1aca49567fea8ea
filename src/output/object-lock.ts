import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import type { Logger } from '../log.js';
import {
  heldOwnerSchema,
  lockSettings,
  parseLockOwner,
  runsHere,
  shownOwner,
  takeLock,
  thisOwner,
  type LockOptions,
  type LockSpot,
  type LockState,
} from './lock.js';
import type { StoreObjects } from './store.js';

/** What the lock object says of its owner. */
const objectLockOwnerSchema = heldOwnerSchema.extend({
  /** Tells this owner's lock from another's with the same host and pid (a retried pod). */
  token: z.string(),
  /** Counts heartbeats: the object's content changes with each, which is how others see it alive. */
  beat: z.unknown().transform(Number),
});

type ObjectLockOwner = z.infer<typeof objectLockOwnerSchema>;

/** What the lock needs of a store's objects. */
type LockObjects = Pick<StoreObjects, 'putTextIfAbsent' | 'getText' | 'putText' | 'remove'>;

/**
 * A lock on object storage: the object `key`, created only if it does not exist (S3: PutObject
 * with If-None-Match: *, which AWS S3 and most S3-compatible servers honour; Azure: Put Blob with
 * If-None-Match: *, which Azure Blob Storage, ADLS Gen2, OneLake and Azurite honour), holding its owner and a
 * heartbeat counter that the owner rewrites every `heartbeatMs`.
 *
 * A run that finds the lock taken waits as lock.ts's takeLock says: an owner on another host is
 * gone once the object's content stays unchanged for `staleAfterMs` (the conditional create lets
 * only one of several watchers take it then). On a server that ignores If-None-Match, two runs
 * starting at the same instant could both take it: the read-back after the create catches most
 * such races, not all.
 */
export async function acquireObjectLock(
  objects: LockObjects,
  key: string,
  what: string,
  logger: Logger,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const me: ObjectLockOwner = { ...thisOwner(), token: randomBytes(8).toString('hex'), beat: 0 };
  await takeLock(lockObject(objects, key, me), what, logger, options);
  return hold(objects, key, me, { heartbeatMs: lockSettings(options).heartbeatMs, logger });
}

/** The lock object `key` as takeLock sees it, created for `me`. */
function lockObject(objects: LockObjects, key: string, me: ObjectLockOwner): LockSpot {
  return {
    fields: { key },
    deleteHint: `${key} there`,
    async create() {
      // Read back even when the create says it did not happen: a create retried after an answer
      // that was lost (a 500 after the blob was written) finds its own lock, which is this run's.
      await objects.putTextIfAbsent(key, JSON.stringify(me));
      return ownerOf(await objects.getText(key))?.token === me.token;
    },
    async look() {
      const text = await objects.getText(key);
      // Another host's heartbeat changes the content: that is the mark.
      return text === undefined ? undefined : { owner: ownerOf(text), mark: text };
    },
    remove: () => objects.remove([key]),
  };
}

/** Rewrites the lock every `heartbeatMs` while it is still ours; the release deletes it if it is. */
function hold(
  objects: LockObjects,
  key: string,
  me: ObjectLockOwner,
  { heartbeatMs, logger }: { heartbeatMs: number; logger: Logger },
): () => Promise<void> {
  const beat = async () => {
    if (ownerOf(await objects.getText(key))?.token !== me.token) {
      logger.warn({ key }, `the lock ${key} was taken over by another run (this run's heartbeat stopped for too long)`);
      clearInterval(timer);
      return;
    }
    me.beat++;
    await objects.putText(key, JSON.stringify(me));
  };
  const timer = setInterval(() => void beat().catch(() => undefined), heartbeatMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    if (ownerOf(await objects.getText(key).catch(() => undefined))?.token === me.token) await objects.remove([key]);
  };
}

function ownerOf(text: string | undefined): ObjectLockOwner | undefined {
  return parseLockOwner(text, objectLockOwnerSchema);
}

/**
 * What the lock object says, without taking it. An owner on this host is alive while its process
 * runs; one on another host is taken as alive (only watching its heartbeat for a minute could tell).
 */
export async function objectLockState(objects: LockObjects, key: string): Promise<LockState> {
  const text = await objects.getText(key);
  if (text === undefined) return { state: 'free' };
  const owner = ownerOf(text);
  const alive = owner === undefined || owner.host !== hostname() || runsHere(owner);
  return { state: 'held', owner: shownOwner(owner), alive };
}
