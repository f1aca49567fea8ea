import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { isAlive } from './folder-lock.js';
import { acquireS3Lock, s3LockState } from './s3-lock.js';
import { createS3Objects, type S3StoreOptions as ObjectOptions } from './s3-objects.js';
import type { OutputStore } from './store.js';

export { S3OutputError } from './s3-errors.js';
export { parseS3Url } from './s3-url.js';

export interface S3StoreOptions extends ObjectOptions {
  /**
   * Local folder where shard files are written before their upload. Default: a folder under the
   * OS temp folder named after the URL, so that runs of one output on one machine share it.
   */
  staging?: string | undefined;
}

/**
 * An output in object storage (S3 or an S3-compatible server). Shard files are written into a
 * local staging folder, then uploaded (multipart) by `publishFile`, which deletes the local copy;
 * small files are single PutObjects; the lock is an object created only if absent (s3-lock.ts).
 */
export function createS3Store(options: S3StoreOptions): OutputStore {
  const objects = createS3Objects(options);
  const root = resolve(
    options.staging ?? join(tmpdir(), 'bulk-extract', createHash('sha256').update(options.url).digest('hex').slice(0, 16)),
  );
  // A folder of this process's own: workers of a sharded run on one machine share the root.
  const staging = join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
  return {
    ...objects,

    localPath: (key) => join(staging, ...key.split('/')),

    async removeTree(dir) {
      await objects.remove(await objects.list(`${dir}/`));
    },

    lock: (key, what, lockOptions) => acquireS3Lock(objects, key, what, options.logger, lockOptions),

    lockState: (key) => s3LockState(objects, key),

    async checkWritable() {
      // No permission can be read off a bucket: one small object, put and deleted, proves it.
      const key = `_probe-${randomBytes(6).toString('hex')}`;
      await objects.putText(key, 'bulk-extract: a probe that the credentials can write here; deleted at once.\n');
      await objects.remove([key]);
    },

    async prepare() {
      // Staging only ever holds shards not committed yet: what processes that are gone left there is dropped.
      try {
        await mkdir(staging, { recursive: true });
        for (const entry of await readdir(root)) {
          const pid = Number(/^(\d+)-/.exec(entry)?.[1]);
          if (!Number.isInteger(pid) || (pid !== process.pid && !isAlive(pid))) {
            await rm(join(root, entry), { recursive: true, force: true });
          }
        }
      } catch (error) {
        throw new ConfigError(`output.s3.staging: cannot use ${root} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
          cause: error,
        });
      }
    },

    async close() {
      await rm(staging, { recursive: true, force: true });
      await objects.close();
    },
  };
}
