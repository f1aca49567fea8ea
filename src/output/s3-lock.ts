import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../log.js';
import { isAlive, LockedError } from './folder-lock.js';
import type { S3Objects } from './s3-objects.js';
import { z } from 'zod';
import { lockOwnerSchema, lockSettings, parseLockOwner, type LockOptions, type LockState } from './store.js';

/** What the lock object says of its owner. */
const s3LockOwnerSchema = lockOwnerSchema.extend({
  /** Tells this owner's lock from another's with the same host and pid (a retried pod). */
  token: z.string(),
  /** Counts heartbeats: the object's content changes with each, which is how others see it alive. */
  beat: z.unknown().transform(Number),
});

type S3LockOwner = z.infer<typeof s3LockOwnerSchema>;

/**
 * A lock on object storage: the object `key`, created only if it does not exist (PutObject with
 * If-None-Match: *, which AWS S3 and most S3-compatible servers honour), holding its owner and a
 * heartbeat counter that the owner rewrites every `heartbeatMs`.
 *
 * A run that finds the lock taken watches it: unchanged for `staleAfterMs` of this host's clock,
 * its owner is gone, and the lock is deleted and taken (the conditional create lets only one of
 * several watchers win). An owner on this host whose process is gone is gone at once. A live owner
 * is waited for up to `patienceMs`, then the run is refused with LockedError. On a server that
 * ignores If-None-Match, two runs starting at the same instant could both take it: the read-back
 * after the create catches most such races, not all.
 */
export async function acquireS3Lock(
  objects: S3Objects,
  key: string,
  what: string,
  logger: Logger,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const { patienceMs, heartbeatMs, staleAfterMs, sleep, now } = lockSettings(options);
  const me: S3LockOwner = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
    beat: 0,
  };
  const deadline = now() + patienceMs;
  let watched: { text: string; since: number } | undefined;
  let seenAlive = false;
  // Known as this process's from before its create: another acquirer here never takes it for a dead one's.
  heldHere.add(me.token);
  try {
    return await acquire();
  } catch (error) {
    heldHere.delete(me.token);
    throw error;
  }

  async function acquire(): Promise<() => Promise<void>> {
    for (;;) {
      const created = await objects.putTextIfAbsent(key, JSON.stringify(me));
      const mine = created && ownerOf(await objects.getText(key))?.token === me.token;
      if (mine) return hold(objects, key, me, { heartbeatMs, logger });
      const text = await objects.getText(key);
      if (text === undefined) continue; // let go in between
      const owner = ownerOf(text);
      let stale: boolean;
      if (owner !== undefined && owner.host === me.host) {
        // This host: its process tells. Our own pid but not a lock of this process: a retried pod's.
        stale = !heldHere.has(owner.token) && (owner.pid === me.pid || !isAlive(owner.pid));
        seenAlive = !stale;
      } else if (watched === undefined || watched.text !== text) {
        // Another host: alive while the content (its heartbeat) changes.
        seenAlive ||= watched !== undefined;
        watched = { text, since: now() };
        stale = false;
      } else {
        stale = now() - watched.since >= staleAfterMs;
      }
      if (stale) {
        logger.warn({ key, owner }, `removing a stale lock on ${what} left by a run that is no longer alive`);
        await objects.remove([key]);
        watched = undefined;
        continue;
      }
      if (seenAlive && now() >= deadline) {
        const who = owner === undefined ? '' : ` (pid ${owner.pid} on ${owner.host}, since ${owner.startedAt})`;
        throw new LockedError(
          `${what} is in use by another bulk-extract run${who}. Wait for it to finish, or give this run another output.dir. If that run is gone, delete ${key} there.`,
        );
      }
      await sleep(seenAlive ? Math.min(250, Math.max(0, deadline - now())) : Math.min(heartbeatMs, staleAfterMs));
    }
  }
}

/** Tokens of the locks this process holds. */
const heldHere = new Set<string>();

/** Rewrites the lock every `heartbeatMs` while it is still ours; the release deletes it if it is. */
function hold(
  objects: S3Objects,
  key: string,
  me: S3LockOwner,
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
    heldHere.delete(me.token);
    if (ownerOf(await objects.getText(key).catch(() => undefined))?.token === me.token) await objects.remove([key]);
  };
}

function ownerOf(text: string | undefined): S3LockOwner | undefined {
  return parseLockOwner(text, s3LockOwnerSchema);
}

/**
 * What the lock object says, without taking it. An owner on this host is alive while its process
 * runs; one on another host is taken as alive (only watching its heartbeat for a minute could tell).
 */
export async function s3LockState(objects: S3Objects, key: string): Promise<LockState> {
  const text = await objects.getText(key);
  if (text === undefined) return { state: 'free' };
  const owner = ownerOf(text);
  const alive =
    owner === undefined ||
    owner.host !== hostname() ||
    heldHere.has(owner.token) ||
    (owner.pid !== process.pid && isAlive(owner.pid));
  return { state: 'held', owner, alive };
}
