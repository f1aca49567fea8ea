import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { realFolder } from '../util/real-folder.js';
import { isAlive } from './lock.js';
import { acquireObjectLock, objectLockState } from './object-lock.js';
import type { LocalCopy, OutputStore, StoreObjects } from './store.js';

export type { StoreObjects };

/** The keys `keys` streams, collected and sorted: `list` of a store that lists a page at a time. */
export async function sortedKeys(keys: AsyncIterable<string>): Promise<string[]> {
  const found: string[] = [];
  for await (const key of keys) found.push(key);
  return found.sort();
}

export interface ObjectStoreOptions {
  /** `output.dir`, which names the staging folder. */
  url: string;
  /**
   * Local folder under which shard files are written before their upload, in a folder of
   * bulk-extract's own (`bulk-extract-staging-<hash of the URL>`). Default: the OS temp folder.
   */
  staging?: string | undefined;
  /** The job's key of these settings, for messages: 'output.s3' or 'output.azure'. */
  settings: string;
  logger: Logger;
}

/** Marks a staging folder as bulk-extract's own: only a folder holding it is ever cleaned. */
export const STAGING_MARKER = '.bulk-extract-staging';
/** A process's folder in the staging folder: `<pid>-<8 hex digits>`. */
const PROCESS_FOLDER = /^(\d+)-[0-9a-f]{8}$/;

/**
 * An output in object storage (an S3 bucket prefix, an Azure container prefix). Shard files are
 * staged in a local staging folder, then uploaded by `publish`, which deletes the staged file;
 * small files are single writes of a whole object; the lock is an object created only if absent
 * (object-lock.ts).
 *
 * Staging: `<staging>/bulk-extract-staging-<hash>/` is created by the first run and marked with
 * STAGING_MARKER; each process writes in a folder of its own in it (`<pid>-<random>`), deleted
 * when it ends. What processes that are gone left there is deleted at the next start: only such
 * folders of a marked staging folder, never anything else of `staging`.
 */
export function createObjectStore(objects: StoreObjects, options: ObjectStoreOptions): OutputStore {
  const staging = stagingFolder(options.url, options.settings, options.staging);
  const copies = scratchCopies(objects);
  return {
    location: objects.location,
    where: objects.where,
    putText: objects.putText,
    // If-None-Match: * (see StoreObjects.putTextIfAbsent): true only on a server that honours it.
    createText: (key, text) => objects.putTextIfAbsent(key, text),
    getText: objects.getText,
    size: objects.size,
    keys: objects.keys,
    list: objects.list,
    remove: objects.remove,
    read: objects.read,
    stage: staging.stage,
    publish: async (key) => objects.publishFile(await staging.stage(key), key),
    async removeTree(dir, owned) {
      const keys = await objects.list(`${dir}/`);
      await objects.remove(keys.filter(owned));
      return keys.filter((key) => !owned(key));
    },
    localCopy: copies.copy,
    lock: (key, what, lockOptions) => acquireObjectLock(objects, key, what, options.logger, lockOptions),
    lockState: (key) => objectLockState(objects, key),
    checkWritable: () => probe(objects),
    probe: () => probe(objects),
    prepare: staging.prepare,
    async close() {
      await staging.close();
      await copies.close();
      await objects.close();
    },
  };
}

/** This process's folder in the staging folder of `url`, under `base` (default: the OS temp folder). */
function stagingFolder(url: string, settings: string, base = tmpdir()) {
  const root = join(resolve(base), `bulk-extract-staging-${createHash('sha256').update(url).digest('hex').slice(0, 16)}`);
  // A folder of this process's own: workers of a split job on one machine share the root.
  const mine = join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
  let prepared = false;
  return {
    /** The staged file of `key`, its folder created (never through a link). */
    stage: async (key: string) => {
      if (!prepared) throw new Error(`The staging folder of ${url} is not prepared; ${key} cannot be staged`);
      await realFolder(mine, parentKey(key), true);
      return join(mine, ...key.split('/'));
    },
    prepare: async () => {
      try {
        await mkdir(resolve(base), { recursive: true });
        await claimStagingRoot(root, url, settings);
        await mkdir(mine);
        prepared = true;
        await removeGoneProcesses(root);
      } catch (error) {
        if (error instanceof ConfigError) throw error;
        throw new ConfigError(`${settings}.staging: cannot use ${root} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
          cause: error,
        });
      }
    },
    close: async () => {
      // Only the folder this process made: its files are shards not uploaded, nothing else.
      if (prepared) await rm(mine, { recursive: true, force: true });
    },
  };
}

/** No permission can be read off a bucket: one small object, put and deleted, proves it. */
async function probe(objects: StoreObjects): Promise<void> {
  const key = `_probe-${randomBytes(6).toString('hex')}`;
  await objects.putText(key, 'bulk-extract: a probe that the credentials can write here; deleted at once.\n');
  await objects.remove([key]);
}

/** The folder of a key ('' for the top). */
function parentKey(key: string): string {
  return key.slice(0, Math.max(0, key.lastIndexOf('/')));
}

/** Downloads of objects for readers that need a file: into a temporary folder made on first use, removed by close. */
function scratchCopies(objects: StoreObjects) {
  let scratch: string | undefined;
  let copies = 0;
  return {
    copy: async (key: string): Promise<LocalCopy> => {
      scratch ??= await mkdtemp(join(tmpdir(), 'bulk-extract-read-'));
      // Named by a counter, never by the key: a key with '..' in it stays a key.
      const path = join(scratch, `object-${++copies}`);
      await pipeline(await objects.read(key), createWriteStream(path, { flags: 'wx' }));
      return { path, release: () => rm(path, { force: true }) };
    },
    close: async () => {
      if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** How long a staging folder without its marker may be another process's, between its mkdir and its marker. */
const MARKER_WAIT_MS = 5000;

/**
 * Makes `root` bulk-extract's staging folder, or checks that it already is: created here and
 * marked, or a real folder (not a link) holding the marker. Anything else is refused, and left as
 * it is. Workers of a split job starting at once race to create it: one that finds the folder
 * without its marker waits a little for the creator to write it before refusing.
 */
async function claimStagingRoot(root: string, url: string, settings: string): Promise<void> {
  const marker = join(root, STAGING_MARKER);
  try {
    await mkdir(root);
    await writeFile(marker, `bulk-extract staging folder for ${url}: shards wait here for their upload.\n`, { flag: 'wx' });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const folder = await lstat(root);
  if (!folder.isDirectory() || folder.isSymbolicLink() || !(await markerAppears(root, marker))) {
    throw new ConfigError(
      `${settings}.staging: ${root} exists but is not a staging folder bulk-extract made (it lacks its ${STAGING_MARKER} file), so it is not used and nothing in it is touched. Move it away, or set ${settings}.staging to another folder.`,
    );
  }
}

/**
 * Whether the marker is there, or appears within MARKER_WAIT_MS in a folder still empty (one that
 * another process has just made and is about to mark); a folder with other things in it and no
 * marker is not waited for.
 */
async function markerAppears(root: string, marker: string): Promise<boolean> {
  const deadline = Date.now() + MARKER_WAIT_MS;
  for (;;) {
    if ((await lstat(marker).catch(() => undefined))?.isFile() === true) return true;
    if (Date.now() >= deadline || (await readdir(root)).length > 0) return false;
    await sleep(50);
  }
}

/** Deletes the folders of processes that are gone (`<pid>-<random>`, real folders only). */
async function removeGoneProcesses(root: string): Promise<void> {
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const pid = Number(PROCESS_FOLDER.exec(entry.name)?.[1]);
    if (!entry.isDirectory() || !Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    await rm(join(root, entry.name), { recursive: true, force: true });
  }
}
