import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { z } from 'zod';
import { BulkExtractError } from '../errors.js';
import type { Logger } from '../log.js';

/**
 * What the lock of an output folder (folder-lock.ts) and the lock of a bucket (s3-lock.ts) share:
 * the owner a lock names, its options, and the loop that takes a lock, watching an owner on
 * another host until it is seen alive or gone.
 */

/** Another live run holds the output (or the worker's share of it). */
export class LockedError extends BulkExtractError {
  readonly code = 'E_LOCKED';
}

export interface LockOptions {
  /** How long to wait for a live owner to let go (0: fail at once). */
  patienceMs?: number;
  /** The owner touches the lock this often, so that runs on other hosts can see it is alive. */
  heartbeatMs?: number;
  /** An owner on another host whose lock was not touched for this long is gone. */
  staleAfterMs?: number;
  /** Tests replace the waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** Tests replace the clock that times the waiting (durations only, never times of two hosts). */
  now?: () => number;
}

const HEARTBEAT_MS = 10_000;
export const STALE_AFTER_MS = 60_000;

/** Lock options with their defaults filled in: a heartbeat every 10 s, gone after 60 s without one. */
export function lockSettings(options: LockOptions): Required<LockOptions> {
  return {
    patienceMs: options.patienceMs ?? 0,
    heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,
    staleAfterMs: options.staleAfterMs ?? STALE_AFTER_MS,
    sleep: options.sleep ?? ((ms: number) => sleepFor(ms)),
    now: options.now ?? Date.now,
  };
}

/** What a lock file says of its owner. */
export const lockOwnerSchema = z.object({
  pid: z.number(),
  host: z.string(),
  startedAt: z.unknown().transform(String),
});

/** Who holds a lock. */
export type LockOwner = z.infer<typeof lockOwnerSchema>;

/**
 * This process among those that had its pid on its host: a retried pod of an Indexed Job often has
 * the host name and the pid of the pod that died, so a lock naming both is this process's only
 * when it names this too. Written into every lock this process takes.
 */
export const THIS_PROCESS = randomBytes(8).toString('hex');

/** An owner as a lock of this program names it: who, and which process (older versions name none). */
export const heldOwnerSchema = lockOwnerSchema.extend({ process: z.string().optional() });

export type HeldOwner = z.infer<typeof heldOwnerSchema>;

/** This process as the owner of a lock it takes now. */
export function thisOwner(): HeldOwner & { process: string } {
  return { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), process: THIS_PROCESS };
}

/**
 * The owner a lock file names, or undefined when it names none (a damaged or foreign file): such a
 * lock still holds, and is taken over only once stale.
 */
export function parseLockOwner<T extends z.ZodType>(text: string | undefined, schema: T): z.infer<T> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export type LockState =
  | { state: 'free' } |
  {
    state: 'held';
    owner: LockOwner | undefined;
    /** Whether its owner looks alive: this host, its process runs; another host, it was touched lately. */
    alive: boolean;
  };

/** Whether a process of this host runs (EPERM: it runs, as another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether an owner on this host is this process, or another process that runs (not one that had this pid before). */
export function runsHere(owner: HeldOwner): boolean {
  return owner.process === THIS_PROCESS || (owner.pid !== process.pid && isAlive(owner.pid));
}

/** The owner as status and messages show it: who and since when, nothing of the lock's own bookkeeping. */
export function shownOwner(owner: HeldOwner | undefined): LockOwner | undefined {
  return owner === undefined ? undefined : { pid: owner.pid, host: owner.host, startedAt: owner.startedAt };
}

/** A lock as its owner left it, seen by a run that wants it. */
export interface LockSighting {
  owner: HeldOwner | undefined;
  /** Changes with each heartbeat of its owner: a modification time, or the content. */
  mark: string | number;
  /** How long ago it was last touched, on this host's clock, where that can be known (a file's mtime). */
  ageMs?: number;
}

/** Where a lock lives, as `takeLock` uses it. */
export interface LockSpot {
  /** Log fields naming the lock, e.g. `{ path }` or `{ key }`. */
  readonly fields: Record<string, string>;
  /** What a user deletes when its owner is gone, for the refusal's message: a path, or a key and where. */
  readonly deleteHint: string;
  /** Tries to create the lock: true when this run now holds it. */
  create(): Promise<boolean>;
  /** The lock as it is now; undefined when there is none. */
  look(): Promise<LockSighting | undefined>;
  /** Deletes a lock whose owner is gone. */
  remove(): Promise<void>;
}

/**
 * Takes the lock at `spot`, resolving once this run holds it. An owner on this host is gone when
 * its process is not running (or a `ageMs` past `staleAfterMs` says its heartbeat stopped). An
 * owner on another host cannot be asked: its lock is gone once its mark stays unchanged for
 * `staleAfterMs` of this host's clock, so the hosts' clocks need not agree. A lock seen alive is
 * waited for up to `patienceMs`, then refused with LockedError.
 */
export async function takeLock(spot: LockSpot, what: string, logger: Logger, options: LockOptions): Promise<void> {
  const settings = lockSettings(options);
  const { patienceMs, heartbeatMs, staleAfterMs, sleep, now } = settings;
  const deadline = now() + patienceMs;
  const judge = ownerJudge(settings);
  let seenAlive = false;
  for (;;) {
    if (await spot.create()) return;
    const seen = await spot.look();
    if (seen === undefined) continue; // let go in between
    const verdict = judge(seen);
    if (verdict === 'first look') {
      logger.info(
        { ...spot.fields, owner: seen.owner, staleAfterMs },
        `${what} is locked by a run on another host: waiting up to ${Math.round(staleAfterMs / 1000)} s to see whether it is alive`,
      );
      await sleep(Math.min(heartbeatMs, staleAfterMs));
      continue;
    }
    if (verdict === 'gone') {
      logger.warn({ ...spot.fields, owner: seen.owner }, `removing a stale lock on ${what} left by a run that is no longer alive`);
      await spot.remove();
      seenAlive = false;
      continue;
    }
    seenAlive ||= verdict === 'alive';
    if (seenAlive && now() >= deadline) throw lockedError(what, seen.owner, spot.deleteHint);
    await sleep(seenAlive ? Math.min(250, Math.max(0, deadline - now())) : Math.min(heartbeatMs, staleAfterMs));
  }
}

type Verdict = 'alive' | 'gone' | 'first look' | 'watching';

/**
 * Judges the owners a waiting run sees, one look at a time. It remembers the owner on another host
 * it watches: its mark, and since when (this host's clock) that is unchanged.
 */
function ownerJudge({ staleAfterMs, now }: Required<LockOptions>): (seen: LockSighting) => Verdict {
  let watched: { mark: string | number; since: number } | undefined;
  return ({ owner, mark, ageMs }) => {
    if (owner !== undefined && owner.host === hostname()) {
      const quiet = ageMs !== undefined && ageMs >= staleAfterMs;
      const gone = owner.process !== THIS_PROCESS && (!runsHere(owner) || quiet);
      if (gone) watched = undefined;
      return gone ? 'gone' : 'alive';
    }
    const first = watched === undefined;
    if (watched === undefined || watched.mark !== mark) {
      // Touched since the last look: its owner is alive.
      watched = { mark, since: now() };
      return first ? 'first look' : 'alive';
    }
    if (now() - watched.since < staleAfterMs) return 'watching';
    watched = undefined;
    return 'gone';
  };
}

function lockedError(what: string, owner: HeldOwner | undefined, deleteHint: string): LockedError {
  const who = owner === undefined ? '' : ` (pid ${owner.pid} on ${owner.host}, since ${owner.startedAt})`;
  return new LockedError(
    `${what} is in use by another bulk-extract run${who}. Wait for it to finish, or give this run another output.dir. If that run is gone, delete ${deleteHint}.`,
  );
}
