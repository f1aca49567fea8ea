import { readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { BulkExtractError } from '../errors.js';
import type { Logger } from '../log.js';
import { cannotWrite } from './folder-access.js';
import {
  lockOwnerSchema,
  lockSettings,
  parseLockOwner,
  STALE_AFTER_MS,
  type LockOptions,
  type LockOwner,
  type LockState,
} from './store.js';

export type { LockOptions };

/** Another live run holds the output folder (or the worker's share of it). */
export class LockedError extends BulkExtractError {
  readonly code = 'E_LOCKED';
}

/** Locks this process holds (absolute paths). */
const held = new Set<string>();

/**
 * Keeps two runs off one output folder (or one worker's share of it): the lock file is created exclusively and holds
 * the owner's pid and host; the owner touches it every `heartbeatMs`.
 *
 * An owner on this host is gone when its pid is not running. An owner on another host (a pod of
 * a Kubernetes Job that was killed and is retried on another node, sharing the volume) cannot be
 * asked: its lock is gone once its modification time stays unchanged for `staleAfterMs` of this
 * host's clock, so the hosts' clocks need not agree. A lock seen alive is waited for up to
 * `patienceMs`, then refused with LockedError.
 */
export async function acquireLock(
  path: string,
  what: string,
  logger: Logger,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const { patienceMs, heartbeatMs, staleAfterMs, sleep, now } = lockSettings(options);
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  const deadline = now() + patienceMs;
  /** A lock of another host being watched: its mtime, and since when (local clock) it is unchanged. */
  let watched: { mtimeMs: number; since: number } | undefined;
  let seenAlive = false;
  for (;;) {
    try {
      await writeFile(path, JSON.stringify(me), { flag: 'wx' });
      return holdLock(resolve(path), heartbeatMs);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw cannotWrite(path, error);
      if (code !== 'EEXIST') throw error;
    }
    const [owner, mtimeMs] = await Promise.all([readOwner(path), mtimeOf(path)]);
    if (mtimeMs === undefined) continue; // released in between
    let stale: boolean;
    if (owner !== undefined && owner.host === me.host) {
      // This host's clock wrote the mtime, so its age can be read directly. A retried pod of an
      // Indexed Job has the host name, and often the pid, of the pod that died: a lock not held
      // in this process yet carrying its pid, or whose heartbeat stopped, is that pod's.
      const heldHere = held.has(resolve(path));
      stale =
        !heldHere &&
        (!isAlive(owner.pid) || owner.pid === process.pid || Date.now() - mtimeMs >= staleAfterMs);
      seenAlive = !stale;
    } else if (watched === undefined) {
      watched = { mtimeMs, since: now() };
      logger.info(
        { path, owner, staleAfterMs },
        `${what} is locked by a run on another host: waiting up to ${Math.round(staleAfterMs / 1000)} s to see whether it is alive`,
      );
      await sleep(Math.min(heartbeatMs, staleAfterMs));
      continue;
    } else if (watched.mtimeMs !== mtimeMs) {
      // Touched since the last look: its owner is alive.
      watched = { mtimeMs, since: now() };
      seenAlive = true;
      stale = false;
    } else {
      stale = now() - watched.since >= staleAfterMs;
    }
    if (stale) {
      logger.warn({ path, owner }, `removing a stale lock on ${what} left by a run that is no longer alive`);
      await unlink(path).catch(() => undefined);
      watched = undefined;
      continue;
    }
    if (seenAlive && now() >= deadline) {
      const who =
        owner === undefined
          ? 'another bulk-extract run'
          : `another bulk-extract run (pid ${owner.pid} on ${owner.host}, since ${owner.startedAt})`;
      throw new LockedError(
        `${what} is in use by ${who}. Wait for it to finish, or give this run another output.dir. If that run is gone, delete ${path}.`,
      );
    }
    await sleep(seenAlive ? Math.min(250, deadline - now()) : Math.min(heartbeatMs, staleAfterMs));
  }
}

export async function inspectLock(path: string, staleAfterMs = STALE_AFTER_MS): Promise<LockState> {
  const [owner, mtimeMs] = await Promise.all([readOwner(path), mtimeOf(path)]);
  if (mtimeMs === undefined) return { state: 'free' };
  const ageMs = Math.max(0, Date.now() - mtimeMs);
  const sameHost = owner?.host === hostname();
  const running = owner !== undefined && isAlive(owner.pid) && owner.pid !== process.pid;
  return { state: 'held', owner, alive: ageMs < staleAfterMs && (!sameHost || running) };
}

/** Touches the lock every `heartbeatMs` until released; the release deletes it. */
function holdLock(path: string, heartbeatMs: number): () => Promise<void> {
  held.add(path);
  const timer = setInterval(() => {
    const at = new Date();
    utimes(path, at, at).catch(() => undefined);
  }, heartbeatMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    held.delete(path);
    await unlink(path).catch(() => undefined);
  };
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  return parseLockOwner(await readFile(path, 'utf8').catch(() => undefined), lockOwnerSchema);
}

async function mtimeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Whether a process of this host runs (EPERM: it runs, as another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
