import { readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BulkExtractError } from '../errors.js';
import type { Logger } from '../log.js';
import { LOCK_FILE } from './layout.js';

/** Another live run holds the output folder. */
export class LockedError extends BulkExtractError {
  readonly code = 'E_LOCKED';
}

interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

/**
 * Keeps two runs off one output folder: `<out>/.lock` is created exclusively and holds the owner's
 * pid and host. A lock whose process is gone (same host, pid not running) is stale and taken over.
 */
export async function acquireLock(outDir: string, logger: Logger): Promise<() => Promise<void>> {
  const path = join(outDir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(path, JSON.stringify(me), { flag: 'wx' });
      return async () => {
        await unlink(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readOwner(path);
    if (owner !== undefined && (owner.host !== me.host || isAlive(owner.pid))) {
      throw new LockedError(
        `${outDir} is in use by another bulk-extract run (pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}). Wait for it to finish, or give this run another output.dir. If that run is gone, delete ${path}.`,
      );
    }
    logger.warn({ path, owner }, 'removing a stale lock left by a run that is no longer alive');
    await unlink(path).catch(() => undefined);
  }
  throw new LockedError(`Could not take the lock ${path}: another run took it at the same moment.`);
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  try {
    const owner = JSON.parse(await readFile(path, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string'
      ? { pid: owner.pid, host: owner.host, startedAt: String(owner.startedAt) }
      : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
