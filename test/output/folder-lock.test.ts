import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, inspectLock } from '../../src/output/folder-lock.js';
import { LockedError, type LockOptions } from '../../src/output/lock.js';
import { captureLogger } from '../support/log-capture.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * The lock of an output folder or shard. Waiting is simulated: `sleep` advances a local clock and
 * may play the part of the other host (touching the lock, or deleting it).
 */
function simulatedTime(onSleep: (elapsedMs: number) => void = () => {}): Required<Pick<LockOptions, 'sleep' | 'now'>> & {
  elapsed: () => number;
} {
  let t = 0;
  return {
    now: () => t,
    sleep: (ms: number) => {
      expect(ms).toBeGreaterThan(0);
      t += ms;
      onSleep(t);
      return Promise.resolve();
    },
    elapsed: () => t,
  };
}

const FOREIGN = { pid: 424_242, host: 'other-host.example', startedAt: '2026-01-01T00:00:00.000Z' };

function lockFile(content: object): string {
  const path = join(tempDir('lock-'), '.lock');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

function touch(path: string, atSeconds: number): void {
  utimesSync(path, atSeconds, atSeconds);
}

describe('acquireLock', () => {
  it('creates the lock with this process as owner, and the release deletes it', async () => {
    const path = join(tempDir('lock-'), '.lock');
    const release = await acquireLock(path, 'the folder', captureLogger().logger);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await release();
    expect(existsSync(path)).toBe(false);
  });

  it('the owner touches its lock every heartbeat, so that other hosts see it alive', async () => {
    const path = join(tempDir('lock-'), '.lock');
    const release = await acquireLock(path, 'the folder', captureLogger().logger, { heartbeatMs: 20 });
    touch(path, 1_000_000);
    await expect.poll(() => statSync(path).mtimeMs, { interval: 10, timeout: 5000 }).toBeGreaterThan(1_000_000_000);
    await release();
  });

  it('a lock of this host whose pid is not running is taken over at once', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await once(dead, 'exit');
    const path = lockFile({ pid: dead.pid, host: hostname(), startedAt: 'x' });
    const time = simulatedTime();
    const log = captureLogger();
    const release = await acquireLock(path, 'the folder', log.logger, time);
    expect(time.elapsed()).toBe(0);
    expect(log.lines().join('\n')).toContain('removing a stale lock');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('a lock of this host whose pid runs is refused at once, naming pid and host, and left as it was', async () => {
    const path = lockFile({ pid: process.ppid, host: hostname(), startedAt: '2026-11-21T00:00:00.000Z' });
    const before = readFileSync(path, 'utf8');
    const time = simulatedTime();
    const error = await acquireLock(path, '/out', captureLogger().logger, time).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedError);
    expect((error as Error).message).toContain(`/out is in use by another bulk-extract run (pid ${process.ppid} on ${hostname()}`);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(time.elapsed()).toBe(0);
  });

  it('a lock of this host with this process\'s pid, not taken by this process, is a dead container\'s: taken over', async () => {
    // A retried pod of an Indexed Job has the same host name, and often the same pid, as the one that died.
    const path = lockFile({ pid: process.pid, host: hostname(), startedAt: 'x' });
    const time = simulatedTime();
    const release = await acquireLock(path, 'the folder', captureLogger().logger, time);
    expect(time.elapsed()).toBe(0);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, startedAt: expect.not.stringMatching(/^x$/) });
    await release();
  });

  it('a lock this process holds is refused to a second taker in the same process', async () => {
    const path = join(tempDir('lock-'), '.lock');
    const release = await acquireLock(path, '/out', captureLogger().logger);
    const error = await acquireLock(path, '/out', captureLogger().logger, simulatedTime()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedError);
    await release();
  });

  it('a lock of this host whose live pid stopped its heartbeat a staleAfterMs ago is taken over (the pid was reused)', async () => {
    const path = lockFile({ pid: process.ppid, host: hostname(), startedAt: 'x' });
    touch(path, (Date.now() - 61_000) / 1000);
    const time = simulatedTime();
    const release = await acquireLock(path, 'the folder', captureLogger().logger, { ...time, staleAfterMs: 60_000 });
    expect(time.elapsed()).toBe(0);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('with patience, waits for a live owner of this host to let go', async () => {
    const path = lockFile({ pid: process.ppid, host: hostname(), startedAt: 'x' });
    // The owner lets go after 2 s.
    const time = simulatedTime((t) => {
      if (t >= 2000) rmSync(path, { force: true });
    });
    const release = await acquireLock(path, 'the folder', captureLogger().logger, { ...time, patienceMs: 30_000 });
    expect(time.elapsed()).toBeGreaterThanOrEqual(2000);
    expect(time.elapsed()).toBeLessThan(30_000);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('a lock of another host never touched for staleAfterMs is taken over, after watching it that long', async () => {
    const path = lockFile(FOREIGN);
    const time = simulatedTime();
    const log = captureLogger();
    const release = await acquireLock(path, 'the folder', log.logger, { ...time, heartbeatMs: 10_000, staleAfterMs: 60_000 });
    expect(time.elapsed()).toBeGreaterThanOrEqual(60_000);
    expect(time.elapsed()).toBeLessThan(80_000);
    const text = log.lines().join('\n');
    expect(text).toContain('locked by a run on another host: waiting up to 60 s');
    expect(text).toContain('removing a stale lock');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('a lock of another host that is touched while watched is alive: refused, naming pid and host, left as it was', async () => {
    const path = lockFile(FOREIGN);
    // The other host's heartbeat: a new mtime at every look.
    const time = simulatedTime((t) => touch(path, 1_700_000_000 + t / 1000));
    const error = await acquireLock(path, '/out', captureLogger().logger, { ...time, heartbeatMs: 10_000, staleAfterMs: 60_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LockedError);
    expect((error as Error).message).toContain('pid 424242 on other-host.example');
    expect(time.elapsed()).toBeLessThan(60_000);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(FOREIGN);
  });

  it.each([
    ['not JSON', '{"pid": 12'],
    ['no owner fields', '{"holder":"someone"}'],
  ])('a lock file that names no owner (%s) still holds: watched, and taken over only once stale', async (_, text) => {
    const path = join(tempDir('lock-'), '.lock');
    writeFileSync(path, text);
    const time = simulatedTime();
    const log = captureLogger();
    const release = await acquireLock(path, 'the folder', log.logger, { ...time, heartbeatMs: 10_000, staleAfterMs: 60_000 });
    expect(time.elapsed()).toBeGreaterThanOrEqual(60_000);
    expect(log.lines().join('\n')).toContain('removing a stale lock');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('a lock of another host that stops being touched is taken over a staleAfterMs after its last touch', async () => {
    const path = lockFile(FOREIGN);
    // Alive for 30 s (touched at every look), then its host is gone.
    const time = simulatedTime((t) => {
      if (t <= 30_000) touch(path, 1_700_000_000 + t / 1000);
    });
    const release = await acquireLock(path, 'the folder', captureLogger().logger, {
      ...time,
      heartbeatMs: 10_000,
      staleAfterMs: 60_000,
      patienceMs: 600_000,
    });
    expect(time.elapsed()).toBeGreaterThanOrEqual(90_000);
    expect(time.elapsed()).toBeLessThan(120_000);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });
});

describe('inspectLock', () => {
  it('a lock this process holds is alive; one naming this host and pid but another process is a dead container\'s', async () => {
    const path = join(tempDir('lock-'), '.lock');
    const release = await acquireLock(path, 'the folder', captureLogger().logger);
    expect(await inspectLock(path)).toEqual({ state: 'held', owner: expect.objectContaining({ pid: process.pid }), alive: true });
    await release();
    expect(await inspectLock(path)).toEqual({ state: 'free' });
    const gone = lockFile({ pid: process.pid, host: hostname(), startedAt: 'x', process: 'another' });
    expect(await inspectLock(gone)).toEqual({ state: 'held', owner: { pid: process.pid, host: hostname(), startedAt: 'x' }, alive: false });
  });
});
