import { readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Logger } from '../log.js';
import { cannotWrite } from './folder-access.js';
import {
  heldOwnerSchema,
  lockSettings,
  parseLockOwner,
  runsHere,
  shownOwner,
  STALE_AFTER_MS,
  takeLock,
  thisOwner,
  type HeldOwner,
  type LockOptions,
  type LockSpot,
  type LockState,
} from './lock.js';

/**
 * Keeps two runs off one output folder (or one worker's share of it): the lock file is created
 * exclusively and holds the owner's pid, host and process; the owner touches it every
 * `heartbeatMs`, so its modification time tells other hosts it is alive (lock.ts: takeLock).
 *
 * An owner on this host whose live pid stopped touching its lock for `staleAfterMs` is gone too:
 * its pid was reused.
 */
export async function acquireLock(
  path: string,
  what: string,
  logger: Logger,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const me = thisOwner();
  await takeLock(lockFile(path, JSON.stringify(me)), what, logger, options);
  return holdLock(path, lockSettings(options).heartbeatMs);
}

/** The lock file at `path` as takeLock sees it; `content` is what creating it writes. */
function lockFile(path: string, content: string): LockSpot {
  return {
    fields: { path },
    deleteHint: path,
    async create() {
      try {
        await writeFile(path, content, { flag: 'wx' });
        return true;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw cannotWrite(path, error);
        if (code !== 'EEXIST') throw error;
        return false;
      }
    },
    async look() {
      const [owner, mtimeMs] = await Promise.all([readOwner(path), mtimeOf(path)]);
      // This host's clock wrote the mtime, so its age can be read directly.
      return mtimeMs === undefined ? undefined : { owner, mark: mtimeMs, ageMs: Date.now() - mtimeMs };
    },
    remove: () => unlink(path).catch(() => undefined),
  };
}

export async function inspectLock(path: string, staleAfterMs = STALE_AFTER_MS): Promise<LockState> {
  const [owner, mtimeMs] = await Promise.all([readOwner(path), mtimeOf(path)]);
  if (mtimeMs === undefined) return { state: 'free' };
  const ageMs = Math.max(0, Date.now() - mtimeMs);
  const sameHost = owner !== undefined && owner.host === hostname();
  return { state: 'held', owner: shownOwner(owner), alive: ageMs < staleAfterMs && (!sameHost || runsHere(owner)) };
}

/** Touches the lock every `heartbeatMs` until released; the release deletes it. */
function holdLock(path: string, heartbeatMs: number): () => Promise<void> {
  const timer = setInterval(() => {
    const at = new Date();
    utimes(path, at, at).catch(() => undefined);
  }, heartbeatMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await unlink(path).catch(() => undefined);
  };
}

async function readOwner(path: string): Promise<HeldOwner | undefined> {
  return parseLockOwner(await readFile(path, 'utf8').catch(() => undefined), heldOwnerSchema);
}

async function mtimeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}
