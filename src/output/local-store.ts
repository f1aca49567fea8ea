import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { CheckpointError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { outputError, writeFileAtomic } from '../util/durable-file.js';
import { ifFound } from '../util/if-found.js';
import { assertWritable } from './folder-access.js';
import { acquireLock, inspectLock } from './folder-lock.js';
import type { LockOptions, OutputStore } from './store.js';

/**
 * An output folder. Shard files are written in place by their writers (temp file, fsync, rename),
 * so publishing them is a no-op; small files are replaced atomically (writeFileAtomic); the lock
 * is a file created exclusively, with a heartbeat (folder-lock.ts).
 *
 * A key may lead outside the folder with '..' (a checkpoint kept elsewhere, `checkpoint:` in the
 * job file): it is a path relative to the folder like any other.
 */
export function createLocalStore(dir: string, logger: Logger): OutputStore {
  const root = resolve(dir);
  const path = (key: string) => join(root, ...key.split('/'));
  const keyOf = (file: string) => relative(root, file).split(sep).join('/');
  /** Set when `prepare` made the folder: a run that then writes nothing (refused) leaves none behind. */
  let created = false;

  return {
    location: root,

    localPath: path,

    where: path,

    publishFile: () => Promise.resolve(),

    async putText(key, text) {
      await mkdirOrFail(dirname(path(key)));
      await writeFileAtomic(path(key), text);
    },

    async getText(key) {
      try {
        return await readFile(path(key), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new CheckpointError(`Cannot read ${path(key)} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
          cause: error,
        });
      }
    },

    async size(key) {
      const info = await ifFound(stat(path(key)), path(key));
      return info?.isFile() === true ? info.size : undefined;
    },

    async list(prefix) {
      const found: string[] = [];
      const walk = async (folder: string): Promise<void> => {
        const entries = (await ifFound(readdir(folder, { withFileTypes: true }), folder)) ?? [];
        for (const entry of entries) {
          const at = join(folder, entry.name);
          if (entry.isDirectory()) await walk(at);
          else found.push(keyOf(at));
        }
      };
      // The folder the prefix is in; its keys are then kept when they start with the prefix.
      const folder = prefix.slice(0, Math.max(0, prefix.lastIndexOf('/')));
      await walk(folder === '' ? root : path(folder));
      return found.filter((key) => key.startsWith(prefix)).sort();
    },

    async remove(keys) {
      for (const key of keys) await removeOrFail(path(key), false);
    },

    async removeTree(folder) {
      await removeOrFail(path(folder), true);
    },

    read(key) {
      return new Promise((resolveStream, reject) => {
        const stream = createReadStream(path(key));
        stream.once('open', () => resolveStream(stream));
        stream.once('error', (error) => reject(outputError('Reading', path(key), error)));
      });
    },

    async lock(key, what, options?: LockOptions) {
      await mkdirOrFail(dirname(path(key)));
      return acquireLock(path(key), what, logger, options);
    },

    lockState: (key) => inspectLock(path(key)),

    checkWritable: (dirs, files) => assertWritable(dirs.map(path), files.map(path)),

    async prepare() {
      try {
        created = (await mkdir(root, { recursive: true })) !== undefined;
      } catch (error) {
        throw new ConfigError(`output.dir: cannot create ${root} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
          cause: error,
        });
      }
    },

    async close() {
      if (created) await rmdir(root).catch(() => undefined);
    },
  };
}

async function mkdirOrFail(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw outputError('Creating the folder', dir, error);
  }
}

async function removeOrFail(path: string, tree: boolean): Promise<void> {
  try {
    await rm(path, { recursive: tree, force: true });
  } catch (error) {
    throw outputError('Removing', path, error);
  }
}
