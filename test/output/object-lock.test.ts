import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { LockedError } from '../../src/output/lock.js';
import { createAzureBlobs } from '../../src/output/azure-blobs.js';
import { createAzureStore } from '../../src/output/azure-store.js';
import type { StoreObjects } from '../../src/output/object-store.js';
import { createS3Objects } from '../../src/output/s3-objects.js';
import { createS3Store } from '../../src/output/s3-store.js';
import type { OutputStore } from '../../src/output/store.js';
import { type Azurite, startAzurite } from '../support/azurite.js';
import { S3RVER_ACCESS, startS3Server } from '../support/s3-server.js';

/**
 * The lock of an output in object storage (src/output/object-lock.ts), against s3rver, whose
 * conditional PutObject (If-None-Match: *) the test server emulates as S3 answers it, and against
 * Azurite, whose conditional Put Blob is Azure's own: one run holds it at a time; a lock of a
 * process of this host that is gone is taken over at once; one of another host whose heartbeat
 * stopped is taken over once it stayed unchanged for staleAfterMs (simulated time).
 */
let server: Awaited<ReturnType<typeof startS3Server>>;
let azurite: Azurite;
let prefixes = 0;

beforeAll(async () => {
  server = await startS3Server({ bucket: 'locks' });
  azurite = await startAzurite();
  await azurite.container('locks');
});
afterAll(async () => {
  await server.close();
  await azurite.close();
});

type Fresh = () => { store: OutputStore; objects: StoreObjects };

const s3: Fresh = () => {
  const url = `s3://locks/p${++prefixes}`;
  const options = { url, endpoint: server.endpoint, forcePathStyle: true, logger: silentLogger, ...S3RVER_ACCESS };
  return { store: createS3Store(options), objects: createS3Objects(options) };
};

const azure: Fresh = () => {
  const url = `abfss://locks@devstoreaccount1.dfs.core.windows.net/p${++prefixes}`;
  const options = { url, endpoint: azurite.endpoint, env: azurite.env, logger: silentLogger };
  return { store: createAzureStore(options), objects: createAzureBlobs(options) };
};

/** A lock object as another process left it. */
function owner(fields: { pid: number; host: string; beat?: number }) {
  return JSON.stringify({ startedAt: '2026-01-01T00:00:00.000Z', token: `t${fields.pid}`, beat: 0, ...fields });
}

describe.each([['an s3:// output', () => s3()], ['an Azure output', () => azure()]] as const)('the lock of %s', (_kind, fresh) => {
  it('creates only if absent: the conditional put says whether it did', async () => {
    const { objects } = fresh();
    expect(await objects.putTextIfAbsent('k', 'a')).toBe(true);
    expect(await objects.putTextIfAbsent('k', 'b')).toBe(false);
    expect(await objects.getText('k')).toBe('a');
  });

  it('one holder at a time: a second run of this process is refused while the first holds it; free again once released', async () => {
    const { store } = fresh();
    const release = await store.lock('.lock', 'the output');
    await expect(store.lock('.lock', 'the output')).rejects.toBeInstanceOf(LockedError);
    expect(await store.lockState('.lock')).toMatchObject({ state: 'held', alive: true });
    await release();
    expect(await store.getText('.lock')).toBeUndefined();
    const again = await store.lock('.lock', 'the output');
    await again();
  });

  it('of several at once, exactly one wins', async () => {
    const { store } = fresh();
    const attempts = await Promise.allSettled([1, 2, 3, 4].map(() => store.lock('.lock', 'the output')));
    const won = attempts.filter((a) => a.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const lost of attempts.filter((a) => a.status === 'rejected')) expect(lost.reason).toBeInstanceOf(LockedError);
    await (won[0] as PromiseFulfilledResult<() => Promise<void>>).value();
  });

  it('a lock of a process of this host that is gone is taken over at once', async () => {
    const { store } = fresh();
    const { hostname } = await import('node:os');
    await store.putText('.lock', owner({ pid: 2 ** 22 + 7, host: hostname() }));
    const release = await store.lock('.lock', 'the output');
    await release();
  });

  it.each([
    ['not JSON', '{"pid": 12'],
    ['no token', JSON.stringify({ pid: 7, host: 'elsewhere', startedAt: 'x', beat: 0 })],
  ])('a lock object that names no owner (%s) still holds: taken over only once unchanged for staleAfterMs', async (_, text) => {
    const { store } = fresh();
    let now = 0;
    const sleep = async (ms: number) => {
      now += ms;
      await Promise.resolve();
    };
    await store.putText('.lock', text);
    const release = await store.lock('.lock', 'the output', { sleep, now: () => now });
    expect(now).toBeGreaterThanOrEqual(60_000);
    expect(JSON.parse((await store.getText('.lock')) ?? '')).toMatchObject({ pid: process.pid });
    await release();
  });

  it('a lock of another host: watched; alive while its heartbeat changes it, taken over once it stays unchanged', async () => {
    const { store } = fresh();
    let now = 0;
    const sleep = async (ms: number) => {
      now += ms;
      await Promise.resolve();
    };
    await store.putText('.lock', owner({ pid: 7, host: 'elsewhere' }));
    // Its heartbeat moves during the first wait: alive, so a run without patience is refused.
    const beating = async (ms: number) => {
      await store.putText('.lock', owner({ pid: 7, host: 'elsewhere', beat: 1 }));
      await sleep(ms);
    };
    await expect(store.lock('.lock', 'the output', { sleep: beating, now: () => now })).rejects.toThrow(/pid 7 on elsewhere/);
    // Then it stops: after 60 s of simulated time unchanged, the lock is taken over.
    const release = await store.lock('.lock', 'the output', { sleep, now: () => now });
    expect(now).toBeGreaterThanOrEqual(60_000);
    await release();
  });
});
